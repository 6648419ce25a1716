// One unit's run as the runner and the unit kinds (transfer.ts, fetch-unit.ts) share it: its row
// and typed payload, its abort signal, its heartbeats, and what it asks of its row when it ends.
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../db/client.ts";
import { type Env, readConfig } from "../../env.ts";
import { FileError } from "../../drivers/types.ts";
import { exactLength } from "../../lib/streams.ts";
import { uploadEndedEarly, uploadTooLong } from "../fs/messages.ts";
import { MountTree } from "../fs/mounts.ts";
import { removePartial } from "../fs/operations.ts";
import { extendTree } from "../fs/store.ts";
import type { Lease } from "./lease.ts";
import { committedBytes, type PartedState, type UnitPayload } from "./payload.ts";
import { type Beat, heartbeat, type Outcome, type UnitRow } from "./store.ts";

/** How long a cancel's clean-up upstream may take (its requests cannot ride the unit's aborted signal). */
const CLEAN_UP_MS = 30_000;
/** The part size of a big file (`TASK_PART_BYTES`): a part is one Range read and one upload call. */
export const partSize = (env: Env) => readConfig(env).tasks.partBytes;

/** The unit's task was canceled or deleted, or the unit was taken from this worker. */
class Stopped extends Error {
  override name = "Stopped";
}
/** A failure no retry can mend (a URL without a size): the unit fails at once. */
export class Unrecoverable extends Error {}

/** A unit the runner adds to the task: its kind and payload. */
export interface NewUnit {
  kind: string;
  payload: Record<string, unknown>;
}

/**
 * What a unit asks of its row when it ends: settle it (with the statements of its children and of
 * the search index's changes), or send it again.
 */
export type Ending =
  | { settle: Outcome; children?: NewUnit[]; childBytes?: number; index?: BatchItem<"sqlite">[] }
  | { again: { payload: Record<string, unknown>; bytes: number } };

/** One unit's run: its row, its abort signal, its payload as it changes, and its heartbeats. */
export class UnitWork {
  readonly controller = new AbortController();
  /** The unit's payload as it changes (parts stored, files done): what a rerun starts from. */
  current: UnitPayload;
  /** Bytes that stay written whatever happens next (the parts stored, the small files done). */
  committed: number;
  /** Why a heartbeat stopped the run, if one did. */
  stopped?: Exclude<Beat, "go">;
  /** The files being streamed whole into the payload's `toDir`, for their removal on cancel. */
  readonly writing = new Set<string>();
  /** Bytes sent upstream so far in this run, from what was committed before it: what heartbeats count. */
  flowed: number;
  private lastBeat = Date.now();
  /** The heartbeat `counted` started and that has not ended yet. */
  private beating: Promise<void> | undefined;
  /** What such a heartbeat met, thrown at the next step. */
  private beatFault: { error: unknown } | undefined;

  constructor(
    readonly db: Database,
    readonly unit: UnitRow,
    work: UnitPayload,
    readonly lease: Lease,
  ) {
    this.current = work;
    this.committed = committedBytes(work);
    this.flowed = this.committed;
  }

  get signal() {
    return this.controller.signal;
  }

  /** The payload to store: the unit's as it stands now. */
  get payload(): Record<string, unknown> {
    return this.current.payload;
  }

  /** The upload in parts this unit holds open, if any. */
  get parted(): PartedState | undefined {
    const work = this.current;
    return work.kind === "copy" || work.kind === "fetch" ? work.payload.parted : undefined;
  }

  set parted(parted: PartedState) {
    const work = this.current;
    if (work.kind === "copy") this.current = { kind: "copy", payload: { ...work.payload, parted } };
    else if (work.kind === "fetch") this.current = { kind: "fetch", payload: { ...work.payload, parted } };
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
   * The `size` bytes of `stream` counted into `flowed` as they flow: a heartbeat every
   * `lease.heartbeatMs`, a stop when told (exactLength, read in large steps; what a short or long
   * read says is what putFile would say of it). The heartbeat does not hold the bytes up while it
   * runs (docs/decisions.md D23.5): its failure or its stop fails the next step, or `beaten()`.
   */
  counted(stream: ReadableStream<Uint8Array>, size: number): ReadableStream<Uint8Array> {
    return exactLength(stream, size, {
      short: (sent) => new FileError("refused", uploadEndedEarly(sent, size)),
      long: () => new FileError("refused", uploadTooLong(size)),
      onBytes: this.count,
    }).body;
  }

  /** Counts a step's bytes into `flowed`, starting a heartbeat when one is due (see `counted`). */
  readonly count = (chunk: Uint8Array): void => {
    if (this.beatFault) throw this.beatFault.error;
    this.flowed += chunk.byteLength;
    if (this.beating || Date.now() - this.lastBeat < this.lease.heartbeatMs) return;
    const beating = this.beat(this.flowed)
      .catch((error: unknown) => {
        this.beatFault ??= { error };
      })
      .finally(() => {
        if (this.beating === beating) this.beating = undefined;
      });
    this.beating = beating;
  };

  /** Waits for the heartbeat `counted` started, if one runs; throws what it met (a stop, a failure). */
  async beaten(): Promise<void> {
    await this.beating;
    if (this.beatFault) throw this.beatFault.error;
  }

  /**
   * A heartbeat now, `bytes` done, the payload stored with it when `withPayload`: past it the run
   * goes on, or it stops (Stopped) and says why.
   */
  async beat(bytes: number, withPayload = false): Promise<void> {
    this.lastBeat = Date.now();
    const beat = await heartbeat(this.db, this.unit, this.lease, bytes, withPayload ? this.payload : undefined);
    if (beat === "go") return;
    this.stopped = beat;
    // No reason of our own: workerd logs a JavaScript error that cancels a subrequest as uncaught
    // ("Stopped"), while the default AbortError is a quiet cancel. `stopped` says why.
    this.controller.abort();
    throw new Stopped("stopped");
  }

  /**
   * Heartbeats on a timer, each storing the payload (the files done so far) and the committed
   * bytes, until `stop()`, which waits for one in flight. A beat that says stop aborts the run.
   */
  ticking(): { stop(): Promise<void> } {
    let beating: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      beating = beating.then(() => (this.stopped ? undefined : this.beat(this.committed, true).catch(() => undefined)));
    }, this.lease.heartbeatMs);
    return {
      stop: async () => {
        clearInterval(timer);
        await beating;
      },
    };
  }

  /**
   * What a canceled unit leaves upstream goes (docs/decisions.md D15.5): an open upload in parts is
   * given up (its parts dropped), the files it was streaming whole are removed where the storage
   * kept their first bytes (WebDAV, FTP). Best effort, through a tree of its own: the unit's signal,
   * aborted by the cancel, would stop these requests before they leave. A unit taken by another
   * worker leaves everything to that worker. With `partsOnly` (a unit that failed for good) only
   * the upload in parts goes.
   */
  async cleanUp(partsOnly = false): Promise<void> {
    const parted = this.parted;
    const work = this.current;
    if (this.stopped === "lost" || work.kind === "remove") return;
    if (!parted && (partsOnly || this.writing.size === 0)) return;
    try {
      const toDir = work.payload.toDir;
      const target = await (await this.tree([toDir], AbortSignal.timeout(CLEAN_UP_MS))).mount(toDir);
      if (parted) await target.backend.parts?.abort(parted.upload);
      else await Promise.all([...this.writing].map((name) => removePartial(target, name)));
    } catch {
      // The upstream's own expiry of incomplete uploads takes what is left (docs/operations.md).
    }
  }

  close() {
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}
