// Reading a body in JavaScript, a step at a time. workerd hands a socket's bytes to a default
// reader a few kilobytes at a time, and every step through JavaScript costs: a TransformStream
// over a 16 MiB request body ran 4,096 steps and took three times as long as the same body sent
// upstream untouched (docs/performance.md). A BYOB reader fills a buffer with whatever has arrived,
// so a fast body comes in steps of up to a mebibyte and a slow one still as soon as it arrives.

const MIN_STEP = 64 * 1024;
const MAX_STEP = 1024 * 1024;

export interface StepReader {
  /** The next bytes, at most `max` from a byte stream (a body); `done` at the end. */
  read(max?: number): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(reason?: unknown): Promise<void>;
}

/**
 * Reads `stream` in steps sized to what arrives: from 64 KiB, doubled while each step fills its
 * buffer, halved while they come back mostly empty, at most 1 MiB. A stream that is not a byte
 * stream (one made in JavaScript) is read chunk by chunk, as it was written.
 */
export function stepReader(stream: ReadableStream<Uint8Array>): StepReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    const reader = stream.getReader();
    return { read: () => reader.read(), cancel: (reason) => reader.cancel(reason) };
  }
  let step = MIN_STEP;
  return {
    async read(max = MAX_STEP) {
      const size = Math.max(1, Math.min(step, max));
      const next = await byob.read(new Uint8Array(size));
      if (next.done || !next.value) return { done: true, value: undefined };
      const got = next.value.byteLength;
      if (got === size) step = Math.min(step * 2, MAX_STEP);
      else if (got < size / 4) step = Math.max(step / 2, MIN_STEP);
      return { done: false, value: next.value };
    },
    cancel: (reason) => byob.cancel(reason),
  };
}

/** A signal that aborts when any of `signals` does (none: undefined). */
export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const given = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  return given.length > 1 ? AbortSignal.any(given) : given[0];
}

/** A body with no bytes. */
export const emptyBody = () => new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });

/** The bytes of `chunks`, one after the other, in one array. */
export function concatBytes(...chunks: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const joined = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.byteLength;
  }
  return joined;
}

/** The refusals of a body held to its length, built when they happen (with the bytes read so far). */
export interface LengthFaults {
  /** It ended after `sent` bytes, before its length. */
  short(sent: number): unknown;
  /** It ran past its length (`sent` bytes counted, the step that crossed it included). */
  long(sent: number): unknown;
  /** What a failed read of the source becomes; the source's own error when left out. */
  failed?(error: unknown, sent: number): unknown;
  /** Each step's bytes, in order, before they are passed on; `total` counts them. A throw fails the body. */
  onBytes?(chunk: Uint8Array, total: number): void | Promise<void>;
  /**
   * Reads a step ahead of the consumer, so a body that ends short is seen, and `signal` aborted,
   * before the request that sends it asks for bytes that will not come: else S3 (s3rver) can be
   * left holding the part that came. Without it nothing is read before it is asked for.
   */
  readAhead?: boolean;
}

export interface ExactBody {
  body: ReadableStream<Uint8Array>;
  /** Aborts at a fault, before the body fails (docs/decisions.md D12.8). */
  signal: AbortSignal;
  /** Resolves once the body ended at its length; rejects with its fault, or with why it was cancelled. */
  done: Promise<void>;
  /** Why it did not arrive whole (a short, long or failed read, a throw of onBytes, `fail`); null until then. */
  fault(): unknown;
  /** The bytes passed on so far. */
  sent(): number;
  /** True once the body ended at its length. */
  complete(): boolean;
  /** Fails it from outside (its consumer failed): aborts, settles `done` and cancels the source. */
  fail(error: unknown): void;
}

/**
 * `source` passed through, held to exactly `size` bytes: it fails once it ends short or runs past
 * `size`, so an upstream never stores a wrong file or part. Read in large steps (stepReader), at
 * most what is left, then one byte more, which must not come. `signal` aborts before the body
 * fails: workerd logs a failed body of an outgoing request as an uncaught exception, an aborted
 * request not (docs/decisions.md D12.8).
 */
export function exactLength(
  source: ReadableStream<Uint8Array> | StepReader,
  size: number,
  faults: LengthFaults,
): ExactBody {
  const reader = source instanceof ReadableStream ? stepReader(source) : source;
  let sent = 0;
  let fault: unknown = null;
  let complete = false;
  let settle!: { resolve: () => void; reject: (error: unknown) => void };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined);
  const abort = new AbortController();
  /** `ended`: the source failed or ended itself, and is left alone (a cancel now is logged as uncaught). */
  const fail = (error: unknown, ended = false) => {
    if (fault !== null) return;
    fault = error;
    // No reason of our own: a JavaScript error as the reason is logged as uncaught too.
    abort.abort();
    settle.reject(error);
    if (!ended) void reader.cancel(error).catch(() => undefined);
  };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let ended = true;
        try {
          let next: ReadableStreamReadResult<Uint8Array>;
          try {
            next = await reader.read(size - sent || 1);
          } catch (error) {
            throw faults.failed ? faults.failed(error, sent) : error;
          }
          if (next.done) {
            if (sent < size) throw faults.short(sent);
            complete = true;
            settle.resolve();
            return controller.close();
          }
          ended = false;
          sent += next.value.byteLength;
          if (sent > size) throw faults.long(sent);
          await faults.onBytes?.(next.value, sent);
          controller.enqueue(next.value);
        } catch (error) {
          fail(error, ended);
          controller.error(error);
        }
      },
      cancel(reason) {
        settle.reject(reason);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: faults.readAhead ? 1 : 0 },
  );
  return { body, signal: abort.signal, done, fault: () => fault, sent: () => sent, complete: () => complete, fail };
}

/**
 * Cuts one stream into consecutive streams of given lengths, each read as it is consumed: memory
 * holds one step of the source, never a part.
 */
export class StreamCutter {
  private rest: Uint8Array | null = null;
  private readonly reader: StepReader;

  constructor(source: ReadableStream<Uint8Array> | StepReader) {
    this.reader = source instanceof ReadableStream ? stepReader(source) : source;
  }

  /** The next `length` bytes; errors when the source ends first. Cancelling it leaves the source alone. */
  next(length: number): ReadableStream<Uint8Array> {
    return exactLength(this.take(length), length, {
      short: (sent) => new Error(`the body ended ${length - sent} bytes early`),
      long: () => new Error("the body is longer than its length"),
    }).body;
  }

  /** A reader of the next `length` bytes of the source (what a step gave past them is kept for the next). */
  private take(length: number): StepReader {
    let left = length;
    return {
      read: async (max = left) => {
        if (left === 0) return { done: true, value: undefined };
        let chunk = this.rest;
        this.rest = null;
        if (!chunk) {
          const read = await this.reader.read(Math.min(max, left));
          if (read.done) return read;
          chunk = read.value;
        }
        if (chunk.byteLength > left) {
          this.rest = chunk.subarray(left);
          chunk = chunk.subarray(0, left);
        }
        left -= chunk.byteLength;
        return { done: false, value: chunk };
      },
      cancel: async () => undefined,
    };
  }

  /** Resolves once the source has ended, with nothing past the lengths taken; errors otherwise. */
  async end(): Promise<void> {
    const read = this.rest?.byteLength ? { done: false } : await this.reader.read();
    if (!read.done) throw new Error("the body is longer than its length");
  }

  cancel(reason: unknown): void {
    void this.reader.cancel(reason).catch(() => {});
  }
}

/**
 * The streams `parts` opens, one after the other, each opened only when the one before ended; read
 * in large steps (stepReader).
 */
export function concatStreams(parts: (() => Promise<ReadableStream<Uint8Array>>)[]): ReadableStream<Uint8Array> {
  let next = 0;
  let reader: StepReader | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (!reader) {
          if (next >= parts.length) return controller.close();
          reader = stepReader(await parts[next++]!());
        }
        const { done, value } = await reader.read();
        if (done) {
          reader = null;
          continue;
        }
        controller.enqueue(value);
        return;
      }
    },
    cancel: (reason) => reader?.cancel(reason),
  });
}

/**
 * `items` as text, `size` of them a step, between `head` and `tail`, encoded as it is read: a list of
 * ten thousand is never one string in memory.
 */
export function batchedText<T>(
  items: readonly T[],
  size: number,
  render: (item: T) => string,
  { head, tail }: { head: string; tail: string },
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let index = -1;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index === -1) {
        index = 0;
        return controller.enqueue(encoder.encode(head));
      }
      if (index >= items.length) {
        controller.enqueue(encoder.encode(tail));
        return controller.close();
      }
      const batch = items.slice(index, index + size);
      index += size;
      controller.enqueue(encoder.encode(batch.map(render).join("")));
    },
  });
}

/**
 * The body with its length known to the runtime, so the request carries Content-Length (S3
 * refuses chunked uploads): workerd's FixedLengthStream, which also fails a body that is shorter
 * or longer than declared.
 */
export function withLength(body: ReadableStream<Uint8Array>, size: number): ReadableStream<Uint8Array> {
  const Fixed = (globalThis as { FixedLengthStream?: new (length: number) => TransformStream<Uint8Array, Uint8Array> })
    .FixedLengthStream;
  if (!Fixed) return body;
  const fixed = new Fixed(size);
  void body.pipeTo(fixed.writable).catch(() => {});
  return fixed.readable;
}
