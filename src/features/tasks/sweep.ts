// The cron sweep of background tasks (docs/decisions.md D15.4): a unit whose lease ran out lost its
// worker (an isolate gone, `npm start` stopped: the local queue lives in memory) or its message.
// A queued one is sent again; a running one starts again from what stays written (the parts of a
// big file stored so far), or fails its task once its attempts are used up: `retry` then runs it.
import type { Database } from "../../db/client.ts";
import type { Env } from "../../env.ts";
import { INTERRUPTED } from "./messages.ts";
import { committedBytes, CorruptUnit, parseUnit } from "./payload.ts";
import { sendUnits } from "./queue.ts";
import { expiredUnits, MAX_ATTEMPTS, requeueUnit, resendQueued, settleUnit, type UnitTicket } from "./store.ts";

/** Units looked at per run; the rest wait for the next one. */
const SWEEP_LIMIT = 500;

export interface SweepReport {
  resent: number;
  restarted: number;
  failed: number;
}

export async function sweepTasks(db: Database, env: Env, now = Date.now()): Promise<SweepReport> {
  const expired = await expiredUnits(db, now, SWEEP_LIMIT);
  const send: UnitTicket[] = await resendQueued(
    db,
    expired.filter((unit) => unit.state === "queued").map((unit) => unit.id),
  );
  const report: SweepReport = { resent: send.length, restarted: 0, failed: 0 };
  for (const unit of expired.filter((unit) => unit.state === "running")) {
    if (unit.attempts >= MAX_ATTEMPTS) {
      send.push(...(await settleUnit(db, unit, { state: "failed", error: INTERRUPTED })).follow);
      report.failed++;
      continue;
    }
    let bytes: number;
    try {
      bytes = committedBytes(parseUnit(unit));
    } catch (error) {
      if (!(error instanceof CorruptUnit)) throw error;
      send.push(...(await settleUnit(db, unit, { state: "failed", error: error.message })).follow);
      report.failed++;
      continue;
    }
    // It starts again from what stays written: the parts stored, the small files done (D23.1).
    const next = await requeueUnit(db, unit, { bytes });
    if (next) send.push(next);
    report.restarted++;
  }
  await sendUnits(env, send);
  return report;
}
