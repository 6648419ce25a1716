// Starting a background task from a request: its row and first unit written in one batch, the
// unit's message sent, and the TaskInfo the reply carries. Used by the copy and move of /api/fs
// across storages and by offline downloads.
import type { Caller } from "../../auth/caller.ts";
import type { Database } from "../../db/client.ts";
import type { Env } from "../../env.ts";
import { sendUnits, taskQueue } from "./queue.ts";
import { newTaskId, type TaskInfo, type TaskKind, taskInfo } from "./rules.ts";
import { createTask } from "./store.ts";

/** `payload.unit` names the first unit's kind; the rest is its payload (a retry rebuilds it from there). */
export async function startTask(
  db: Database,
  env: Env,
  caller: Caller,
  kind: TaskKind,
  name: string,
  payload: { unit: string } & Record<string, unknown>,
): Promise<TaskInfo> {
  const { unit, ...unitPayload } = payload;
  taskQueue(env); // A deploy without the queue is told so before a row is written.
  const created = await createTask(
    db,
    {
      id: newTaskId(),
      kind,
      name,
      creatorId: caller.user.id,
      creator: caller.user.username,
      creatorRoles: caller.user.roleIds,
      payload,
    },
    { kind: unit, payload: unitPayload },
  );
  await sendUnits(env, [created.unit]);
  return taskInfo(created.task);
}
