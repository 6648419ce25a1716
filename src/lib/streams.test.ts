// The byte-stream toolkit over plain in-memory streams: a body held to its length (short, long,
// exact, what its hook sees), the cutter, concatenation, the empty body and a list streamed in steps.
// The callers' own refusals are the faults given here: what a user sees of them is asserted by
// the uploads, fs and driver suites.
import { describe, expect, it } from "vitest";
import { batchedText, concatBytes, concatStreams, emptyBody, exactLength, StreamCutter } from "./streams.ts";

const bytes = (...values: number[]) => Uint8Array.from(values);

/** A stream of `chunks`, as written (not a byte stream: read chunk by chunk). */
function streamOf(...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

const read = async (stream: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(stream).arrayBuffer());

class Short extends Error {}
class Long extends Error {}
const faults = {
  short: (sent: number) => new Short(`ended after ${sent}`),
  long: (sent: number) => new Long(`ran to ${sent}`),
};

describe("exactLength", () => {
  it("passes a body of exactly its length through, and settles done", async () => {
    const exact = exactLength(streamOf(bytes(1, 2), bytes(3)), 3, faults);
    expect(await read(exact.body)).toEqual(bytes(1, 2, 3));
    await expect(exact.done).resolves.toBeUndefined();
    expect([exact.fault(), exact.sent(), exact.complete(), exact.signal.aborted]).toEqual([null, 3, true, false]);
  });

  it("fails a short body with the short fault, after the bytes it had, and aborts its signal", async () => {
    const exact = exactLength(streamOf(bytes(1, 2)), 5, faults);
    const reader = exact.body.getReader();
    expect((await reader.read()).value).toEqual(bytes(1, 2));
    await expect(reader.read()).rejects.toThrow(new Short("ended after 2"));
    await expect(exact.done).rejects.toBeInstanceOf(Short);
    expect(exact.fault()).toBeInstanceOf(Short);
    expect([exact.complete(), exact.signal.aborted]).toEqual([false, true]);
  });

  it("fails a long body with the long fault before passing on the step that crossed its length", async () => {
    const exact = exactLength(streamOf(bytes(1, 2), bytes(3, 4)), 3, faults);
    const reader = exact.body.getReader();
    expect((await reader.read()).value).toEqual(bytes(1, 2));
    await expect(reader.read()).rejects.toThrow(new Long("ran to 4"));
    expect([exact.sent(), exact.signal.aborted]).toEqual([4, true]);
  });

  it("fails a body that runs on past its length, even in a step of its own", async () => {
    const exact = exactLength(streamOf(bytes(1, 2, 3), bytes(4)), 3, faults);
    await expect(read(exact.body)).rejects.toThrow(new Long("ran to 4"));
    await expect(exact.done).rejects.toBeInstanceOf(Long);
  });

  it("turns a failed read into what `failed` says, with the bytes read so far", async () => {
    let step = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (step++ === 0) controller.enqueue(bytes(9));
        else controller.error(new Error("reset"));
      },
    });
    const exact = exactLength(failing, 4, {
      ...faults,
      failed: (error, sent) => new Short(`${String(error)} at ${sent}`),
    });
    await expect(read(exact.body)).rejects.toThrow(new Short("Error: reset at 1"));
    expect(exact.fault()).toBeInstanceOf(Short);
  });

  it("shows onBytes every step in order, before it is passed on, with the running total", async () => {
    const seen: string[] = [];
    const exact = exactLength(streamOf(bytes(1), bytes(2, 3), bytes(4)), 4, {
      ...faults,
      onBytes: async (chunk, total) => void seen.push(`hook ${chunk.join(",")} ${total}`),
    });
    const reader = exact.body.getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      seen.push(`read ${next.value.join(",")}`);
    }
    expect(seen).toEqual(["hook 1 1", "read 1", "hook 2,3 3", "read 2,3", "hook 4 4", "read 4"]);
  });

  it("fails the body with what onBytes throws, and cancels the source", async () => {
    let cancelled: unknown;
    const source = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(bytes(1)),
      cancel(reason) {
        cancelled = reason;
      },
    });
    const stop = new Error("stopped");
    const exact = exactLength(source, 10, {
      ...faults,
      onBytes: () => {
        throw stop;
      },
    });
    await expect(read(exact.body)).rejects.toBe(stop);
    expect([exact.fault(), cancelled, exact.signal.aborted]).toEqual([stop, stop, true]);
  });

  it("cancelled by its consumer, cancels the source and rejects done, with no fault", async () => {
    let cancelled: unknown;
    const source = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(bytes(1)),
      cancel(reason) {
        cancelled = reason;
      },
    });
    const exact = exactLength(source, 10, faults);
    await exact.body.cancel("gone");
    await expect(exact.done).rejects.toBe("gone");
    expect([cancelled, exact.fault(), exact.signal.aborted]).toEqual(["gone", null, false]);
  });

  it("holds an empty body to length 0, and fails a body that should have been empty", async () => {
    expect(await read(exactLength(emptyBody(), 0, faults).body)).toEqual(bytes());
    await expect(read(exactLength(streamOf(bytes(1)), 0, faults).body)).rejects.toThrow(new Long("ran to 1"));
  });
});

describe("StreamCutter", () => {
  it("cuts one stream into parts of the lengths asked, across its steps, and ends with it", async () => {
    const cutter = new StreamCutter(streamOf(bytes(1, 2, 3), bytes(4, 5), bytes(6)));
    expect(await read(cutter.next(2))).toEqual(bytes(1, 2));
    expect(await read(cutter.next(3))).toEqual(bytes(3, 4, 5));
    expect(await read(cutter.next(1))).toEqual(bytes(6));
    await expect(cutter.end()).resolves.toBeUndefined();
  });

  it("fails a part the source cannot fill, saying how many bytes were missing", async () => {
    const cutter = new StreamCutter(streamOf(bytes(1, 2, 3)));
    await expect(read(cutter.next(5))).rejects.toThrow("the body ended 2 bytes early");
  });

  it("refuses to end while the source has bytes past the parts taken", async () => {
    const cutter = new StreamCutter(streamOf(bytes(1, 2, 3)));
    expect(await read(cutter.next(2))).toEqual(bytes(1, 2));
    await expect(cutter.end()).rejects.toThrow("the body is longer than its length");
  });
});

describe("concatenation and the empty body", () => {
  it("concatStreams opens each part only when the one before ended", async () => {
    const opened: number[] = [];
    const part = (index: number, chunk: Uint8Array) => async () => {
      opened.push(index);
      return streamOf(chunk);
    };
    const joined = concatStreams([part(0, bytes(1, 2)), part(1, bytes()), part(2, bytes(3))]);
    const reader = joined.getReader();
    expect((await reader.read()).value).toEqual(bytes(1, 2));
    expect(opened).toEqual([0]);
    const rest: number[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest.push(...next.value);
    expect([rest, opened]).toEqual([[3], [0, 1, 2]]);
  });

  it("concatStreams of no parts, concatBytes and emptyBody are empty when given nothing", async () => {
    expect(await read(concatStreams([]))).toEqual(bytes());
    expect(await read(emptyBody())).toEqual(bytes());
    expect(concatBytes()).toEqual(bytes());
    expect(concatBytes(bytes(1), bytes(), bytes(2, 3))).toEqual(bytes(1, 2, 3));
  });
});

describe("batchedText", () => {
  it("streams the head, the items a batch per step, then the tail", async () => {
    const stream = batchedText([1, 2, 3, 4, 5], 2, (n) => `<${n}>`, { head: "[", tail: "]" });
    const steps: string[] = [];
    const reader = stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read())
      steps.push(new TextDecoder().decode(next.value));
    expect(steps).toEqual(["[", "<1><2>", "<3><4>", "<5>", "]"]);
  });
});
