// An archive's bytes as range reads from any storage, through the link the storage gives `/p`, read
// by the file side's one reader of upstream bytes (fs/link-read.ts): a URL fetched with a Range (S3
// presigned, WebDAV with its credentials), or a byte source read at an offset (FTP's REST). A read
// that breaks off is taken up again; one that fails for good is the storage's failure. Nothing is
// downloaded whole.
import type { FileObject, Link } from "../../drivers/types.ts";
import { FileError } from "../../http/errors.ts";
import { readLink } from "../fs/link-read.ts";
import type { MountTree } from "../fs/mounts.ts";
import { NOT_A_FILE } from "../fs/messages.ts";
import { baseName } from "../fs/path.ts";
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
  return { object, reader: readerOf(link, baseName(path), object.size, signal) };
}

/** Range reads of the archive `name` (named so in a failure), `size` bytes long, behind `link`. */
export function readerOf(link: Link, name: string, size: number, signal?: AbortSignal): ByteReader {
  const stream = (start: number, length: number) => readLink(link, name, size, start, start + length - 1, signal);
  return {
    size,
    stream,
    read: async (start, length) => new Uint8Array(await new Response(await stream(start, length)).arrayBuffer()),
  };
}
