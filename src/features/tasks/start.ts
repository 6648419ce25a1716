// Starting a background task from a request: its row and first unit written in one batch, the
// unit's message sent, and the TaskInfo the reply carries. Used by the copy and move of /api/fs
// across storages (startTransfer, through the file side's hook) and by offline downloads.
import type { Caller } from "../../auth/caller.ts";
import type { Database } from "../../db/client.ts";
import type { Env } from "../../env.ts";
import { sendUnits, taskQueue } from "./queue.ts";
import type { Transfer, WriteRequest } from "../fs/hooks.ts";
import type { TaskIndexing } from "../search/changes.ts";
import { newTaskId, type TaskInfo, type TaskKind, taskInfo, transferTaskName } from "./rules.ts";
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

/**
 * A copy or move between two storages, as the file side hands it over (its FileWrites hook,
 * composed in src/app.ts): a task, whatever the size (AList v3.58.0 internal/fs/copy.go:104-118),
 * carrying the request's share of the search index's auto update.
 */
export function startTransfer(
  { db, env, caller }: WriteRequest,
  { kind, from, toDir, name, source, target }: Transfer,
  index: TaskIndexing | null,
): Promise<TaskInfo> {
  return startTask(db, env, caller, kind, transferTaskName(kind, source, target), {
    unit: "copy",
    from,
    toDir,
    name,
    index,
  });
}
