// The one reader of a file's bytes from its storage's link, for everything that reads upstream
// bytes itself rather than handing them to a client: copies and moves across storages, tasks' parts,
// staged upload parts, archives (docs/decisions.md D13.8, D15.3). A read that breaks off after giving
// bytes is taken up again from there; a failure for good is a FileError of kind upstream that says
// what the storage did, never a runtime's own error (which would answer "internal error").
import { FileError, type Link } from "../../drivers/types.ts";
import { emptyBody, type StepReader, stepReader } from "../../lib/streams.ts";
import { readBrokenOff, readFailed, readUnreachable } from "./messages.ts";

/** How many times a read that broke off after some bytes is taken up again from there. */
const READ_RESUMES = 8;
/**
 * Bytes read ahead of the consumer: the upstream's reply keeps coming while the consumer's own
 * write is busy, instead of each step waiting for the other.
 */
const READ_AHEAD: QueuingStrategy<Uint8Array> = { highWaterMark: 4 * 1024 * 1024, size: (chunk) => chunk.byteLength };

/**
 * The bytes `start..end` (inclusive) of the file `name`, `size` bytes long, behind `link`: exactly
 * those, streamed. A URL is fetched with the link's headers and a Range (none for the whole file);
 * a byte source is read at the offset. A reply longer than asked is cut; one that ignores the Range
 * (200) is read through to `start`; one that breaks off (ends short or errors) after giving some
 * bytes is asked again from where it stopped, up to READ_RESUMES times. webdav-server 2.x ends a
 * ranged reply when its file stream ends, not when the reply is written out (its Get.js:
 * `rstream.on('end', callback)` beside `rstream.pipe(RangedStream).pipe(response)`), so a reply
 * read slower than the file loses its last buffered bytes and the connection drops.
 */
export async function readLink(
  link: Link,
  name: string,
  size: number,
  start: number,
  end: number,
  signal?: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const whole = start === 0 && end === size - 1;
  // A whole empty file is still asked for, so one that is missing fails rather than reads as empty.
  if (end < start && !whole) return emptyBody();
  if ("source" in link) return end < start ? emptyBody() : link.source.read(start, end, signal);
  /** A reply from `from` on, and how many of its first bytes come before `from` (a 200 to a Range). */
  const open = async (from: number): Promise<{ body: ReadableStream<Uint8Array>; skip: number }> => {
    const ranged = !(whole && from === 0);
    let response: Response;
    try {
      response = await fetch(link.url, {
        headers: { ...link.headers, ...(ranged ? { Range: `bytes=${from}-${end}` } : {}) },
        // A link that carries credentials is not followed elsewhere (as /p).
        redirect: link.headers ? "manual" : "follow",
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (error instanceof Error && error.name === "AbortError") throw error;
      throw new FileError("upstream", readUnreachable(name));
    }
    if ((response.status === 200 || response.status === 206) && response.body)
      return { body: response.body, skip: response.status === 200 ? from : 0 };
    await response.body?.cancel();
    throw new FileError("upstream", readFailed(name, response.status));
  };
  // The first reply is awaited here, so a storage that refuses fails the call, not the stream.
  const first = await open(start);
  if (end < start) {
    await first.body.cancel();
    return emptyBody();
  }
  let next = start;
  let resumes = 0;
  let reply: { reader: StepReader; skip: number; gave: boolean } | undefined = {
    reader: stepReader(first.body),
    skip: first.skip,
    gave: false,
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        while (next <= end) {
          if (!reply) {
            const opened = await open(next);
            reply = { reader: stepReader(opened.body), skip: opened.skip, gave: false };
          }
          const wanted = reply.skip > 0 ? reply.skip : end - next + 1;
          const chunk = await reply.reader.read(wanted).catch((error: unknown) => {
            if (signal?.aborted) throw error;
            return null;
          });
          if (chunk === null || chunk.done) {
            // Broke off: taken up again only when this reply gave bytes (a dead server fails at once).
            const gave = reply.gave;
            reply = undefined;
            if (!gave || ++resumes > READ_RESUMES) throw new FileError("upstream", readBrokenOff(name, next, end));
            continue;
          }
          let bytes = chunk.value;
          if (bytes.byteLength > 0) reply.gave = true;
          if (reply.skip > 0) {
            const skipped = Math.min(reply.skip, bytes.byteLength);
            reply.skip -= skipped;
            bytes = bytes.subarray(skipped);
          }
          bytes = bytes.subarray(0, end - next + 1);
          next += bytes.byteLength;
          if (bytes.byteLength > 0) return controller.enqueue(bytes);
        }
        await reply?.reader.cancel().catch(() => undefined);
        controller.close();
      },
      cancel: (reason) => reply?.reader.cancel(reason),
    },
    READ_AHEAD,
  );
}
