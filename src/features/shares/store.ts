// Every query of share links. Managing a share is one read or one write after the guard; using one
// (browsing under /@s, downloading from /sd) reads the share, its creator with the creator's roles,
// the file side's metas and settings, and the code failures in ONE batch, then the tree of the
// shared path like any file request; a download counts itself with one UPDATE (countDownload).
import { and, eq, gt, gte, or, sql, type SQL } from "drizzle-orm";
import { rolesOf, type RoleRow, type UserRow } from "../../auth/store.ts";
import type { Database } from "../../db/client.ts";
import { plan, runBatch } from "../../db/plan.ts";
import { ADMIN_ROLE_ID } from "../../auth/roles.ts";
import { loginFailures, shares, users } from "../../db/schema.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { reserveAttempt } from "../auth/store.ts";
import { fsStateReads } from "../fs/store.ts";
import type { FailureCounts } from "../../auth/lockout.ts";
import type { FsState } from "../fs/state.ts";

export type ShareRow = typeof shares.$inferSelect;
export type ShareFields = Omit<ShareRow, "id" | "creatorId" | "accessed">;

/** What decides whether a share may be used now (rules.ts requireUsable), read in one round trip. */
export interface ShareUse {
  share: ShareRow | undefined;
  creator: UserRow | undefined;
  roles: RoleRow[];
  state: FsState;
  failures: FailureCounts;
}

/** A share with its creator's name and roles, as the management replies show it. */
export interface OwnedShare {
  share: ShareRow;
  creator: UserRow;
}

const withCreator = (db: Database) =>
  db.select({ share: shares, creator: users }).from(shares).innerJoin(users, eq(users.id, shares.creatorId));

/** Whether the caller (`callerId`, a scalar subquery) holds the admin role. */
const holdsAdmin = (callerId: SQL) =>
  sql`EXISTS (SELECT 1 FROM ${users} AS caller, json_each(caller.role) WHERE caller.id = ${callerId} AND json_each.value = ${ADMIN_ROLE_ID})`;

/**
 * Shares the caller manages: its own, every share for an admin. Read in the guard's batch: the
 * caller's roles are checked in SQL, as the guard checks them in the Worker. For one share (found
 * by its id) the OR costs nothing; for a page, see ownShares.
 */
const managedBy = (callerId: SQL) => or(eq(shares.creatorId, callerId), holdsAdmin(callerId));

// A page reads the shares the caller manages as two halves, each by an index and one of them empty:
// a user's own by creator, and for an admin every share by id. One condition that depends on the
// caller (managedBy's OR) keeps SQLite from either index, so a user's page walked every share of
// the deployment. A half is emptied by a NULL bound, which reads no row (and every id is at or
// above '', the least text).
const ownShares = (callerId: SQL) =>
  eq(shares.creatorId, sql`(CASE WHEN ${holdsAdmin(callerId)} THEN NULL ELSE ${callerId} END)`);
const everyShare = (callerId: SQL) => gte(shares.id, sql`(CASE WHEN ${holdsAdmin(callerId)} THEN '' END)`);

/** How many shares the caller manages: the halves' counts, each by its index. */
const managedCount = (callerId: SQL) =>
  sql<number>`(SELECT count(*) FROM ${shares} WHERE ${ownShares(callerId)}) + (SELECT count(*) FROM ${shares} WHERE ${everyShare(callerId)})`.mapWith(
    Number,
  );

/** One page of the shares the caller manages, by id, and how many there are. */
export function sharePage(db: Database, callerId: SQL, window: { limit: number; offset: number }) {
  return plan(
    [
      withCreator(db)
        .where(ownShares(callerId))
        .unionAll(withCreator(db).where(everyShare(callerId)))
        // By the first result column, the share's id: a compound select is ordered by its result
        // columns, and "id" alone would name the creator's too.
        .orderBy(sql`1`)
        .limit(window.limit)
        .offset(window.offset),
      db.select({ total: managedCount(callerId) }).from(sql`(SELECT 1)`),
    ],
    ([rows, [total]]) => ({ rows: rows as OwnedShare[], total: total?.total ?? 0 }),
  );
}

/** One share the caller manages, with its creator; undefined when absent or someone else's. */
export function managedShare(db: Database, callerId: SQL, id: string) {
  return plan(
    [withCreator(db).where(and(eq(shares.id, id), managedBy(callerId)))],
    ([[row]]) => row as OwnedShare | undefined,
  );
}

/** One share with its creator; undefined when absent or (`creatorId` given) someone else's. */
export async function findShare(db: Database, id: string, creatorId: number | null): Promise<OwnedShare | undefined> {
  const [row] = await withCreator(db).where(
    and(eq(shares.id, id), creatorId === null ? undefined : eq(shares.creatorId, creatorId)),
  );
  return row;
}

/** Inserts a share; false when the id is taken. */
export async function insertShare(db: Database, row: ShareRow): Promise<boolean> {
  try {
    await db.insert(shares).values(row);
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/**
 * Overwrites the fields of share `id` (and its id, with `newId`) when it is `creatorId`'s (any
 * share when null). The access counter is left alone: the web UI posts back the value it read.
 * "missing" when no such share, "taken" when `newId` is another share's.
 */
export async function updateShare(
  db: Database,
  id: string,
  creatorId: number | null,
  fields: ShareFields,
  newId: string,
): Promise<"updated" | "missing" | "taken"> {
  try {
    const changed = await db
      .update(shares)
      .set({ ...fields, id: newId })
      .where(and(eq(shares.id, id), creatorId === null ? undefined : eq(shares.creatorId, creatorId)))
      .returning({ id: shares.id });
    return changed.length > 0 ? "updated" : "missing";
  } catch (error) {
    if (isUniqueViolation(error)) return "taken";
    throw error;
  }
}

const ownedBy = (id: string, creatorId: number | null) =>
  and(eq(shares.id, id), creatorId === null ? undefined : eq(shares.creatorId, creatorId));

export async function deleteShare(db: Database, id: string, creatorId: number | null): Promise<boolean> {
  return (await db.delete(shares).where(ownedBy(id, creatorId)).returning({ id: shares.id })).length > 0;
}

export async function setShareDisabled(
  db: Database,
  id: string,
  creatorId: number | null,
  disabled: boolean,
): Promise<boolean> {
  const changed = await db.update(shares).set({ disabled }).where(ownedBy(id, creatorId)).returning({ id: shares.id });
  return changed.length > 0;
}

const liveFailures = (scope: "share" | "share_ip", subject: string, now: number) =>
  and(eq(loginFailures.scope, scope), eq(loginFailures.subject, subject), gt(loginFailures.expiresAt, now));

/** What using a share needs (rules.ts requireUsable, checkCode), read in one round trip. */
export async function readShareInUse(db: Database, id: string, ip: string): Promise<ShareUse> {
  const now = Math.floor(Date.now() / 1000);
  const creatorId: SQL = sql`(SELECT ${shares.creatorId} FROM ${shares} WHERE ${shares.id} = ${id})`;
  const fs = fsStateReads(db, { paths: [], folders: [] });
  const [[row], roles, failures, ...fsResults] = (await runBatch(db, [
    withCreator(db).where(eq(shares.id, id)),
    rolesOf(db, creatorId),
    db
      .select({ scope: loginFailures.scope, count: loginFailures.count })
      .from(loginFailures)
      .where(or(liveFailures("share_ip", ip, now), liveFailures("share", id, now))),
    ...fs.reads,
  ])) as [OwnedShare[], RoleRow[], { scope: string; count: number }[], ...unknown[]];
  const countOf = (scope: string) => failures.find((f) => f.scope === scope)?.count ?? 0;
  return {
    share: row?.share,
    creator: row?.creator,
    roles,
    state: fs.toState(fsResults),
    failures: { ip: countOf("share_ip"), user: countOf("share") },
  };
}

/** A wrong share code: counted against the address and the share, as a failed sign-in is (auth/lockout.ts). */
export async function countWrongCode(db: Database, id: string, ip: string): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await db.batch([reserveAttempt(db, "share_ip", ip, now), reserveAttempt(db, "share", id, now)]);
}

/**
 * Counts one delivered download, in one statement: it lands only while the share still exists, is
 * enabled, unexpired and under its limit, so parallel downloads of a share with `max_accessed` 1
 * get exactly one row back between them. False: the download must not be delivered.
 */
export async function countDownload(db: Database, id: string, now = Date.now()): Promise<boolean> {
  const counted = await db
    .update(shares)
    .set({ accessed: sql`${shares.accessed} + 1` })
    .where(
      and(
        eq(shares.id, id),
        eq(shares.disabled, false),
        sql`(${shares.expiresAtMs} IS NULL OR ${shares.expiresAtMs} > ${now})`,
        sql`(${shares.maxAccessed} = 0 OR ${shares.accessed} < ${shares.maxAccessed})`,
      ),
    )
    .returning({ accessed: shares.accessed });
  return counted.length > 0;
}

/** Gives back the count of a download that failed before it was delivered. */
export async function uncountDownload(db: Database, id: string): Promise<void> {
  await db
    .update(shares)
    .set({ accessed: sql`max(${shares.accessed} - 1, 0)` })
    .where(eq(shares.id, id));
}
