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
