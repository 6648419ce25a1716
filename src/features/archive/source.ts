// An archive's bytes as range reads from any storage, through the link the storage gives `/p`: a
// URL fetched with a Range header (S3 presigned, WebDAV with its credentials), or a byte source
// read at an offset (FTP's REST). Nothing is downloaded whole.
import type { FileObject, Link } from "../../drivers/types.ts";
import { FileError } from "../../http/errors.ts";
import type { MountTree } from "../fs/mounts.ts";
import { NOT_A_FILE } from "../fs/messages.ts";
import { RANGE_READ_UNREACHABLE, rangeReadFailed, rangeReadShort } from "./messages.ts";
import type { ByteReader } from "./zip.ts";

/** The archive at full path `path`, its object and a reader of its bytes; the tree's guards apply. */
export async function openArchive(
  tree: MountTree,
  path: string,
  signal?: AbortSignal,
): Promise<{ object: FileObject; reader: ByteReader }> {
  const object = await tree.get(path);
  if (object.isDir) throw new FileError("not_a_file", NOT_A_FILE);
  const link = await tree.link(path, { redirect: false });
  return { object, reader: readerOf(link, object.size, signal) };
}

export function readerOf(link: Link, size: number, signal?: AbortSignal): ByteReader {
  const stream = async (start: number, length: number): Promise<ReadableStream<Uint8Array>> => {
    if (length <= 0) return new ReadableStream({ start: (controller) => controller.close() });
    const end = start + length - 1;
    if ("source" in link) return link.source.read(start, end, signal);
    return rangeOf(link, start, end, signal);
  };
  return {
    size,
    stream,
    read: async (start, length) => new Uint8Array(await new Response(await stream(start, length)).arrayBuffer()),
  };
}

/** Bytes `[start, end]` of a URL; a server that ignores Range (200) is read through to `start`. */
async function rangeOf(
  link: { url: string; headers?: Record<string, string> },
  start: number,
  end: number,
  signal?: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  let response: Response;
  try {
    response = await fetch(link.url, {
      headers: { ...link.headers, Range: `bytes=${start}-${end}` },
      // A link that carries credentials is not followed elsewhere (as /p).
      redirect: link.headers ? "manual" : "follow",
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (error instanceof Error && error.name === "AbortError") throw error;
    throw new FileError("upstream", RANGE_READ_UNREACHABLE);
  }
  if (response.status === 206 && response.body) return skipAndTake(response.body, 0, end - start + 1);
  if (response.status === 200 && response.body) return skipAndTake(response.body, start, end - start + 1);
  await response.body?.cancel();
  throw new FileError("upstream", rangeReadFailed(response.status));
}

/** A body from which the bytes `[skip, skip + length)` are kept; the rest is not read. */
function skipAndTake(body: ReadableStream<Uint8Array>, skip: number, length: number): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const from = seen;
        seen += chunk.length;
        if (seen > skip)
          controller.enqueue(chunk.subarray(Math.max(0, skip - from), Math.min(chunk.length, skip + length - from)));
        if (seen >= skip + length) controller.terminate();
      },
      flush() {
        if (seen < skip + length) throw new FileError("upstream", rangeReadShort(seen - skip, length));
      },
    }),
  );
}
