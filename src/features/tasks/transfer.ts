// The units of a copy or move between storages: a folder's listing (which adds its subfolders, its
// big files one unit each, and its small files in groups), a group of small files copied side by
// side, a file streamed whole or in parts, and a move's final removal of its source.
import { FileError } from "../../drivers/types.ts";
import { type Env, readConfig } from "../../env.ts";
import { getObject, type Mounted } from "../fs/mounts.ts";
import { emptyBody } from "../../lib/streams.ts";
import { ensureFolder, need, putFile, readSource } from "../fs/operations.ts";
import { joinName } from "../fs/path.ts";
import { type TaskIndexing, taskRemoved, taskWrote } from "../search/changes.ts";
import type { CopyPayload, FilesPayload, RemovePayload } from "./payload.ts";
import { setTotalBytes } from "./store.ts";
import { type Ending, type NewUnit, partSize, type UnitWork } from "./work.ts";

/**
 * Small files go in groups (docs/decisions.md D23.1): a file up to this size (and no bigger than a
 * part) joins its folder's group rather than being a unit of its own.
 */
const SMALL_FILE_BYTES = 8 * 1024 * 1024;
/**
 * A group holds at most `TASK_GROUP_FILES` files (50 by default) and this many bytes: one claim, one
 * settle, heartbeats in between. Each file costs two subrequests (a read, a write): four groups of 50
 * in an invocation (wrangler.toml's batch) stay well under the Paid plan's 1,000 (D23.1).
 */
const BYTES_PER_UNIT = 64 * 1024 * 1024;
/** Files of a group copied at a time (rclone's default `--transfers`). */
const TRANSFERS = 4;
/**
 * A unit starts the parts of a big file while it has run less than this, then
 * hands the rest to a new message (D23.2): well within the consumer's 15 minutes of wall clock.
 */
const PARTS_BUDGET_MS = 5 * 60_000;
/**
 * Parts of one big file sent at a time (rclone's S3 upload concurrency, docs/decisions.md D23.6):
 * one part at a time left a 200 MiB copy at two thirds of rclone's rate.
 */
const PARTS_IN_FLIGHT = 4;
/**
 * How far past the first part still in flight a part may start (D23.9): a part that stalls holds
 * the others to the 7 parts after it, which is all a restart then sends again.
 */
const PARTS_AHEAD = 8;

export async function copyUnit(work: UnitWork, env: Env, copy: CopyPayload): Promise<Ending> {
  const tree = await work.tree([copy.from, copy.toDir]);
  const source = await tree.mount(copy.from);
  const target = await tree.mount(copy.toDir);
  const known = copy.isDir !== undefined && (copy.isDir || copy.size !== undefined);
  const object = known ? { isDir: copy.isDir === true, size: copy.size ?? 0 } : await getObject(source);
  const written = joinName(copy.toDir, copy.name);
  if (object.isDir) {
    await ensureFolder(target, copy.name);
    const entries = await source.backend.list(source.actualPath);
    return {
      settle: { state: "done", bytes: 0 },
      children: childrenOf(env, copy, written, entries),
      childBytes: entries.reduce((sum, entry) => sum + (entry.isDir ? 0 : entry.size), 0),
      index: taskWrote(work.db, copy.index, target.storage, written, true, 0),
    };
  }
  // A copy of one file learns its size here (a walk counted its children's).
  if (!known) await setTotalBytes(work.db, work.unit.taskId, object.size);
  // Each part is a Range read of the source, taken up again where it breaks off (readSource).
  const ending = await writeFile(work, partSize(env), target, copy.name, object.size, (range) =>
    readSource(source, copy.name, object.size, range, work.signal),
  );
  return indexed(work, copy.index, target, written, object.size, ending);
}

/** A folder's entries as units: a unit per subfolder and per big file, the small files in groups. */
export function childrenOf(
  env: Env,
  copy: CopyPayload,
  written: string,
  entries: { name: string; isDir: boolean; size: number }[],
): NewUnit[] {
  const index = copy.index ? { index: copy.index } : {};
  const small = Math.min(SMALL_FILE_BYTES, partSize(env));
  const filesPerUnit = readConfig(env).tasks.groupFiles;
  const units: NewUnit[] = [];
  let group: { name: string; size: number }[] = [];
  let groupBytes = 0;
  const close = () => {
    if (group.length > 0)
      units.push({ kind: "files", payload: { fromDir: copy.from, toDir: written, files: group, ...index } });
    group = [];
    groupBytes = 0;
  };
  for (const entry of entries) {
    if (entry.isDir || entry.size > small) {
      units.push({
        kind: "copy",
        payload: {
          from: joinName(copy.from, entry.name),
          toDir: written,
          name: entry.name,
          isDir: entry.isDir,
          ...(entry.isDir ? {} : { size: entry.size }),
          ...index,
        },
      });
      continue;
    }
    if (group.length >= filesPerUnit || groupBytes + entry.size > BYTES_PER_UNIT) close();
    group.push({ name: entry.name, size: entry.size });
    groupBytes += entry.size;
  }
  close();
  return units;
}

/**
 * A group of small files of one folder, `TRANSFERS` at a time, each streamed whole (D23.1). A
 * heartbeat on a timer stores the names done so far, so a rerun after a crash or a failure skips
 * them and writes the others again (a whole write replaces what a broken one left): no file is lost,
 * none lands twice. The index's changes for all of them ride in the one settle.
 */
export async function filesUnit(work: UnitWork, files: FilesPayload): Promise<Ending> {
  const tree = await work.tree([files.fromDir, files.toDir]);
  const source = await tree.mount(files.fromDir);
  const target = await tree.mount(files.toDir);
  need(target, "put");
  const done = new Set(files.done ?? []);
  const todo = files.files.filter((file) => !done.has(file.name));
  const ticker = work.ticking();
  try {
    await eachAtMost(TRANSFERS, todo, work.signal, async (file) => {
      const from = { ...source, actualPath: joinName(source.actualPath, file.name) };
      const body = file.size === 0 ? emptyBody() : await readSource(from, file.name, file.size, undefined, work.signal);
      work.writing.add(file.name);
      await putFile(target, {
        name: file.name,
        size: file.size,
        body,
        contentType: "application/octet-stream",
        signal: work.signal,
      });
      work.writing.delete(file.name);
      done.add(file.name);
      work.current = { kind: "files", payload: { ...files, done: [...done] } };
      work.committed += file.size;
    });
  } finally {
    await ticker.stop();
  }
  const bytes = files.files.reduce((sum, file) => sum + file.size, 0);
  const index = files.files.flatMap((file) =>
    taskWrote(work.db, files.index, target.storage, joinName(files.toDir, file.name), false, file.size),
  );
  return { settle: { state: "done", bytes }, index };
}

/**
 * Runs `task` over `items`, at most `limit` at a time; the first failure stops new ones and is
 * thrown. Once `enough()` says so no new one starts, and those left are not run. No item starts
 * `ahead` or more places past the first one still running: a lane waits for that one to end.
 */
async function eachAtMost<T>(
  limit: number,
  items: T[],
  signal: AbortSignal,
  task: (item: T) => Promise<void>,
  enough: () => boolean = () => false,
  ahead = Number.POSITIVE_INFINITY,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const running = new Set<number>();
  /** Wakes the lanes waiting for the first item still running to end. */
  let wake = () => {};
  const lane = async () => {
    while (next < items.length && !failure && !signal.aborted && !enough()) {
      if (running.size > 0 && next - Math.min(...running) >= ahead) {
        await new Promise<void>((resolve) => {
          const before = wake;
          wake = () => {
            before();
            resolve();
          };
        });
        continue;
      }
      const index = next++;
      running.add(index);
      try {
        await task(items[index]!);
      } catch (error) {
        failure ??= { error };
      } finally {
        running.delete(index);
        const waiting = wake;
        wake = () => {};
        waiting();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure) throw failure.error;
  if (signal.aborted) throw new FileError("refused", "stopped");
}

/** A unit's ending once it wrote the file `path` of `size` bytes: with the index's change when its task keeps one. */
export function indexed(
  work: UnitWork,
  indexing: TaskIndexing | null | undefined,
  target: Mounted,
  path: string,
  size: number,
  ending: Ending,
): Ending {
  if ("again" in ending) return ending;
  return { ...ending, index: taskWrote(work.db, indexing, target.storage, path, false, size) };
}

/**
 * A file of `size` bytes into `target` as `name`, read by `read`: in parts when the storage takes
 * parts and the file is bigger than a part, else streamed whole. Up to `PARTS_IN_FLIGHT` parts go
 * at a time, none `PARTS_AHEAD` or more past the first still in flight; the tags stored with the
 * heartbeats are those of the parts done from the first on, with no gap, so a rerun goes on from
 * the part after them (D23.2, D23.6, D23.9); past its budget the run hands the rest to a new message.
 */
export async function writeFile(
  work: UnitWork,
  /** The part size, or null when the source cannot be read in ranges. */
  partBytes: number | null,
  target: Mounted,
  name: string,
  size: number,
  read: (range?: { start: number; end: number }) => Promise<ReadableStream<Uint8Array>>,
): Promise<Ending> {
  const parts = partBytes === null ? undefined : target.backend.parts;
  if (!parts || partBytes === null || size <= Math.max(parts.minPartBytes, partBytes)) {
    need(target, "put");
    // Counted in putFile's own pass over the body, which holds it to its size (D23.7).
    const body = size === 0 ? emptyBody() : await read();
    work.writing.add(name);
    await putFile(target, { name, size, body, contentType: "application/octet-stream" }, work.count);
    await work.beaten();
    work.writing.delete(name);
    return { settle: { state: "done", bytes: size } };
  }
  let parted = work.parted;
  if (!parted) {
    parted = {
      upload: await parts.begin(target.actualPath, name, "application/octet-stream"),
      tags: [],
      partBytes: Math.max(parts.minPartBytes, partBytes),
    };
    work.parted = parted;
    // Stored at once: with parts side by side, a rerun before the first tag goes on with this upload
    // rather than leave it open upstream (D23.6).
    await work.beat(work.flowed, true);
  }
  const { upload, partBytes: bytesPerPart } = parted;
  const count = Math.ceil(size / bytesPerPart);
  const stored = parted.tags;
  const tags = new Map<number, string>();
  const ends = (index: number) => Math.min(size, (index + 1) * bytesPerPart);
  // Tags are stored while they join the ones before without a gap, never the last part's: the
  // holder completes the upload once they all came (D15.4).
  let storing = Promise.resolve();
  const store = () => {
    storing = storing.then(async () => {
      let prefix = (work.parted ?? parted).tags;
      const before = prefix.length;
      while (prefix.length < count - 1 && tags.has(prefix.length)) prefix = [...prefix, tags.get(prefix.length)!];
      if (prefix.length === before) return;
      work.parted = { upload, partBytes: bytesPerPart, tags: prefix };
      await work.beat(work.flowed, true);
      work.committed = ends(prefix.length - 1);
    });
    return storing;
  };
  const started = Date.now();
  await eachAtMost(
    Math.min(PARTS_IN_FLIGHT, count - stored.length),
    Array.from({ length: count - stored.length }, (_, i) => stored.length + i),
    work.signal,
    async (index) => {
      const start = index * bytesPerPart;
      const length = ends(index) - start;
      const body = work.counted(await read({ start, end: start + length - 1 }), length);
      tags.set(index, await parts.putPart(upload, index, length, body));
      await work.beaten();
      await store();
    },
    () => Date.now() - started >= PARTS_BUDGET_MS,
    PARTS_AHEAD,
  );
  await storing;
  if (tags.size < count - stored.length) {
    const kept = (work.parted ?? parted).tags.length;
    return { again: { payload: work.payload, bytes: kept === 0 ? 0 : ends(kept - 1) } };
  }
  // Only the unit's holder completes: a worker that stalled in the last part past its lease
  // would complete the upload under the restarted run, whose own last part then finds it gone (D15.4).
  await work.beat(size);
  await parts.complete(
    upload,
    Array.from({ length: count }, (_, index) => tags.get(index) ?? stored[index]!),
  );
  return { settle: { state: "done", bytes: size } };
}

export async function removeUnit(work: UnitWork, remove: RemovePayload): Promise<Ending> {
  const tree = await work.tree([remove.path]);
  const mounted = await tree.mount(remove.path);
  try {
    await need(mounted, "remove")(mounted.actualPath);
  } catch (error) {
    // Gone already (a rerun after a crash): what the removal wanted.
    if (!(error instanceof FileError && error.kind === "not_found")) throw error;
  }
  return { settle: { state: "done", bytes: 0 }, index: taskRemoved(work.db, remove.index, remove.path) };
}
