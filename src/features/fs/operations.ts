// File operations on the mount tree, shared by the JSON API (manage-routes.ts) and the WebDAV
// server (features/dav): each takes full paths whose checks the caller already made, works
// through the storages' backends, and fails with a FileError each protocol answers by its kind.
import { FileError, type FileBackend, type FileObject, type Upload } from "../../drivers/types.ts";
import { ApiError } from "../../http/errors.ts";
import {
  FILE_EXISTS,
  fileAtDestination,
  NOT_IMPLEMENTED,
  STORAGE_ROOT_DELETE,
  STORAGE_ROOT_MOVE,
  tooManyAcross,
  uploadEndedEarly,
  uploadTooLong,
} from "./messages.ts";
import { fileFailure, getObject, type MountTree, type Mounted } from "./mounts.ts";
import { baseName, joinName, parentOf } from "./path.ts";
import { anySignal, emptyBody, exactLength } from "../../lib/streams.ts";
import { readLink } from "./link-read.ts";

/** Most files and folders a copy or move between storages handles in one request (each costs upstream calls). */
const MAX_ACROSS_ENTRIES = 200;

/** A backend operation, or AList's `not implement` when the storage's driver has none. */
export function need<K extends keyof FileBackend>(mounted: Mounted, operation: K): NonNullable<FileBackend[K]> {
  const method = mounted.backend[operation];
  if (!method) throw new FileError("not_implemented", NOT_IMPLEMENTED);
  return (method as (...args: never[]) => unknown).bind(mounted.backend) as NonNullable<FileBackend[K]>;
}

/** The object at `path`, or null when there is none. */
export async function lookup(tree: MountTree, path: string): Promise<FileObject | null> {
  try {
    return await tree.get(path);
  } catch (error) {
    if (error instanceof FileError && error.kind === "not_found") return null;
    throw error;
  }
}

export const exists = async (tree: MountTree, path: string) => (await lookup(tree, path)) !== null;

/** Creates `path` and the folders above it that are missing, inside its storage. */
export async function makeDirs(tree: MountTree, path: string): Promise<void> {
  const mounted = await tree.mount(path);
  const makeDir = need(mounted, "makeDir");
  const missing: string[] = [];
  for (let actual = mounted.actualPath; actual !== "/"; actual = parentOf(actual)) {
    try {
      const object = await getObject({ ...mounted, actualPath: actual });
      if (!object.isDir) throw new FileError("exists", FILE_EXISTS);
      break;
    } catch (error) {
      if (!(error instanceof FileError && error.kind === "not_found")) throw fileFailure(error, "");
      missing.unshift(actual);
    }
  }
  for (const actual of missing)
    await makeDir(parentOf(actual), baseName(actual)).catch((error: unknown) => Promise.reject(fileFailure(error, "")));
}

/**
 * The source and target storages of a copy or move of `from` into `toDir` that crosses storages
 * and runs as a background task (docs/decisions.md D15.2); null when it stays in the request: within
 * one storage, or through an Alias (its targets are held to the caller's metas, which only the
 * request knows). The source must exist: a missing name is refused now, not in the task.
 */
export async function acrossStorages(
  tree: MountTree,
  kind: "move" | "copy",
  from: string,
  toDir: string,
): Promise<{ source: Mounted; target: Mounted } | null> {
  const source = await tree.mount(from);
  const target = await tree.mount(toDir);
  if (source.storage.id === target.storage.id) return null;
  if (source.storage.driver === "Alias" || target.storage.driver === "Alias") return null;
  if (kind === "move" && source.actualPath === "/") throw new FileError("forbidden", STORAGE_ROOT_MOVE);
  try {
    await getObject(source);
  } catch (error) {
    throw fileFailure(error, "");
  }
  return { source, target };
}

/**
 * Moves or copies the object at full path `from` into folder `toDir` under `toName`. Inside one
 * storage a same-name transfer is the backend's own move or copy; a rename on the way is a move
 * plus a rename in the order that overwrites nothing else; anything else (another storage, a copy
 * under a new name) streams file by file through this request, counted first and capped, and a
 * move deletes its source only once all was copied.
 */
export async function transfer(
  tree: MountTree,
  kind: "move" | "copy",
  from: string,
  toDir: string,
  toName = baseName(from),
): Promise<void> {
  const source = await tree.mount(from);
  const target = await tree.mount(toDir);
  const sameStorage = source.storage.id === target.storage.id;
  const fromName = baseName(from);
  if (kind === "move" && source.actualPath === "/") throw new FileError("forbidden", STORAGE_ROOT_MOVE);
  try {
    if (sameStorage && parentOf(from) === toDir && kind === "move") {
      if (toName !== fromName) await need(source, "rename")(source.actualPath, toName);
      return;
    }
    if (sameStorage && toName === fromName) {
      await need(source, kind)(source.actualPath, target.actualPath);
      return;
    }
    if (sameStorage && kind === "move") {
      // Move then rename, unless the source's name is taken at the destination: then rename first.
      if (!(await exists(tree, joinName(toDir, fromName)))) {
        await need(source, "move")(source.actualPath, target.actualPath);
        const moved = await tree.mount(joinName(toDir, fromName));
        await need(moved, "rename")(moved.actualPath, toName);
        return;
      }
      if (!(await exists(tree, joinName(parentOf(from), toName)))) {
        await need(source, "rename")(source.actualPath, toName);
        await need(source, "move")(joinName(parentOf(source.actualPath), toName), target.actualPath);
        return;
      }
    }
    await countEntries(source, fromName);
    await copyAcross(source, target, toName);
    if (kind === "move") await need(source, "remove")(source.actualPath);
  } catch (error) {
    throw fileFailure(error, "");
  }
}

/** Counts the files and folders at and below `source`, refusing before any work when there are too many. */
async function countEntries(source: Mounted, name: string): Promise<number> {
  let count = 0;
  const queue = [source.actualPath];
  for (let first = true; queue.length > 0; first = false) {
    const path = queue.shift()!;
    const object = first ? await getObject({ ...source, actualPath: path }) : null;
    if (first && !object!.isDir) return 1;
    for (const entry of await source.backend.list(path)) {
      if (++count > MAX_ACROSS_ENTRIES) {
        throw new FileError("refused", tooManyAcross(name, MAX_ACROSS_ENTRIES));
      }
      if (entry.isDir) queue.push(path === "/" ? `/${entry.name}` : `${path}/${entry.name}`);
    }
  }
  return count;
}

/** A file or a folder into folder `target` as `name`: each file streamed from its link into the target's put. */
async function copyAcross(source: Mounted, target: Mounted, name: string): Promise<void> {
  const object = await getObject(source);
  const into = (mounted: Mounted, child: string): Mounted => ({
    ...mounted,
    actualPath: mounted.actualPath === "/" ? `/${child}` : `${mounted.actualPath}/${child}`,
  });
  if (object.isDir) {
    const made = await ensureFolder(target, name);
    for (const entry of await source.backend.list(source.actualPath))
      await copyAcross(into(source, entry.name), made, entry.name);
    return;
  }
  need(target, "put");
  const body = await readSource(source, name, object.size);
  // A source that breaks off midway leaves no partial copy either.
  await putFile(target, { name, size: object.size, body, contentType: "application/octet-stream" });
}

/** Folder `name` in folder `target`, made unless it exists; a file of that name is refused. */
export async function ensureFolder(target: Mounted, name: string): Promise<Mounted> {
  const made = { ...target, actualPath: joinName(target.actualPath, name) };
  const existing = await getObject(made).catch((error: unknown) => {
    if (error instanceof FileError && error.kind === "not_found") return null;
    throw error;
  });
  if (!existing) await need(target, "makeDir")(target.actualPath, name);
  else if (!existing.isDir) throw new FileError("not_a_folder", fileAtDestination(name));
  return made;
}

/**
 * The bytes of the file at `source` (of `size` bytes), or those from `range.start` to `range.end`
 * inclusive, streamed from its link by the one reader of upstream bytes (link-read.ts): a broken-off
 * read is taken up again, a failure for good is the storage's.
 */
export async function readSource(
  source: Mounted,
  name: string,
  size: number,
  range?: { start: number; end: number },
  signal?: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const { start, end } = range ?? { start: 0, end: size - 1 };
  if (end < start) return emptyBody();
  const partial = start > 0 || end < size - 1;
  const linked = await source.backend.link(source.actualPath, {
    redirect: false,
    ...(partial ? { headers: new Headers({ Range: `bytes=${start}-${end}` }) } : {}),
  });
  return readLink(linked, name, size, start, end, signal);
}

/** The bytes of the file at `actualPath` of a backend, `size` long, streamed from its link. */
export async function readWhole(
  backend: FileBackend,
  actualPath: string,
  size: number,
): Promise<ReadableStream<Uint8Array>> {
  const linked = await backend.link(actualPath, { redirect: false });
  return readLink(linked, baseName(actualPath), size, 0, size - 1);
}

/**
 * Writes an upload into the folder `dir` of a storage (`/api/fs/put`, `/api/fs/form`, WebDAV PUT).
 * When the body fails, ends before its declared size or runs past it, the upstream request is
 * aborted (D12.8), a storage that keeps the bytes that arrived (`partialUploads`: WebDAV, FTP) has
 * the partial file removed, best effort, and the reply says why the upload failed, never what the
 * removal met.
 */
export async function putFile(
  dir: Mounted,
  upload: Upload,
  /** Each step's bytes as they pass, in the one pass that holds the body to its size; a throw fails it. */
  onBytes?: (chunk: Uint8Array) => void,
): Promise<void> {
  const put = need(dir, "put");
  const watched = watchBody(upload.body, upload.size, onBytes);
  try {
    const signal = anySignal(upload.signal, watched.signal);
    await put(dir.actualPath, { ...upload, body: watched.body, ...(signal ? { signal } : {}) });
  } catch (error) {
    const fault = watched.fault();
    if (fault === null) throw fileFailure(error, "");
    await removePartial(dir, upload.name);
    throw fault;
  }
  // Where the runtime does not hold a body to its length (Node), a short body may have been taken.
  const fault =
    watched.fault() ??
    (watched.complete() ? null : new FileError("refused", uploadEndedEarly(watched.sent(), upload.size)));
  if (fault !== null) {
    await removePartial(dir, upload.name);
    throw fault;
  }
}

/** Removes what a failed upload left of file `name` in the folder `dir`, where a storage keeps it. Best effort. */
export async function removePartial(dir: Mounted, name: string): Promise<void> {
  if (!dir.backend.partialUploads || !dir.backend.remove) return;
  await dir.backend.remove(joinName(dir.actualPath, name)).catch(() => undefined);
}

/**
 * The body as it is read, held to its size: `fault` is why it did not arrive whole (its own refusal,
 * such as a form's wrong ending, or that it failed, ended early or ran long), null while it did not.
 */
function watchBody(source: ReadableStream<Uint8Array>, size: number, onBytes?: (chunk: Uint8Array) => void) {
  return exactLength(source, size, {
    readAhead: true,
    ...(onBytes ? { onBytes } : {}),
    short: (sent) => new FileError("refused", uploadEndedEarly(sent, size)),
    long: () => new FileError("refused", uploadTooLong(size)),
    // A failed upload answers 500, with the body's own words when it has them (a form's wrong
    // ending); a file read from a storage fails as its reader says (the storage's failure).
    failed: (error, sent) =>
      error instanceof FileError
        ? error
        : new FileError("refused", error instanceof ApiError ? error.message : uploadEndedEarly(sent, size)),
  });
}

/** Deletes the object at full path `path` (a folder with everything in it). */
export async function removePath(tree: MountTree, path: string): Promise<void> {
  const mounted = await tree.mount(path);
  if (mounted.actualPath === "/") throw new FileError("refused", STORAGE_ROOT_DELETE);
  await need(mounted, "remove")(mounted.actualPath);
}
