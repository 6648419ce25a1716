// A unit's lease (docs/decisions.md D15.4, D23.3): how long its row stays its worker's without a
// heartbeat, and how often a running unit beats. Both come from the environment, so the tests can
// beat every few hundred milliseconds instead of sleeping out two seconds; unset, the defaults.
import { type Env, readConfig } from "../../env.ts";

export interface Lease {
  /** How often a running unit writes its progress and renews its lease (and learns of a cancel). */
  heartbeatMs: number;
  /** A running unit's lease: past it without a heartbeat, its worker is taken for dead. */
  runningMs: number;
}

/** A queued unit must have started by then, or the sweep sends it again (the local queue lives in memory). */
export const QUEUED_LEASE_MS = 10 * 60_000;

/** The lease of `TASK_HEARTBEAT_MS` and `TASK_LEASE_MS`; a heartbeat beats at least four times a lease. */
export function leaseOf(env: Env): Lease {
  const { heartbeatMs, leaseMs } = readConfig(env).tasks;
  return { heartbeatMs: Math.max(1, Math.min(heartbeatMs, Math.floor(leaseMs / 4))), runningMs: leaseMs };
}
