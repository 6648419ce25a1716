// Every query of the WebDAV server. A request reads, in ONE batch: the caller (Basic credentials
// or the permanent token), the file side's tree, metas and settings, and the locks and dead
// properties of the paths it touches (docs/decisions.md D9.1). Writes to locks and properties are a
// second round trip, made only when there is something to write.
import { and, eq, gt, lt, or, type Placeholder, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { BatchItem } from "drizzle-orm/batch";
import { KEY_TOUCH_SECONDS, type KeyRow } from "../../auth/access-keys.ts";
import { keyColumns, rolesOf, type RoleRow, type UserRow } from "../../auth/store.ts";
import type { Database } from "../../db/client.ts";
import { keptQuery } from "../../db/kept.ts";
import { runBatch } from "../../db/plan.ts";
import { appPasswords, davLocks, davProperties, loginFailures, users } from "../../db/schema.ts";
import { reserveAttempt } from "../auth/store.ts";
import type { FailureCounts } from "../../auth/lockout.ts";
import { pathChain, subtreeRange } from "../fs/path.ts";

export type LockRow = typeof davLocks.$inferSelect;
export type PropertyRow = typeof davProperties.$inferSelect;

/** The locks and dead properties a request needs, by full path. */
export interface DavNeeds {
  /** Paths whose locks matter: the locks on each path's chain and below it. */
  locked: string[];
  /** The path whose dead properties are read (null for none); `members` adds its children's (PROPFIND depth 1). */
  properties: string | null;
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

// A subtree is a range of the path index (subtreeRange): a read or a removal visits its rows, not
// the table's. Lengths are SQLite's (characters), never JavaScript's (UTF-16 units): a name with a
// character past U+FFFF is one character to substr() but two units to String.length.
const within = (column: SQL | SQLiteColumn, prefix: unknown, upper: unknown) =>
  sql`(${column} >= ${prefix} AND ${column} < ${upper})`;
/** A path and every path below it. */
const below = (column: SQL | SQLiteColumn, path: string) => {
  if (path === "/") return sql`1`;
  const { prefix, upper } = subtreeRange(path);
  return sql`(${column} = ${path} OR ${within(column, prefix, upper)})`;
};

// The reads of every request, built once per isolate (src/db/kept.ts, docs/decisions.md D25.9):
// paths travel as values, the variable lists as JSON arrays.
/** Live locks on any path of the JSON array `chains`, or at or below any of the array `trees`. */
const liveLocks = keptQuery(["now", "chains", "trees"], (db, v) =>
  db
    .select()
    .from(davLocks)
    .where(
      and(
        gt(davLocks.expiresAt, v.now),
        sql`(${davLocks.path} IN (SELECT value FROM json_each(${v.chains})) OR EXISTS (SELECT 1 FROM json_each(${v.trees}) WHERE value = '/' OR ${davLocks.path} = value OR substr(${davLocks.path}, 1, length(value) + 1) = value || '/'))`,
      ),
    ),
);
const propertiesAt = keptQuery(["path"], (db, v) =>
  db.select().from(davProperties).where(eq(davProperties.path, v.path)),
);
/** The properties of a folder and of its children (`prefix` and `upper`: its subtreeRange). */
const propertiesWithMembers = keptQuery(["path", "prefix", "upper"], (db, v) =>
  db
    .select()
    .from(davProperties)
    .where(
      or(
        eq(davProperties.path, v.path),
        sql`(${within(davProperties.path, v.prefix, v.upper)} AND ${davProperties.path} <> '/' AND instr(substr(${davProperties.path}, length(${v.prefix}) + 1), '/') = 0)`,
      ),
    ),
);
/** How many properties lie at or below a path (for "/", the range holds every path). */
const propertiesBelow = keptQuery(["path", "prefix", "upper"], (db, v) =>
  db
    .select({ count: sql<number>`count(*)` })
    .from(davProperties)
    .where(sql`(${davProperties.path} = ${v.path} OR ${within(davProperties.path, v.prefix, v.upper)})`),
);

/** The reads of `needs`, to travel in the caller's batch. */
export function davReads(db: Database, needs: DavNeeds, now: number) {
  const chains = [...new Set(needs.locked.flatMap(pathChain))];
  const locks = liveLocks(db, {
    now,
    chains: JSON.stringify(chains.length > 0 ? chains : ["/"]),
    trees: JSON.stringify(needs.locked),
  });
  const at = needs.properties ?? "";
  const properties =
    needs.members && needs.properties !== null
      ? propertiesWithMembers(db, { path: at, ...subtreeRange(at) })
      : propertiesAt(db, { path: at });
  const counts = needs.propertyTrees.map((path) => propertiesBelow(db, { path, ...subtreeRange(path) }));
  return [locks, properties, ...counts] as const;
}

export function toDavRows([locks, properties, ...counts]: unknown[]): DavRows {
  return {
    locks: locks as LockRow[],
    properties: properties as PropertyRow[],
    propertyCounts: (counts as { count: number }[][]).map((rows) => rows[0]?.count ?? 0),
  };
}

// The sign-in's reads, built once per isolate too (docs/decisions.md D25.9).
const userIdOf = (username: Placeholder) =>
  sql`(SELECT ${users.id} FROM ${users} WHERE ${users.username} = ${username})`;
/** A key of the user with this hash, made since the user's last password change. */
const keyMatching = (username: Placeholder, hash: Placeholder) =>
  and(
    eq(appPasswords.userId, userIdOf(username)),
    eq(appPasswords.hash, hash),
    eq(
      appPasswords.passwordChangedAt,
      sql`(SELECT ${users.passwordChangedAt} FROM ${users} WHERE ${users.username} = ${username})`,
    ),
  );
/** The failures of a scope's subject in their window, plus this attempt (as reserveAttempt counts it). */
const failureCount = keptQuery(["scope", "subject", "now"], (db, v) =>
  db
    .select({ count: sql<number>`${loginFailures.count} + 1` })
    .from(loginFailures)
    .where(
      and(eq(loginFailures.scope, v.scope), eq(loginFailures.subject, v.subject), gt(loginFailures.expiresAt, v.now)),
    ),
);
const userNamed = keptQuery(["username"], (db, v) => db.select().from(users).where(eq(users.username, v.username)));
const rolesOfNamed = keptQuery(["username"], (db, v) => rolesOf(db, userIdOf(v.username)));
const keyOfNamed = keptQuery(["username", "hash"], (db, v) =>
  db.select(keyColumns).from(appPasswords).where(keyMatching(v.username, v.hash)),
);
/** The key's last use, moved when older than `before`. */
const touchKey = keptQuery(["username", "hash", "now", "before"], (db, v) =>
  db
    .update(appPasswords)
    .set({ lastUsedAt: sql`${v.now}` })
    .where(and(keyMatching(v.username, v.hash), lt(appPasswords.lastUsedAt, v.before))),
);

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
  const counted = (scope: "ip" | "user", subject: string) =>
    read.reserve ? reserveAttempt(db, scope, subject, read.now) : failureCount(db, { scope, subject, now: read.now });
  const key = { username: read.username, hash: read.appPasswordHash ?? "" };
  // An account password finds no app password (no hash is ""), and writes nothing.
  const touch =
    read.appPasswordHash === null || !read.touch
      ? []
      : [touchKey(db, { ...key, now: read.now, before: read.now - KEY_TOUCH_SECONDS })];
  const results = await runBatch(db, [
    counted("ip", read.ip),
    counted("user", read.username),
    userNamed(db, { username: read.username }),
    rolesOfNamed(db, { username: read.username }),
    keyOfNamed(db, key),
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
  const rest = sql`substr(${davProperties.path}, length(${from}) + 1)`;
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
