// The task API's decisions: tache's state numbers and AList's TaskInfo (AList v3.58.0
// server/handles/task.go:17-60, tache v0.1.5 state.go:6-27), the names the web UI's task pages
// parse (AList v3.58.0 internal/fs/copy.go:33-35, OpenList internal/fs/copy_move.go:49-51,
// internal/offline_download/tool/download.go:172-174), and who sees which task.
import type { tasks } from "../../db/schema.ts";

export type TaskRow = typeof tasks.$inferSelect;

export const TaskState = {
  PENDING: 0,
  RUNNING: 1,
  SUCCEEDED: 2,
  CANCELING: 3,
  CANCELED: 4,
  ERRORED: 5,
  FAILING: 6,
  FAILED: 7,
  WAITING_RETRY: 8,
  BEFORE_RETRY: 9,
} as const;

/** What `undone` and `done` list (AList v3.58.0 server/handles/task.go:126-151). */
export const UNDONE_STATES = [0, 1, 3, 5, 6, 8, 9];
export const DONE_STATES = [2, 4, 7];

/** The kinds the web UI has task pages for (OpenList server/handles/task.go:220-228), and v3.58's s3_transition. */
export const TASK_KINDS = [
  "upload",
  "copy",
  "move",
  "offline_download",
  "offline_download_transfer",
  "decompress",
  "decompress_upload",
  "s3_transition",
] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** AList's TaskInfo. */
export interface TaskInfo {
  id: string;
  name: string;
  creator: string;
  creator_role: number[];
  state: number;
  status: string;
  progress: number;
  start_time: string | null;
  end_time: string | null;
  total_bytes: number;
  error: string;
}

const STATUS: Record<number, string> = {
  0: "pending",
  1: "running",
  2: "succeeded",
  3: "canceling",
  4: "canceled",
  7: "failed",
  8: "waiting retry",
};

/** 0..100 from the bytes written; a task with no bytes (empty files, folders only) jumps to 100 when it succeeds. */
export function progressOf(row: Pick<TaskRow, "totalBytes" | "doneBytes" | "state">): number {
  if (row.state === TaskState.SUCCEEDED) return 100;
  if (row.totalBytes <= 0) return 0;
  return Math.min(100, Math.floor((row.doneBytes * 10_000) / row.totalBytes) / 100);
}

export function taskInfo(row: TaskRow): TaskInfo {
  const steps = row.unitsTotal > 0 ? ` (${row.unitsDone} of ${row.unitsTotal} steps)` : "";
  return {
    id: row.id,
    name: row.name,
    creator: row.creator,
    creator_role: row.creatorRoles,
    state: row.state,
    status: `${STATUS[row.state] ?? "running"}${row.state === TaskState.RUNNING ? steps : ""}`,
    progress: progressOf(row),
    start_time: row.startedAtMs === null ? null : new Date(row.startedAtMs).toISOString(),
    end_time: row.endedAtMs === null ? null : new Date(row.endedAtMs).toISOString(),
    total_bytes: row.totalBytes,
    error: row.error,
  };
}

/** `copy [/src mount](/actual path) to [/dst mount](/actual dir)`, the shape the Copy and Move pages parse. */
type Place = { storage: { mountPath: string }; actualPath: string };
export const transferTaskName = (verb: "copy" | "move", source: Place, target: Place) =>
  `${verb} [${source.storage.mountPath}](${source.actualPath}) to [${target.storage.mountPath}](${target.actualPath})`;

/** `download <url> to (<dir>)`, the shape the offline download page parses. */
export const downloadTaskName = (url: string, dir: string) => `download ${url} to (${dir})`;

/** tache's ids: 21 URL-safe characters (tache v0.1.5 manager.go:39-41). */
export function newTaskId(): string {
  const alphabet = "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict";
  return Array.from(crypto.getRandomValues(new Uint8Array(21)), (byte) => alphabet[byte & 63]).join("");
}
