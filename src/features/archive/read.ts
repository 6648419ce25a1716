// Reading a ZIP for a viewer already let in: its tree in AList's wire shapes, and one entry
// streamed with Range. Shared by the archive routes (a signed-in caller, `/ae` with its sign) and
// share links (a visitor, under the share's guards: features/shares/archive.ts), so both serve
// the same bytes the same way.
import { FileError } from "../../http/errors.ts";
import { NOT_A_FILE } from "../fs/messages.ts";
import type { MountTree } from "../fs/mounts.ts";
import { baseName, cleanPath } from "../fs/path.ts";
import { contentDisposition, contentTypeOf, rangeReply } from "../fs/serve.ts";
import type { FsState } from "../fs/state.ts";
import { FileType, objectFields, typeByName } from "../fs/wire.ts";
import { type ArchiveNode, archiveTree, nodeAt, requireNoBomb, requireSafeNames, requireZipName } from "./rules.ts";
import { openArchive } from "./source.ts";
import { openEntry, readZipDirectory, requireOpenable } from "./zip.ts";

/** An object of an archive as AList shows it: fs's object shape, no sign, no path. */
export function wireObject(node: ArchiveNode, state: FsState) {
  return objectFields(
    { name: node.name, size: node.size, isDir: node.isDir, modified: node.modified, path: "" },
    "",
    node.isDir ? FileType.FOLDER : typeByName(node.name, state.settings),
  ) as ReturnType<typeof objectFields> & { hash_info: null };
}

export type TreeItem = ReturnType<typeof wireObject> & { children: TreeItem[] | null };

export function wireTree(node: ArchiveNode, state: FsState): TreeItem {
  return {
    ...wireObject(node, state),
    children: node.isDir ? node.children.map((child) => wireTree(child, state)) : null,
  };
}

/** The ZIP at full path `path`: its central directory and its tree (implicit folders included). */
export async function readTree(tree: MountTree, path: string, signal: AbortSignal) {
  const { object, reader } = await openArchive(tree, path, signal);
  const directory = await readZipDirectory(reader);
  requireSafeNames(directory.entries);
  return { directory, root: archiveTree(directory.entries, object.modified) };
}

/** One page of a folder inside an archive (a file names itself); `perPage` below 1: everything. */
export function archivePage(root: ArchiveNode, innerPath: string, page: number, perPage: number) {
  const folder = nodeAt(root, innerPath);
  const all = folder.isDir ? folder.children : [folder];
  return {
    all,
    page: perPage < 1 ? all : all.slice((Math.max(1, page) - 1) * perPage, Math.max(1, page) * perPage),
  };
}

/**
 * The entry `inner` of the ZIP at `path`, streamed through fs's range reply: a Range is served by
 * inflating from the entry's start and dropping the bytes before the range (a stored entry is read
 * at the range itself).
 */
export async function streamEntry(
  request: Request,
  tree: MountTree,
  path: string,
  inner: string,
  password: string,
): Promise<Response> {
  requireZipName(baseName(path));
  const { object, reader } = await openArchive(tree, path, request.signal);
  const directory = await readZipDirectory(reader);
  requireSafeNames(directory.entries);
  const node = nodeAt(archiveTree(directory.entries, object.modified), cleanPath(inner));
  const entry = node.entry;
  if (node.isDir || !entry) throw new FileError("not_a_file", NOT_A_FILE);
  requireNoBomb(entry);
  requireOpenable(entry, password);

  const headers = new Headers({
    // By the name only: AList took the request's own Content-Type, which lets a link choose how a browser reads it.
    "Content-Type": contentTypeOf(node.name),
    "Content-Disposition": contentDisposition(node.name),
    "Cache-Control": "max-age=0, no-cache, no-store, must-revalidate",
    "Referrer-Policy": "no-referrer",
    "Accept-Ranges": "bytes",
  });
  // The entry as bytes read here, served as fs serves a storage's byte source (without validators:
  // an entry has no ETag, so an If-Range never holds the Range back).
  return rangeReply(
    request,
    { size: entry.size, read: (start, end) => openEntry(reader, entry, password, start, Math.max(0, end - start + 1)) },
    headers,
  );
}
