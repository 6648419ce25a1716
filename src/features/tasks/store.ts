// Every query of the tasks feature: the task API's reads and writes, and what the units do to
// their rows while they run (claim, heartbeat, settle, requeue) and what the cron sweep does. Each
// step is one batch: one round trip, one transaction, so the counters and states never disagree.
import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../db/client.ts";
import { plan, runBatch } from "../../db/plan.ts";
import { type RoleRow, rolesOf, type UserRow } from "../../auth/store.ts";
import { metas, roles, taskUnits, tasks, users } from "../../db/schema.ts";
import type { MetaRow } from "../fs/rules.ts";
import { type Lease, QUEUED_LEASE_MS } from "./lease.ts";
import { CANCELED } from "./messages.ts";
import { type CreatorNow, DONE_STATES, TaskState, taskInfo, type TaskRow, UNDONE_STATES } from "./rules.ts";

export type UnitRow = typeof taskUnits.$inferSelect;
/** A queue message: the unit and the ticket it was sent with. */
export interface UnitTicket {
  id: number;
  ticket: number;
}

/** Attempts of a unit before it fails its task (AList's copy retries twice: three runs). */
export const MAX_ATTEMPTS = 3;

const OPEN = ["queued", "running"];
const openUnitsOf = (taskId: string) =>
  sql`EXISTS (SELECT 1 FROM ${taskUnits} WHERE ${taskUnits.taskId} = ${taskId} AND ${taskUnits.state} IN ('queued', 'running'))`;

// ---- The task API

/** Who may see a task: its creator, or an admin (AList v3.58.0 server/handles/task.go:133-137). */
export const visibleTo = (callerId: SQL | number, callerIsAdmin: SQL | boolean): SQL =>
  sql`(${tasks.creatorId} = ${callerId} OR ${typeof callerIsAdmin === "boolean" ? sql.raw(callerIsAdmin ? "1" : "0") : callerIsAdmin})`;

export function listPlan(db: Database, kind: string, done: boolean, visible: SQL) {
  return plan(
    [
      db
        .select()
        .from(tasks)
        .where(and(eq(tasks.kind, kind), inArray(tasks.state, done ? DONE_STATES : UNDONE_STATES), visible))
        .orderBy(asc(tasks.createdAtMs), asc(tasks.id)),
    ],
    ([rows]) => rows.map(taskInfo),
  );
}

export async function findTask(db: Database, kind: string, id: string, visible: SQL): Promise<TaskRow | null> {
  const [row] = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, id), eq(tasks.kind, kind), visible));
  return row ?? null;
}

const targeted = (kind: string, ids: string[], visible: SQL) =>
  and(inArray(tasks.id, ids), eq(tasks.kind, kind), visible);

/**
 * Cancels the tasks among `ids` still undone: queued units that hold no open upload never start;
 * running ones stop at their next heartbeat. A task with nothing running ends canceled at once.
 * Answers the ids found (done tasks included: canceling them changes nothing, as in tache).
 */
export async function cancelTasks(db: Database, kind: string, ids: string[], visible: SQL): Promise<string[]> {
  const undone = and(targeted(kind, ids, visible), inArray(tasks.state, UNDONE_STATES));
  const now = Date.now();
  const [, , found] = (await runBatch(db, [
    db
      .update(taskUnits)
      .set({ state: "canceled", error: CANCELED })
      .where(
        and(
          eq(taskUnits.state, "queued"),
          sql`json_extract(${taskUnits.payload}, '$.parted') IS NULL`,
          inArray(taskUnits.taskId, db.select({ id: tasks.id }).from(tasks).where(undone)),
        ),
      ),
    db
      .update(tasks)
      .set({
        cancelRequested: true,
        state: sql`CASE WHEN EXISTS (SELECT 1 FROM ${taskUnits} WHERE ${taskUnits.taskId} = ${tasks.id} AND ${taskUnits.state} IN ('queued', 'running')) THEN ${TaskState.CANCELING} ELSE ${TaskState.CANCELED} END`,
        error: sql`CASE WHEN EXISTS (SELECT 1 FROM ${taskUnits} WHERE ${taskUnits.taskId} = ${tasks.id} AND ${taskUnits.state} IN ('queued', 'running')) THEN ${tasks.error} ELSE ${CANCELED} END`,
        endedAtMs: sql`CASE WHEN EXISTS (SELECT 1 FROM ${taskUnits} WHERE ${taskUnits.taskId} = ${tasks.id} AND ${taskUnits.state} IN ('queued', 'running')) THEN NULL ELSE ${now} END`,
      })
      .where(undone),
    db
      .select({ id: tasks.id })
      .from(tasks)
      .where(targeted(kind, ids, visible)),
  ])) as [unknown, unknown, { id: string }[]];
  return found.map((row) => row.id);
}

/** Drops tasks whatever their state (tache's Remove); a running unit finds its task gone and stops. */
export async function deleteTasks(db: Database, kind: string, ids: string[], visible: SQL): Promise<string[]> {
  const [, deleted] = (await runBatch(db, [
    db.delete(taskUnits).where(
      inArray(
        taskUnits.taskId,
        db
          .select({ id: tasks.id })
          .from(tasks)
          .where(targeted(kind, ids, visible)),
      ),
    ),
    db
      .delete(tasks)
      .where(targeted(kind, ids, visible))
      .returning({ id: tasks.id }),
  ])) as [unknown, { id: string }[]];
  return deleted.map((row) => row.id);
}

/** Deletes the visible tasks of `kind` in `states` (clear_done, clear_succeeded). */
export async function clearTasks(db: Database, kind: string, states: number[], visible: SQL): Promise<void> {
  const cleared = and(eq(tasks.kind, kind), inArray(tasks.state, states), visible);
  await runBatch(db, [
    db.delete(taskUnits).where(inArray(taskUnits.taskId, db.select({ id: tasks.id }).from(tasks).where(cleared))),
    db.delete(tasks).where(cleared),
  ]);
}

/**
 * The tasks a retry names (`ids`, or with null every failed one of `kind`, for retry_failed), each
 * with its creator as it stands now, in one batch: the retry runs only those it may (D15.10).
 */
export async function retryCandidates(
  db: Database,
  kind: string,
  ids: string[] | null,
  visible: SQL,
): Promise<{ task: TaskRow; creator: CreatorNow }[]> {
  const named =
    ids === null ? and(eq(tasks.kind, kind), eq(tasks.state, TaskState.FAILED), visible) : targeted(kind, ids, visible);
  const creatorIds = sql`(SELECT ${tasks.creatorId} FROM ${tasks} WHERE ${named})`;
  const [found, creators, roleRows, metaRows] = (await runBatch(db, [
    db.select().from(tasks).where(named).orderBy(asc(tasks.createdAtMs), asc(tasks.id)),
    db.select().from(users).where(sql`${users.id} IN ${creatorIds}`),
    db
      .select()
      .from(roles)
      .where(
        sql`${roles.id} IN (SELECT value FROM ${users}, json_each(${users.roleIds}) WHERE ${users.id} IN ${creatorIds})`,
      )
      .orderBy(asc(roles.id)),
    db.select().from(metas),
  ])) as [TaskRow[], UserRow[], RoleRow[], MetaRow[]];
  return found.map((task) => {
    const user = creators.find((row) => row.id === task.creatorId) ?? null;
    return {
      task,
      creator: { user, roles: user ? roleRows.filter((role) => user.roleIds.includes(role.id)) : [], metas: metaRows },
    };
  });
}

/**
 * Retries tasks whatever their state (tache's Retry: state 8, error cleared): the failed and
 * canceled units run again from their start (an open upload in parts is given up); a task with
 * nothing left to run starts over from its first unit. Answers the ids found and the units to send.
 */
export async function retryTasks(
  db: Database,
  kind: string,
  ids: string[],
  visible: SQL,
  firstUnit: (task: TaskRow) => { kind: string; payload: Record<string, unknown> },
): Promise<{ found: string[]; units: UnitTicket[] }> {
  const now = Date.now();
  const [requeued, found] = (await runBatch(db, [
    db
      .update(taskUnits)
      .set({
        state: "queued",
        ticket: sql`${taskUnits.ticket} + 1`,
        attempts: 0,
        error: "",
        leaseUntilMs: now + QUEUED_LEASE_MS,
        payload: sql`json_remove(${taskUnits.payload}, '$.parted')`,
      })
      .where(
        and(
          inArray(taskUnits.state, ["failed", "canceled"]),
          inArray(
            taskUnits.taskId,
            db
              .select({ id: tasks.id })
              .from(tasks)
              .where(targeted(kind, ids, visible)),
          ),
        ),
      )
      .returning({ id: taskUnits.id, ticket: taskUnits.ticket }),
    db
      .update(tasks)
      .set({ state: TaskState.WAITING_RETRY, error: "", cancelRequested: false, endedAtMs: null })
      .where(targeted(kind, ids, visible))
      .returning(),
  ])) as [UnitTicket[], TaskRow[]];
  // Tasks with nothing queued or running now (succeeded, or lost their units): from the start.
  const open = found.length
    ? await db
        .selectDistinct({ taskId: taskUnits.taskId })
        .from(taskUnits)
        .where(
          and(
            inArray(
              taskUnits.taskId,
              found.map((task) => task.id),
            ),
            inArray(taskUnits.state, OPEN),
          ),
        )
    : [];
  const restart = found.filter((task) => !open.some((row) => row.taskId === task.id));
  const restarted = restart.length
    ? ((await runBatch(
        db,
        restart.flatMap((task) => [
          db.delete(taskUnits).where(eq(taskUnits.taskId, task.id)),
          db
            .update(tasks)
            .set({
              doneBytes: 0,
              totalBytes: sql`CASE WHEN ${tasks.kind} = 'copy' OR ${tasks.kind} = 'move' THEN 0 ELSE ${tasks.totalBytes} END`,
              unitsTotal: 1,
              unitsDone: 0,
              startedAtMs: null,
            })
            .where(eq(tasks.id, task.id)),
          insertUnit(db, task.id, firstUnit(task), now),
        ]),
      )) as unknown[])
    : [];
  const fresh = restarted.filter((_, i) => i % 3 === 2).flat() as UnitTicket[];
  return { found: found.map((task) => task.id), units: [...requeued, ...fresh] };
}

const insertUnit = (
  db: Database,
  taskId: string,
  unit: { kind: string; payload: Record<string, unknown> },
  now: number,
) =>
  db
    .insert(taskUnits)
    .values({ taskId, kind: unit.kind, payload: unit.payload, leaseUntilMs: now + QUEUED_LEASE_MS })
    .returning({ id: taskUnits.id, ticket: taskUnits.ticket });

/** A new task and its first unit; answers the unit to send. */
export async function createTask(
  db: Database,
  row: Omit<typeof tasks.$inferInsert, "createdAtMs" | "unitsTotal">,
  unit: { kind: string; payload: Record<string, unknown> },
): Promise<{ task: TaskRow; unit: UnitTicket }> {
  const now = Date.now();
  const [[task], [first]] = (await runBatch(db, [
    db
      .insert(tasks)
      .values({ ...row, createdAtMs: now, unitsTotal: 1 })
      .returning(),
    insertUnit(db, row.id, unit, now),
  ])) as [TaskRow[], UnitTicket[]];
  return { task: task!, unit: first! };
}

// ---- What the units do to their rows

/** The creator of the task selected by `taskId` (a scalar subquery) as it stands now, its roles, and the metas. */
const creatorReads = (db: Database, taskId: SQL) => {
  const creatorId = sql`(SELECT ${tasks.creatorId} FROM ${tasks} WHERE ${tasks.id} = ${taskId})`;
  return [
    db.select().from(users).where(sql`${users.id} = ${creatorId}`),
    rolesOf(db, creatorId),
    db.select().from(metas),
  ] as const;
};

/**
 * Takes the unit of a message if it is still the one sent (its ticket) and queued; marks its task
 * running. Null for a stale or duplicate message. The task is null when it was deleted. The task's
 * creator as it stands now comes in the same batch: the unit runs only if it may still (D15.10).
 */
export async function claimUnit(
  db: Database,
  message: UnitTicket,
  lease: Lease,
): Promise<{ unit: UnitRow; task: TaskRow | null; creator: CreatorNow } | null> {
  const now = Date.now();
  const mine = and(eq(taskUnits.id, message.id), eq(taskUnits.ticket, message.ticket));
  const taskOfUnit = sql`(SELECT ${taskUnits.taskId} FROM ${taskUnits} WHERE ${taskUnits.id} = ${message.id})`;
  const [claimed, , found, creator, creatorRoles, metaRows] = (await runBatch(db, [
    db
      .update(taskUnits)
      .set({ state: "running", attempts: sql`${taskUnits.attempts} + 1`, leaseUntilMs: now + lease.runningMs })
      .where(and(mine, eq(taskUnits.state, "queued")))
      .returning(),
    db
      .update(tasks)
      .set({ state: TaskState.RUNNING, startedAtMs: sql`COALESCE(${tasks.startedAtMs}, ${now})` })
      .where(
        and(
          sql`${tasks.id} = (SELECT ${taskUnits.taskId} FROM ${taskUnits} WHERE ${mine} AND ${taskUnits.state} = 'running')`,
          inArray(tasks.state, [TaskState.PENDING, TaskState.WAITING_RETRY]),
          eq(tasks.cancelRequested, false),
        ),
      ),
    db.select().from(tasks).where(sql`${tasks.id} = ${taskOfUnit}`),
    ...creatorReads(db, taskOfUnit),
  ])) as [UnitRow[], unknown, TaskRow[], UserRow[], RoleRow[], MetaRow[]];
  const unit = claimed[0];
  return unit
    ? { unit, task: found[0] ?? null, creator: { user: creator[0] ?? null, roles: creatorRoles, metas: metaRows } }
    : null;
}

/** Moves `bytes` (this unit's count now) into its task's done_bytes, as a difference: a rerun never counts twice. */
const countBytes = (db: Database, unit: UnitRow, bytes: number) =>
  db
    .update(tasks)
    .set({
      doneBytes: sql`${tasks.doneBytes} + (${bytes} - (SELECT ${taskUnits.bytesDone} FROM ${taskUnits} WHERE ${taskUnits.id} = ${unit.id}))`,
    })
    .where(and(eq(tasks.id, unit.taskId), ownsUnit(unit)));

const ownsUnit = (unit: UnitRow) =>
  sql`EXISTS (SELECT 1 FROM ${taskUnits} WHERE ${taskUnits.id} = ${unit.id} AND ${taskUnits.ticket} = ${unit.ticket} AND ${taskUnits.state} IN ('queued', 'running'))`;
const stillMine = (unit: UnitRow) =>
  and(eq(taskUnits.id, unit.id), eq(taskUnits.ticket, unit.ticket), inArray(taskUnits.state, OPEN));

/**
 * What a running unit's heartbeat tells it: go on; stop, as its task was canceled or deleted; or
 * let go, as the unit was taken from it (its lease ran out and the sweep restarted it elsewhere).
 */
export type Beat = "go" | "stop" | "lost";

/**
 * A running unit's progress: its byte count, its payload when it changed (the parts stored, the
 * files done: what a rerun starts from), and its lease renewed. Answers whether it should go on.
 */
export async function heartbeat(
  db: Database,
  unit: UnitRow,
  lease: Lease,
  bytes: number,
  payload?: Record<string, unknown>,
): Promise<Beat> {
  const [, renewed, [task]] = (await runBatch(db, [
    countBytes(db, unit, bytes),
    db
      .update(taskUnits)
      .set({ bytesDone: bytes, leaseUntilMs: Date.now() + lease.runningMs, ...(payload ? { payload } : {}) })
      .where(stillMine(unit))
      .returning({ id: taskUnits.id }),
    db.select({ cancel: tasks.cancelRequested }).from(tasks).where(eq(tasks.id, unit.taskId)),
  ])) as [unknown, unknown[], { cancel: boolean }[]];
  if (task === undefined || task.cancel) return "stop";
  return renewed.length > 0 ? "go" : "lost";
}

/** The size of a one-file task (a copy of a file, a download), learnt when its unit runs. */
export async function setTotalBytes(db: Database, taskId: string, bytes: number): Promise<void> {
  await db.update(tasks).set({ totalBytes: bytes }).where(eq(tasks.id, taskId));
}

export type Outcome = { state: "done"; bytes: number } | { state: "failed" | "canceled"; error: string };

/**
 * Ends a unit, and its task when nothing of it is left open: canceled if asked, failed if a unit
 * failed, else succeeded; a move whose copy all arrived gets its removal unit first. `before`
 * and `after` run in the same transaction (a walk's children; the index's changes). Answers the
 * units to send.
 */
export async function settleUnit(
  db: Database,
  unit: UnitRow,
  outcome: Outcome,
  before: BatchItem<"sqlite">[] = [],
  after: BatchItem<"sqlite">[] = [],
): Promise<{ before: unknown[]; follow: UnitTicket[] }> {
  const now = Date.now();
  const done = outcome.state === "done";
  const error = done ? "" : outcome.error;
  const results = await runBatch(db, [
    ...before,
    db
      .update(tasks)
      .set({
        doneBytes: sql`${tasks.doneBytes} + (${done ? outcome.bytes : 0} - (SELECT ${taskUnits.bytesDone} FROM ${taskUnits} WHERE ${taskUnits.id} = ${unit.id}))`,
        unitsDone: sql`${tasks.unitsDone} + ${done ? 1 : 0}`,
        error:
          outcome.state === "failed"
            ? sql`CASE WHEN ${tasks.error} = '' THEN ${error} ELSE ${tasks.error} END`
            : tasks.error,
      })
      .where(and(eq(tasks.id, unit.taskId), ownsUnit(unit))),
    db
      .update(taskUnits)
      .set({ state: outcome.state, error, bytesDone: done ? outcome.bytes : 0 })
      .where(stillMine(unit)),
    // A move removes its source once every byte of it arrived (OpenList internal/task_group/group.go:57-82).
    db.all<UnitTicket>(sql`
      INSERT INTO ${taskUnits} (task_id, kind, payload, state, ticket, lease_until_ms)
      SELECT ${tasks.id}, 'remove', json_object('path', json_extract(${tasks.payload}, '$.from'), 'index', json(json_extract(${tasks.payload}, '$.index'))), 'queued', 0, ${now + QUEUED_LEASE_MS}
      FROM ${tasks}
      WHERE ${tasks.id} = ${unit.taskId} AND ${tasks.kind} = 'move' AND ${tasks.cancelRequested} = 0
        AND ${tasks.error} = '' AND NOT ${openUnitsOf(unit.taskId)}
        AND NOT EXISTS (SELECT 1 FROM ${taskUnits} WHERE ${taskUnits.taskId} = ${unit.taskId} AND ${taskUnits.kind} = 'remove')
      RETURNING id, ticket`),
    db
      .update(tasks)
      .set({ unitsTotal: sql`(SELECT count(*) FROM ${taskUnits} WHERE ${taskUnits.taskId} = ${unit.taskId})` })
      .where(and(eq(tasks.id, unit.taskId), eq(tasks.kind, "move"))),
    db
      .update(tasks)
      .set({
        state: sql`CASE WHEN ${tasks.cancelRequested} THEN ${TaskState.CANCELED} WHEN ${tasks.error} != '' THEN ${TaskState.FAILED} ELSE ${TaskState.SUCCEEDED} END`,
        error: sql`CASE WHEN ${tasks.cancelRequested} THEN ${CANCELED} ELSE ${tasks.error} END`,
        endedAtMs: now,
      })
      .where(and(eq(tasks.id, unit.taskId), inArray(tasks.state, UNDONE_STATES), sql`NOT ${openUnitsOf(unit.taskId)}`)),
    ...after,
  ]);
  return { before: results.slice(0, before.length), follow: results[before.length + 2] as UnitTicket[] };
}

/**
 * Puts a unit back in the queue under a new ticket, with `payload` (a big file's parts so far) and
 * `bytes` counted (what stays written). Answers the unit to send, or null when it is no longer this
 * worker's to requeue.
 */
export async function requeueUnit(
  db: Database,
  unit: UnitRow,
  change: { payload?: Record<string, unknown>; bytes: number; error?: string; resetAttempts?: boolean },
): Promise<UnitTicket | null> {
  const [, [next]] = (await runBatch(db, [
    countBytes(db, unit, change.bytes),
    db
      .update(taskUnits)
      .set({
        state: "queued",
        ticket: sql`${taskUnits.ticket} + 1`,
        leaseUntilMs: Date.now() + QUEUED_LEASE_MS,
        bytesDone: change.bytes,
        error: change.error ?? "",
        ...(change.payload ? { payload: change.payload } : {}),
        ...(change.resetAttempts ? { attempts: 0 } : {}),
      })
      .where(stillMine(unit))
      .returning({ id: taskUnits.id, ticket: taskUnits.ticket }),
  ])) as [unknown, UnitTicket[]];
  return next ?? null;
}

/** Children of a walk: inserted, counted into the task, in the walk's settling transaction. */
export function childUnits(
  db: Database,
  taskId: string,
  children: { kind: string; payload: Record<string, unknown> }[],
  bytes: number,
): BatchItem<"sqlite">[] {
  const now = Date.now();
  const inserts: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < children.length; i += 100)
    inserts.push(
      db
        .insert(taskUnits)
        .values(children.slice(i, i + 100).map((child) => ({ taskId, ...child, leaseUntilMs: now + QUEUED_LEASE_MS })))
        .returning({ id: taskUnits.id, ticket: taskUnits.ticket }),
    );
  return [
    ...inserts,
    db
      .update(tasks)
      .set({
        unitsTotal: sql`${tasks.unitsTotal} + ${children.length}`,
        totalBytes: sql`${tasks.totalBytes} + ${bytes}`,
      })
      .where(eq(tasks.id, taskId)),
  ];
}

/** The units whose lease ran out (their worker died, or their message was lost), oldest first. */
export async function expiredUnits(db: Database, now: number, limit: number): Promise<UnitRow[]> {
  return db
    .select()
    .from(taskUnits)
    .where(and(inArray(taskUnits.state, OPEN), sql`${taskUnits.leaseUntilMs} < ${now}`))
    .orderBy(asc(taskUnits.leaseUntilMs))
    .limit(limit);
}

/** Queued units sent again under a new ticket (their message was lost); their bytes stay as counted. */
export async function resendQueued(db: Database, ids: number[]): Promise<UnitTicket[]> {
  if (ids.length === 0) return [];
  return db
    .update(taskUnits)
    .set({ ticket: sql`${taskUnits.ticket} + 1`, leaseUntilMs: Date.now() + QUEUED_LEASE_MS })
    .where(and(inArray(taskUnits.id, ids), eq(taskUnits.state, "queued")))
    .returning({ id: taskUnits.id, ticket: taskUnits.ticket });
}
