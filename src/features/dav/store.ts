// Every query of the WebDAV server. A request reads, in ONE batch: the caller (Basic credentials
// or the permanent token), the file side's tree, metas and settings, and the locks and dead
// properties of the paths it touches (docs/decisions.md D9.1). Writes to locks and properties are a
// second round trip, made only when there is something to write.
import { and, eq, gt, inArray, or, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { BatchItem } from "drizzle-orm/batch";
import { KEY_TOUCH_SECONDS, type KeyRow } from "../../auth/access-keys.ts";
import { keyColumns, rolesOf, type RoleRow, type UserRow } from "../../auth/store.ts";
import type { Database } from "../../db/client.ts";
import { runBatch } from "../../db/plan.ts";
import { appPasswords, davLocks, davProperties, loginFailures, users } from "../../db/schema.ts";
import { reserveAttempt } from "../auth/store.ts";
import type { FailureCounts } from "../../auth/lockout.ts";
import { pathChain } from "../fs/path.ts";

export type LockRow = typeof davLocks.$inferSelect;
export type PropertyRow = typeof davProperties.$inferSelect;

/** The locks and dead properties a request needs, by full path. */
export interface DavNeeds {
  /** Paths whose locks matter: the locks on each path's chain and below it. */
  locked: string[];
  /** Paths whose dead properties are read; `members` adds those of their children (PROPFIND depth 1). */
  properties: string[];
  members: boolean;
  /** Paths whose subtree may carry properties to move, copy or delete: a count tells whether to. */
  propertyTrees: string[];
}

export interface DavRows {
  locks: LockRow[];
  properties: PropertyRow[];
  /** How many properties lie at or below each of `propertyTrees`. */
  propertyCounts: number[];
}

const below = (column: SQL | SQLiteColumn, path: string) =>
  path === "/" ? sql`1` : sql`(${column} = ${path} OR substr(${column}, 1, ${path.length + 1}) = ${`${path}/`})`;

/** The reads of `needs`, to travel in the caller's batch. */
export function davReads(db: Database, needs: DavNeeds, now: number) {
  const chains = [...new Set(needs.locked.flatMap(pathChain))];
  const locks = db
    .select()
    .from(davLocks)
    .where(
      and(
        gt(davLocks.expiresAt, now),
        or(
          inArray(davLocks.path, chains.length > 0 ? chains : ["/"]),
          ...needs.locked.map((path) => below(davLocks.path, path)),
        ),
      ),
    );
  const propertyPaths = needs.properties.length > 0 ? needs.properties : [""];
  const childOf = (path: string) => {
    const prefix = path === "/" ? "/" : `${path}/`;
    return sql`(substr(${davProperties.path}, 1, ${prefix.length}) = ${prefix} AND ${davProperties.path} <> '/' AND instr(substr(${davProperties.path}, ${prefix.length + 1}), '/') = 0)`;
  };
  const properties = db
    .select()
    .from(davProperties)
    .where(or(inArray(davProperties.path, propertyPaths), ...(needs.members ? needs.properties.map(childOf) : [])));
  const counts = needs.propertyTrees.map((path) =>
    db.select({ count: sql<number>`count(*)` }).from(davProperties).where(below(davProperties.path, path)),
  );
  return [locks, properties, ...counts] as const;
}

export function toDavRows([locks, properties, ...counts]: unknown[]): DavRows {
  return {
    locks: locks as LockRow[],
    properties: properties as PropertyRow[],
    propertyCounts: (counts as { count: number }[][]).map((rows) => rows[0]?.count ?? 0),
  };
}

/** What Basic credentials need, read with the request's other reads. */
export interface BasicRead {
  username: string;
  /** SHA-256 of the presented password, to find it among the user's app passwords; null for an account password. */
  appPasswordHash: string | null;
  ip: string;
  /**
   * Count this attempt toward the lockout before the password is checked (a PBKDF2 check follows):
   * one statement, so parallel guesses each see their own count. Otherwise the counts are only read.
   */
  reserve: boolean;
  now: number;
  /** Carry the key's last-use update (auth/guard.ts keyTouchDue; docs/decisions.md D16.4). */
  touch: boolean;
}

export interface BasicState {
  user: UserRow | undefined;
  roles: RoleRow[];
  /** The user's access key (app password) with this hash, made since the last password change. */
  appPassword: KeyRow | undefined;
  /** Failures before this attempt, live in their window. */
  failures: FailureCounts;
  extra: unknown[];
}

/**
 * The user of `username`, its roles, the app password the client presented and the lockout
 * counts, with `extra`, in one batch. An app password's `last_used_at` moves in the same batch,
 * at most once every KEY_TOUCH_SECONDS (docs/decisions.md D16.4).
 */
export async function readBasicCaller(
  db: Database,
  read: BasicRead,
  extra: readonly BatchItem<"sqlite">[],
): Promise<BasicState> {
  const userId = sql`(SELECT ${users.id} FROM ${users} WHERE ${users.username} = ${read.username})`;
  const matching = and(
    eq(appPasswords.userId, userId),
    eq(appPasswords.hash, read.appPasswordHash ?? ""),
    eq(
      appPasswords.passwordChangedAt,
      sql`(SELECT ${users.passwordChangedAt} FROM ${users} WHERE ${users.username} = ${read.username})`,
    ),
  );
  const counted = (scope: "ip" | "user", subject: string) =>
    read.reserve
      ? reserveAttempt(db, scope, subject, read.now)
      : db
          .select({ count: sql<number>`${loginFailures.count} + 1` })
          .from(loginFailures)
          .where(
            and(
              eq(loginFailures.scope, scope),
              eq(loginFailures.subject, subject),
              gt(loginFailures.expiresAt, read.now),
            ),
          );
  // An account password finds no app password (no hash is ""), and writes nothing.
  const touch =
    read.appPasswordHash === null || !read.touch
      ? []
      : [
          db
            .update(appPasswords)
            .set({ lastUsedAt: read.now })
            .where(and(matching, sql`${appPasswords.lastUsedAt} < ${read.now - KEY_TOUCH_SECONDS}`)),
        ];
  const results = await runBatch(db, [
    counted("ip", read.ip),
    counted("user", read.username),
    db.select().from(users).where(eq(users.username, read.username)),
    rolesOf(db, userId),
    db.select(keyColumns).from(appPasswords).where(matching),
    ...touch,
    ...extra,
  ]);
  results.splice(5, touch.length);
  const [ipCount, userCount, [user], roles, [appPassword], ...rest] = results as [
    { count: number }[],
    { count: number }[],
    UserRow[],
    RoleRow[],
    KeyRow[],
    ...unknown[],
  ];
  const before = (rows: { count: number }[]) => (rows[0]?.count ?? 1) - 1;
  return { user, roles, appPassword, failures: { ip: before(ipCount), user: before(userCount) }, extra: rest };
}

/** A successful sign-in clears the failures it reserved, and upgrades an imported AList hash. */
export async function clearFailures(
  db: Database,
  attempt: { ip: string; username: string; userId: number },
  upgrade: { from: string; to: string } | null,
) {
  await db.batch([
    db
      .delete(loginFailures)
      .where(
        or(
          and(eq(loginFailures.scope, "ip"), eq(loginFailures.subject, attempt.ip)),
          and(eq(loginFailures.scope, "user"), eq(loginFailures.subject, attempt.username)),
        ),
      ),
    ...(upgrade
      ? [
          db
            .update(users)
            .set({ passwordHash: upgrade.to })
            .where(and(eq(users.id, attempt.userId), eq(users.passwordHash, upgrade.from))),
        ]
      : []),
  ]);
}

/** Counts a failure that was not reserved up front (a cached credential that stopped matching). */
export async function recordFailure(db: Database, attempt: { ip: string; username: string; now: number }) {
  await db.batch([
    reserveAttempt(db, "ip", attempt.ip, attempt.now),
    reserveAttempt(db, "user", attempt.username, attempt.now),
  ]);
}

/**
 * Takes a lock unless a conflicting one is held, in one statement: an exclusive lock conflicts with
 * any lock on its path, above it (with depth infinity) or below it (when it is depth infinity); a
 * shared one with exclusive locks only. False when it conflicts.
 */
export async function insertLock(db: Database, lock: LockRow, now: number): Promise<boolean> {
  const ancestors = pathChain(lock.path).filter((path) => path !== lock.path);
  const above =
    ancestors.length === 0
      ? sql`0`
      : sql`(path IN (${sql.join(
          ancestors.map((path) => sql`${path}`),
          sql`, `,
        )}) AND depth = -1)`;
  const conflicts = sql`expires_at > ${now} AND (path = ${lock.path} OR ${above}${lock.depth === -1 ? sql` OR ${below(sql`path`, lock.path)}` : sql``})${lock.exclusive ? sql`` : sql` AND exclusive = 1`}`;
  const inserted = await db.all<{ token: string }>(sql`
    INSERT INTO ${davLocks} (token, path, depth, exclusive, owner, user_id, timeout_seconds, expires_at)
    SELECT ${lock.token}, ${lock.path}, ${lock.depth}, ${lock.exclusive ? 1 : 0}, ${lock.owner}, ${lock.userId}, ${lock.timeoutSeconds}, ${lock.expiresAt}
    WHERE NOT EXISTS (SELECT 1 FROM ${davLocks} WHERE ${conflicts})
    RETURNING token`);
  return inserted.length > 0;
}

/** Refreshes a lock's timeout; the refreshed row, or undefined when it is gone. */
export async function refreshLock(db: Database, token: string, userId: number, timeoutSeconds: number, now: number) {
  const [row] = await db
    .update(davLocks)
    .set({ timeoutSeconds, expiresAt: now + timeoutSeconds })
    .where(and(eq(davLocks.token, token), eq(davLocks.userId, userId), gt(davLocks.expiresAt, now)))
    .returning();
  return row;
}

export async function deleteLock(db: Database, token: string): Promise<boolean> {
  return (await db.delete(davLocks).where(eq(davLocks.token, token)).returning({ token: davLocks.token })).length > 0;
}

/** What a DELETE or MOVE leaves behind: the locks and properties of the tree that is gone (those it has). */
export function forgetTree(db: Database, path: string, locks: boolean, properties: boolean): BatchItem<"sqlite">[] {
  return [
    ...(locks ? [db.delete(davLocks).where(below(davLocks.path, path))] : []),
    ...(properties ? [db.delete(davProperties).where(below(davProperties.path, path))] : []),
  ];
}

/** The properties of a tree, copied (COPY) to another path; with `forgetTree` of the source, moved. */
export function copyTreeProperties(db: Database, from: string, to: string) {
  const rest = sql`substr(${davProperties.path}, ${from.length + 1})`;
  const target = from === "/" ? sql`${to} || ${davProperties.path}` : sql`${to} || ${rest}`;
  return [
    db.delete(davProperties).where(below(davProperties.path, to)),
    db.run(
      sql`INSERT INTO ${davProperties} (path, name, xml) SELECT ${target}, name, xml FROM ${davProperties} WHERE ${below(davProperties.path, from)}`,
    ),
  ];
}

/** PROPPATCH: sets and removes, in the order given, in one batch (one transaction: all or nothing). */
export async function patchProperties(
  db: Database,
  path: string,
  changes: ({ set: { name: string; xml: string } } | { remove: string })[],
) {
  const statements = changes.map((change) =>
    "set" in change
      ? db
          .insert(davProperties)
          .values({ path, name: change.set.name, xml: change.set.xml })
          .onConflictDoUpdate({ target: [davProperties.path, davProperties.name], set: { xml: change.set.xml } })
      : db.delete(davProperties).where(and(eq(davProperties.path, path), eq(davProperties.name, change.remove))),
  );
  await runBatch(db, statements);
}
