// Sending units to the task queue (wrangler.toml [[queues.producers]], binding TASK_QUEUE). A unit
// row is always written before its message is sent, so a message lost on the way (a crash, the
// local queue's memory) is found again by the cron sweep from the row's lease.
import { ConfigError, type Env } from "../../env.ts";
import type { UnitTicket } from "./store.ts";

/** Most messages per sendBatch call (Cloudflare Queues limits). */
const SEND_BATCH = 100;

export function taskQueue(env: Env): Queue<UnitTicket> {
  if (!env.TASK_QUEUE)
    throw new ConfigError(
      "the TASK_QUEUE binding is missing: background tasks need the queue of wrangler.toml (docs/operations.md)",
    );
  return env.TASK_QUEUE;
}

export async function sendUnits(env: Env, units: UnitTicket[], delaySeconds = 0): Promise<void> {
  if (units.length === 0) return;
  const queue = taskQueue(env);
  for (let i = 0; i < units.length; i += SEND_BATCH)
    await queue.sendBatch(
      units.slice(i, i + SEND_BATCH).map((unit) => ({
        body: { id: unit.id, ticket: unit.ticket },
        ...(delaySeconds > 0 ? { delaySeconds } : {}),
      })),
    );
}
