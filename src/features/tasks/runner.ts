// The queue consumer: runs one unit per message (docs/decisions.md D15). A unit is a folder
// listing (which queues a unit per entry), a file streamed from one storage into another, the next
// part of a big file, a URL streamed into a storage, or a move's final removal of its source. Each
// claims its row first (a stale or duplicate message does nothing), writes its progress while its
// bytes flow (and stops there when its task was canceled or deleted), and ends by settling its row,
// which ends the task when nothing of it is left open.
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../db/client.ts";
import { FileError, type PartedUpload } from "../../drivers/types.ts";
import type { Env } from "../../env.ts";
import { emptyBody, exactLength } from "../../lib/streams.ts";
import { fileFailure, getObject, MountTree, type Mounted } from "../fs/mounts.ts";
import { ensureFolder, makeDirs, need, putFile, readSource, removePartial } from "../fs/operations.ts";
import { uploadEndedEarly, uploadTooLong } from "../fs/messages.ts";
import { joinName, parentOf } from "../fs/path.ts";
import { extendTree } from "../fs/store.ts";
import { type TaskIndexing, taskRemoved, taskWrote } from "../search/changes.ts";
import {
  CANCELED,
  fetchFailed,
  privateAddress,
  RANGE_IGNORED,
  REDIRECT_NOT_HTTP,
  SIZE_UNKNOWN,
  tooManyRedirects,
} from "./messages.ts";
import { sendUnits } from "./queue.ts";
import { creatorRefusal, downloadTargetAllowed, privateHostsOptIn } from "./rules.ts";
import {
  type Beat,
  childUnits,
  claimUnit,
  heartbeat,
  MAX_ATTEMPTS,
  type Outcome,
  requeueUnit,
  setTotalBytes,
  settleUnit,
  type UnitRow,
  type UnitTicket,
} from "./store.ts";

/** How often a running unit writes its bytes and renews its lease (and learns of a cancel). */
const HEARTBEAT_MS = 2_000;
/** How long a cancel's clean-up upstream may take (its requests cannot ride the unit's aborted signal). */
const CLEAN_UP_MS = 30_000;
/** Default part size of a big file: a part is one message, one Range read and one upload call. */
const DEFAULT_PART_BYTES = 64 * 1024 * 1024;

/** A copy: `from` (full path) into the folder `toDir` as `name`; what a walk learnt of it rides along. */
interface CopyPayload {
  from: string;
  toDir: string;
  name: string;
  isDir?: boolean;
  size?: number;
  parted?: PartedState;
  /** Auto update of the search index, as the request that started the task would have done it. */
  index?: TaskIndexing | null;
}
/** An offline download: `url` into the folder `toDir`. */
interface FetchPayload {
  url: string;
  toDir: string;
  name?: string;
  size?: number;
  parted?: PartedState;
  index?: TaskIndexing | null;
}
/** A big file's upload in parts: the upstream's upload and the tags of the parts stored so far. */
interface PartedState {
  upload: PartedUpload;
  tags: string[];
  partBytes: number;
}

/** The unit's task was canceled or deleted, or the unit was taken from this worker. */
class Stopped extends Error {
  override name = "Stopped";
}
/** A failure no retry can mend (a URL without a size): the unit fails at once. */
export class Unrecoverable extends Error {}

/**
 * What a unit asks of its row when it ends: settle it (with the statements of its children and of
 * the search index's changes), or send it again.
 */
type Ending =
  | {
      settle: Outcome;
      children?: { kind: string; payload: Record<string, unknown> }[];
      childBytes?: number;
      index?: BatchItem<"sqlite">[];
    }
  | { again: { payload: Record<string, unknown>; bytes: number } };

/**
 * Runs a batch's messages side by side (a few: the batch size of wrangler.toml; the runtime holds
 * connections past its limit of six until one frees). Each is acknowledged once its unit's row
 * says where it stands; a unit that throws past that is left to the queue's retry and the sweep.
 */
export async function consumeBatch(db: Database, env: Env, batch: MessageBatch<UnitTicket>): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      await runMessage(db, env, message.body);
      message.ack();
    }),
  );
}

export async function runMessage(db: Database, env: Env, message: UnitTicket): Promise<void> {
  const claimed = await claimUnit(db, message);
  if (!claimed?.task) return;
  const { unit } = claimed;
  const work = new UnitWork(db, unit);
  if (claimed.task.cancelRequested) return finish(db, env, work, { settle: cancelOutcome() });
  // The unit runs for its creator as it stands now: narrowed, disabled or deleted, it fails (D15.10).
  const refusal = creatorRefusal(claimed.task, claimed.creator);
  if (refusal) return finish(db, env, work, { settle: { state: "failed", error: refusal } });
  let ending: Ending;
  try {
    ending = await runUnit(work, env);
  } catch (error) {
    // Taken from this worker (its lease ran out): its row and upload are the restarted run's now.
    if (work.stopped === "lost") return;
    if (work.stopped === "stop") return finish(db, env, work, { settle: cancelOutcome() });
    const text = messageOf(error);
    if (error instanceof Unrecoverable || unit.attempts >= MAX_ATTEMPTS)
      return finish(db, env, work, { settle: { state: "failed", error: text } });
    const next = await requeueUnit(db, unit, { payload: work.payload, bytes: work.committed, error: text });
    if (next) await sendUnits(env, [next], unit.attempts);
    return;
  } finally {
    work.close();
  }
  await finish(db, env, work, ending);
}

const cancelOutcome = (): Outcome => ({ state: "canceled", error: CANCELED });

async function finish(db: Database, env: Env, work: UnitWork, ending: Ending): Promise<void> {
  if ("again" in ending) {
    const next = await requeueUnit(db, work.unit, { ...ending.again, resetAttempts: true });
    if (next) await sendUnits(env, [next]);
    return;
  }
  // A canceled unit cleans up what it wrote (D15.5); one that failed for good only gives up its
  // upload in parts (D15.9): a whole file that failed may not have touched what was there before.
  if (ending.settle.state !== "done") await work.cleanUp(ending.settle.state === "failed");
  const children = ending.children ?? [];
  const { before, follow } = await settleUnit(
    db,
    work.unit,
    ending.settle,
    children.length > 0 ? childUnits(db, work.unit.taskId, children, ending.childBytes ?? 0) : [],
    ending.index,
  );
  const inserted = before.slice(0, -1).flat() as UnitTicket[];
  await sendUnits(env, [...inserted, ...follow]);
}

const messageOf = (error: unknown): string => {
  const failure = fileFailure(error, "");
  return failure instanceof Error ? failure.message : String(failure);
};

/** One unit's run: its row, its abort signal, its payload as it changes, and its heartbeats. */
class UnitWork {
  readonly controller = new AbortController();
  payload: Record<string, unknown>;
  /** Bytes that stay written whatever happens next (the parts stored). */
  committed = 0;
  /** Why a heartbeat stopped the run, if one did. */
  stopped?: Exclude<Beat, "go">;
  /** The name of the file being streamed whole into the folder `payload.toDir`, for its removal on cancel. */
  writing?: string;
  private lastBeat = Date.now();

  constructor(
    readonly db: Database,
    readonly unit: UnitRow,
  ) {
    this.payload = unit.payload;
    const parted = unit.payload.parted as PartedState | undefined;
    if (parted) this.committed = parted.tags.length * parted.partBytes;
  }

  get signal() {
    return this.controller.signal;
  }

  /**
   * A mount tree of its own: the paths were checked by the request that made the task. Its calls
   * stop with `signal`, the run's unless told.
   */
  async tree(paths: string[], signal: AbortSignal = this.signal): Promise<MountTree> {
    const rows = { storages: [], chains: new Set<string>(), virtual: new Map(), points: new Map() };
    await extendTree(this.db, rows, { paths, folders: [] });
    return new MountTree(rows, this.db, signal);
  }

  /**
   * The `size` bytes of `stream` counted as they flow, from `base` bytes on: a heartbeat every few
   * seconds, a stop when told (exactLength, read in large steps; what a short or long read says is
   * what putFile would say of it).
   */
  counted(stream: ReadableStream<Uint8Array>, base: number, size: number): ReadableStream<Uint8Array> {
    return exactLength(stream, size, {
      short: (sent) => new FileError("refused", uploadEndedEarly(sent, size)),
      long: () => new FileError("refused", uploadTooLong(size)),
      onBytes: async (_chunk, sent) => {
        if (Date.now() - this.lastBeat >= HEARTBEAT_MS) await this.beat(base + sent);
      },
    }).body;
  }

  /** A heartbeat now, `bytes` done: past it the run goes on, or it stops (Stopped) and says why. */
  async beat(bytes: number): Promise<void> {
    this.lastBeat = Date.now();
    const beat = await heartbeat(this.db, this.unit, bytes);
    if (beat === "go") return;
    this.stopped = beat;
    // No reason of our own: workerd logs a JavaScript error that cancels a subrequest as uncaught
    // ("Stopped"), while the default AbortError is a quiet cancel. `stopped` says why.
    this.controller.abort();
    throw new Stopped("stopped");
  }

  /**
   * What a canceled unit leaves upstream goes (docs/decisions.md D15.5): an open upload in parts is
   * given up (its parts dropped), a file it was streaming whole is removed where the storage kept
   * its first bytes (WebDAV, FTP). Best effort, through a tree of its own: the unit's signal, aborted
   * by the cancel, would stop these requests before they leave. A unit taken by another worker
   * leaves everything to that worker. With `partsOnly` (a unit that failed for good) only the
   * upload in parts goes.
   */
  async cleanUp(partsOnly = false): Promise<void> {
    const parted = this.payload.parted as PartedState | undefined;
    if (this.stopped === "lost" || (!parted && (partsOnly || this.writing === undefined))) return;
    try {
      const toDir = this.payload.toDir as string;
      const target = await (await this.tree([toDir], AbortSignal.timeout(CLEAN_UP_MS))).mount(toDir);
      if (parted) await target.backend.parts?.abort(parted.upload);
      else await removePartial(target, this.writing!);
    } catch {
      // The upstream's own expiry of incomplete uploads takes what is left (docs/operations.md).
    }
  }

  close() {
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}

async function runUnit(work: UnitWork, env: Env): Promise<Ending> {
  switch (work.unit.kind) {
    case "copy":
      return copyUnit(work, env, work.payload as unknown as CopyPayload);
    case "remove":
      return removeUnit(work, work.payload as { path: string; index?: TaskIndexing | null });
    case "fetch":
      return fetchUnit(work, env, work.payload as unknown as FetchPayload);
    default:
      throw new Unrecoverable(`unknown unit kind ${work.unit.kind}`);
  }
}

async function copyUnit(work: UnitWork, env: Env, copy: CopyPayload): Promise<Ending> {
  const tree = await work.tree([copy.from, copy.toDir]);
  const source = await tree.mount(copy.from);
  const target = await tree.mount(copy.toDir);
  const known = copy.isDir !== undefined && (copy.isDir || copy.size !== undefined);
  const object = known ? { isDir: copy.isDir!, size: copy.size ?? 0 } : await getObject(source);
  const written = joinName(copy.toDir, copy.name);
  if (object.isDir) {
    await ensureFolder(target, copy.name);
    const entries = await source.backend.list(source.actualPath);
    return {
      settle: { state: "done", bytes: 0 },
      children: entries.map((entry) => ({
        kind: "copy",
        payload: {
          from: joinName(copy.from, entry.name),
          toDir: written,
          name: entry.name,
          isDir: entry.isDir,
          ...(entry.isDir ? {} : { size: entry.size }),
          ...(copy.index ? { index: copy.index } : {}),
        },
      })),
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

/** A unit's ending once it wrote the file `path` of `size` bytes: with the index's change when its task keeps one. */
function indexed(
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
 * A file of `size` bytes into `target` as `name`, read by `read`: in parts (one per message)
 * when the storage takes parts and the file is bigger than a part, else streamed whole.
 */
async function writeFile(
  work: UnitWork,
  /** The part size, or null when the source cannot be read in ranges. */
  partBytes: number | null,
  target: Mounted,
  name: string,
  size: number,
  read: (range?: { start: number; end: number }) => Promise<ReadableStream<Uint8Array>>,
): Promise<Ending> {
  const parts = partBytes === null ? undefined : target.backend.parts;
  if (!parts || size <= Math.max(parts.minPartBytes, partBytes!)) {
    need(target, "put");
    const body = size === 0 ? emptyBody() : work.counted(await read(), 0, size);
    work.writing = name;
    await putFile(target, { name, size, body, contentType: "application/octet-stream" });
    work.writing = undefined;
    return { settle: { state: "done", bytes: size } };
  }
  let parted = work.payload.parted as PartedState | undefined;
  if (!parted) {
    parted = {
      upload: await parts.begin(target.actualPath, name, "application/octet-stream"),
      tags: [],
      partBytes: Math.max(parts.minPartBytes, partBytes!),
    };
    work.payload = { ...work.payload, parted };
  }
  const index = parted.tags.length;
  const start = index * parted.partBytes;
  const end = Math.min(size, start + parted.partBytes) - 1;
  const tag = await parts.putPart(
    parted.upload,
    index,
    end - start + 1,
    work.counted(await read({ start, end }), start, end - start + 1),
  );
  parted = { ...parted, tags: [...parted.tags, tag] };
  work.payload = { ...work.payload, parted };
  work.committed = end + 1;
  if (end + 1 < size) return { again: { payload: work.payload, bytes: end + 1 } };
  // Only the unit's holder completes: a worker that stalled in the last part past its lease would
  // complete the upload under the restarted run, whose own last part then finds it gone (D15.4).
  await work.beat(size);
  await parts.complete(parted.upload, parted.tags);
  return { settle: { state: "done", bytes: size } };
}

async function removeUnit(work: UnitWork, remove: { path: string; index?: TaskIndexing | null }): Promise<Ending> {
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

/**
 * An offline download (OpenList's `upload_download_stream`: the URL streamed straight into the
 * storage, no temporary file; OpenList internal/offline_download/tool/transfer.go:55-79).
 */
async function fetchUnit(work: UnitWork, env: Env, download: FetchPayload): Promise<Ending> {
  const tree = await work.tree([download.toDir]);
  if (parentOf(download.toDir) !== download.toDir) await makeDirs(tree, download.toDir);
  const target = await tree.mount(download.toDir);
  const optIn = privateHostsOptIn(env.OFFLINE_DOWNLOAD_PRIVATE_HOSTS);
  const get = (headers?: Record<string, string>) => fetchGuarded(download.url, optIn, work.signal, headers);
  const ranged = async (range?: { start: number; end: number }) => {
    const response = await get(range ? { Range: `bytes=${range.start}-${range.end}` } : undefined);
    if (!response.ok || !response.body || (range && response.status !== 206)) {
      await response.body?.cancel();
      // A 200 to a ranged read is the whole file again: every attempt would get the same (D15.9).
      if (range && response.status === 200) throw new Unrecoverable(RANGE_IGNORED);
      throw new Error(fetchFailed(response.status));
    }
    return response.body;
  };
  const landed = (name: string, size: number, ending: Ending) =>
    indexed(work, download.index, target, joinName(download.toDir, name), size, ending);
  if (download.parted && download.name !== undefined && download.size !== undefined)
    return landed(
      download.name,
      download.size,
      await writeFile(work, partSize(env), target, download.name, download.size, ranged),
    );
  const response = await get();
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(fetchFailed(response.status));
  }
  const length = response.headers.get("Content-Length");
  if (length === null || !/^\d+$/.test(length)) {
    await response.body.cancel();
    throw new Unrecoverable(SIZE_UNKNOWN);
  }
  const size = Number(length);
  const name = download.name ?? fileNameOf(response, download.url);
  work.payload = { ...work.payload, name, size };
  await setTotalBytes(work.db, work.unit.taskId, size);
  const first = response.body;
  // Parts need ranges; a server without them is streamed whole.
  const partBytes = response.headers.get("Accept-Ranges") === "bytes" ? partSize(env) : null;
  return landed(
    name,
    size,
    await writeFile(work, partBytes, target, name, size, async (range) => {
      if (!range) return first;
      await first.cancel().catch(() => undefined);
      return ranged(range);
    }),
  );
}

/** Redirects followed before a download gives up (Go's http.Client, AList's, stops at 10). */
const MAX_REDIRECTS = 10;

/**
 * A GET of `url` that follows redirects itself, checking every hop's host before it is fetched: a
 * public server must not bounce a download to the Worker's own machine or a private network
 * (docs/decisions.md D15.9). A refused hop fails the task at once.
 */
async function fetchGuarded(
  url: string,
  optIn: (hostname: string) => boolean,
  signal: AbortSignal,
  headers?: Record<string, string>,
): Promise<Response> {
  let at = new URL(url);
  for (let hop = 0; ; hop++) {
    if (at.protocol !== "http:" && at.protocol !== "https:") throw new Unrecoverable(REDIRECT_NOT_HTTP);
    if (!downloadTargetAllowed(at, optIn)) throw new Unrecoverable(privateAddress(at.hostname));
    const response = await fetch(at.href, { signal, redirect: "manual", ...(headers ? { headers } : {}) });
    const location = response.headers.get("Location");
    if (![301, 302, 303, 307, 308].includes(response.status) || location === null) return response;
    // A redirect's short body is read out, so its connection can carry the next hop; a long one is dropped.
    if (Number(response.headers.get("Content-Length") ?? Number.NaN) <= 65_536) await response.arrayBuffer();
    else await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new Unrecoverable(tooManyRedirects(MAX_REDIRECTS));
    try {
      at = new URL(location, at);
    } catch {
      throw new Unrecoverable(REDIRECT_NOT_HTTP);
    }
  }
}

const partSize = (env: Env) => Number(env.TASK_PART_BYTES) || DEFAULT_PART_BYTES;

/**
 * The file name of a download: Content-Disposition's filename, else the URL's last path segment,
 * else its host with dots as underscores (AList v3.58.0 internal/offline_download/http/client.go:68-76).
 */
export function fileNameOf(response: Response, url: string): string {
  const disposition = response.headers.get("Content-Disposition") ?? "";
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition);
  const plain = /filename\s*=\s*"?([^";]+)"?/.exec(disposition);
  const pick = (raw: string | undefined) => {
    if (!raw) return "";
    try {
      return decodeURIComponent(raw).replace(/[/\\]/g, "_").trim();
    } catch {
      return "";
    }
  };
  const fromHeader = pick(star?.[1]) || pick(plain?.[1]);
  if (fromHeader && fromHeader !== "." && fromHeader !== "..") return fromHeader;
  const parsed = new URL(url);
  const segment = pick(parsed.pathname.split("/").filter(Boolean).pop());
  return segment && segment !== "." && segment !== ".." ? segment : parsed.hostname.replace(/\./g, "_");
}
