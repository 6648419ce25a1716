// The queue consumer: runs one unit per message (docs/decisions.md D15, D23). A unit is a folder
// listing (which queues its subfolders and big files a unit each and its small files in groups), a
// group of small files, a file streamed from one storage into another (a big one in parts), a URL
// streamed into a storage, or a move's final removal of its source. Each claims its row first (a
// stale or duplicate message does nothing) and reads its payload there, once; writes its progress
// while its bytes flow (and stops there when its task was canceled or deleted), and ends by settling
// its row, which ends the task when nothing of it is left open.
import type { Database } from "../../db/client.ts";
import { type Env, logs, readConfig } from "../../env.ts";
import { fileFailure } from "../fs/mounts.ts";
import { fetchUnit } from "./fetch-unit.ts";
import { type Lease, leaseOf } from "./lease.ts";
import { CANCELED } from "./messages.ts";
import { CorruptUnit, parseUnit, type UnitPayload } from "./payload.ts";
import { sendUnits } from "./queue.ts";
import { creatorRefusal } from "./rules.ts";
import {
  childUnits,
  claimUnit,
  MAX_ATTEMPTS,
  type Outcome,
  requeueUnit,
  settleUnit,
  type UnitRow,
  type UnitTicket,
} from "./store.ts";
import { copyUnit, filesUnit, removeUnit } from "./transfer.ts";
import { type Ending, Unrecoverable, UnitWork } from "./work.ts";

/**
 * An invocation that has run less than this takes a unit's follow-up on itself (D23.8): well within
 * the consumer's 15 minutes of wall clock, whatever the unit before it took.
 */
const INLINE_BUDGET_MS = 10 * 60_000;

/**
 * Runs a batch's messages side by side (a few: the batch size of wrangler.toml; the runtime holds
 * connections past its limit of six until one frees). Each is acknowledged once its unit's row
 * says where it stands; a unit that throws past that is left to the queue's retry and the sweep.
 * `began`: when the invocation began (the tests set it to show the budget).
 */
export async function consumeBatch(
  db: Database,
  env: Env,
  batch: MessageBatch<UnitTicket>,
  began = Date.now(),
): Promise<void> {
  const run: Run = { lease: leaseOf(env), debug: logs(readConfig(env), "debug") };
  await Promise.all(
    batch.messages.map(async (message) => {
      const [next] = await runTimed(db, env, message.body, run, message.timestamp.getTime());
      message.ack();
      // A move's removal of its source, ready now, runs here at once instead of waiting for its
      // message (a queue holds a batch that is not full up to max_batch_timeout). That message,
      // sent already, stays the fallback: its claim finds the unit done or leased and does nothing
      // (docs/decisions.md D23.8). One such unit a message, a handful of subrequests (wrangler.toml).
      if (next && Date.now() - began < INLINE_BUDGET_MS) await runTimed(db, env, next, run);
    }),
  );
}

/** What every unit of an invocation shares: its lease, and whether its phases are logged. */
interface Run {
  lease: Lease;
  debug: boolean;
}

/** Where a unit's run stands, for its debug line: the row claimed, when each phase ended, how it ended. */
interface Phases {
  unit?: UnitRow;
  claimed?: number;
  ran?: number;
  ended?: string;
}

/**
 * Runs the unit of `message` and, under LOG_LEVEL=debug, writes a line of its phases (the bench
 * prints them, scripts/bench-copy-pace.ts): how long its message waited in the queue (`sentAt`, the
 * queue's timestamp; none for a unit run inline), its claim, its run, and its settling with the
 * messages it sent. Answers the follow-up units it made ready (a move's removal).
 */
async function runTimed(db: Database, env: Env, message: UnitTicket, run: Run, sentAt?: number): Promise<UnitTicket[]> {
  const began = Date.now();
  const phases: Phases = {};
  try {
    return (await runMessage(db, env, message, run.lease, phases)) ?? [];
  } finally {
    const { unit, claimed, ran, ended } = phases;
    if (run.debug && unit && claimed !== undefined) {
      const end = Date.now();
      console.log(
        JSON.stringify({
          level: "debug",
          task: unit.taskId,
          unit: unit.id,
          kind: unit.kind,
          attempt: unit.attempts,
          at: began,
          ...(sentAt === undefined ? { inline: true, queuedMs: 0 } : { queuedMs: began - sentAt }),
          claimMs: claimed - began,
          runMs: (ran ?? end) - claimed,
          settleMs: end - (ran ?? end),
          ended: ended ?? "thrown",
        }),
      );
    }
  }
}

/** Claims and runs the unit of `message`; answers the follow-up units its settling made ready. */
async function runMessage(
  db: Database,
  env: Env,
  message: UnitTicket,
  lease: Lease,
  phases: Phases,
): Promise<UnitTicket[] | undefined> {
  const claimed = await claimUnit(db, message, lease);
  if (!claimed?.task) return;
  const { unit } = claimed;
  phases.unit = unit;
  phases.claimed = Date.now();
  let parsed: UnitPayload;
  try {
    parsed = parseUnit(unit);
  } catch (error) {
    if (!(error instanceof CorruptUnit)) throw error;
    // Nothing of it can run or be cleaned up: it fails its task, saying which row and why (D23.4).
    phases.ended = "failed";
    const { follow } = await settleUnit(db, unit, { state: "failed", error: error.message });
    await sendUnits(env, follow);
    return follow;
  }
  const work = new UnitWork(db, unit, parsed, lease);
  const committedBefore = work.committed;
  if (claimed.task.cancelRequested) return finish(db, env, work, { settle: cancelOutcome() }, phases);
  // The unit runs for its creator as it stands now: narrowed, disabled or deleted, it fails (D15.10).
  const refusal = creatorRefusal(claimed.task, claimed.creator);
  if (refusal) return finish(db, env, work, { settle: { state: "failed", error: refusal } }, phases);
  let ending: Ending;
  try {
    ending = await runUnit(work, env);
  } catch (error) {
    phases.ran = Date.now();
    // A heartbeat still in flight may say the run was stopped or taken: its answer first (D23.5).
    await work.beaten().catch(() => undefined);
    // Taken from this worker (its lease ran out): its row and upload are the restarted run's now.
    if (work.stopped === "lost") {
      phases.ended = "lost";
      return;
    }
    if (work.stopped === "stop") return finish(db, env, work, { settle: cancelOutcome() }, phases);
    const text = messageOf(error);
    // A run that stored parts or files before it failed starts its attempts over (D23.2).
    const progressed = work.committed > committedBefore;
    if (error instanceof Unrecoverable || (unit.attempts >= MAX_ATTEMPTS && !progressed))
      return finish(db, env, work, { settle: { state: "failed", error: text } }, phases);
    phases.ended = "retried";
    const next = await requeueUnit(db, unit, {
      payload: work.payload,
      bytes: work.committed,
      error: text,
      resetAttempts: progressed,
    });
    if (next) await sendUnits(env, [next], unit.attempts);
    return;
  } finally {
    work.close();
  }
  phases.ran = Date.now();
  return finish(db, env, work, ending, phases);
}

const cancelOutcome = (): Outcome => ({ state: "canceled", error: CANCELED });

/** Settles or requeues the unit as `ending` says and sends what that made ready; answers its follow-ups. */
async function finish(db: Database, env: Env, work: UnitWork, ending: Ending, phases: Phases): Promise<UnitTicket[]> {
  phases.ended = "again" in ending ? "again" : ending.settle.state;
  if ("again" in ending) {
    const next = await requeueUnit(db, work.unit, { ...ending.again, resetAttempts: true });
    if (next) await sendUnits(env, [next]);
    return [];
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
  return follow;
}

const messageOf = (error: unknown): string => {
  const failure = fileFailure(error, "");
  return failure instanceof Error ? failure.message : String(failure);
};

async function runUnit(work: UnitWork, env: Env): Promise<Ending> {
  const unit = work.current;
  switch (unit.kind) {
    case "copy":
      return copyUnit(work, env, unit.payload);
    case "files":
      return filesUnit(work, unit.payload);
    case "remove":
      return removeUnit(work, unit.payload);
    case "fetch":
      return fetchUnit(work, env, unit.payload);
  }
}
