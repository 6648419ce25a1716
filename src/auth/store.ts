// Every query the auth guard runs. Each function is one round trip (one batch).
import { and, asc, eq, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client.ts";
import type { AccessKeyUsage } from "../db/schema.ts";
import { keptQuery } from "../db/kept.ts";
import { runBatch } from "../db/plan.ts";
import {
  appPasswords,
  deviceSessions,
  DeviceSessionStatus,
  loginFailures,
  roles,
  settings,
  users,
} from "../db/schema.ts";
import { FAILURE_WINDOW_SECONDS, MAX_FAILURES } from "./lockout.ts";
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "./roles.ts";
import type { TokenClaims } from "./tokens.ts";

export type UserRow = typeof users.$inferSelect;
export type RoleRow = typeof roles.$inferSelect;

/** What the guard reads of a key. */
export interface KeyRow {
  id: number;
  userId: number;
  path: string;
  permission: number;
  expiresAt: number;
  usage: AccessKeyUsage[];
  passwordChangedAt: number;
}
type DeviceSessionRow = typeof deviceSessions.$inferSelect;

/**
 * Reads a route hands to the guard so they travel in the guard's own batch: one round trip for
 * the caller and the route's data. Their results come back in the same order.
 */
type ExtraReads = readonly BatchItem<"sqlite">[];

/**
 * A route's reads, or a function that builds them from the caller's user id as a scalar subquery
 * (own sessions, own keys: data of whoever the guard finds) and `callerIsAdmin` (see
 * sessionIsAdmin), resolved in the same batch.
 */
export type CallerReads = ExtraReads | ((callerId: SQL, callerIsAdmin: SQL) => ExtraReads);

const readsFor = (extra: CallerReads, callerId: SQL, callerIsAdmin: SQL = NOT_ADMIN) =>
  typeof extra === "function" ? extra(callerId, callerIsAdmin) : extra;

/** A `callerIsAdmin` that never holds: writes conditioned on it wait for the guard's decision in the Worker. */
export const NOT_ADMIN = sql`0`;

/** The roles of the user selected by `userId` (a scalar subquery), in role-id order. */
export function rolesOf(db: Database, userId: SQL) {
  return db
    .select()
    .from(roles)
    .where(
      sql`${roles.id} IN (SELECT value FROM json_each((SELECT ${users.roleIds} FROM ${users} WHERE ${users.id} = ${userId})))`,
    )
    .orderBy(asc(roles.id));
}

/** The user of the session a token names (a scalar subquery). */
const sessionUserOf = (sid: unknown) =>
  sql`(SELECT ${deviceSessions.userId} FROM ${deviceSessions} WHERE ${deviceSessions.deviceKey} = ${sid})`;

/**
 * The `last_active` touch: it only lands when the token is still good (session active and
 * holding this token id, user enabled with the same password timestamp) and at most once a
 * second per session.
 */
const touchSession = keptQuery(["now", "userAgent", "ip", "sid", "jti", "username", "pwdTs"], (db, v) =>
  db
    .update(deviceSessions)
    .set({ lastActive: sql`${v.now}`, userAgent: sql`${v.userAgent}`, ip: sql`${v.ip}` })
    .where(
      and(
        eq(deviceSessions.deviceKey, v.sid),
        eq(deviceSessions.tokenId, v.jti),
        eq(deviceSessions.status, DeviceSessionStatus.ACTIVE),
        lt(deviceSessions.lastActive, v.now),
        inArray(
          deviceSessions.userId,
          db
            .select({ id: users.id })
            .from(users)
            .where(
              and(eq(users.username, v.username), eq(users.disabled, false), eq(users.passwordChangedAt, v.pwdTs)),
            ),
        ),
      ),
    ),
);
const sessionByKey = keptQuery(["sid"], (db, v) =>
  db.select().from(deviceSessions).where(eq(deviceSessions.deviceKey, v.sid)),
);
const sessionUser = keptQuery(["sid"], (db, v) =>
  db
    .select()
    .from(users)
    .where(eq(users.id, sessionUserOf(v.sid))),
);
const sessionUserRoles = keptQuery(["sid"], (db, v) => rolesOf(db, sessionUserOf(v.sid)));

/**
 * Whether a token's caller is an admin, as SQL a route's writes in the guard's batch are
 * conditioned on, so that nothing is written for a caller the guard refuses: the same conditions
 * as the guard's own checks of the rows it reads (guard.ts sessionCaller) and requireAdmin's.
 * Session active and holding this token id; user enabled, with the token's username and password
 * timestamp; the admin role among the user's.
 */
const sessionIsAdmin = (claims: TokenClaims) =>
  sql`EXISTS (SELECT 1 FROM ${deviceSessions} JOIN ${users} ON ${users.id} = ${deviceSessions.userId} WHERE ${deviceSessions.deviceKey} = ${claims.sid} AND ${deviceSessions.tokenId} = ${claims.jti} AND ${deviceSessions.status} = ${DeviceSessionStatus.ACTIVE} AND ${users.username} = ${claims.username} AND ${users.disabled} = 0 AND ${users.passwordChangedAt} = ${claims.pwd_ts} AND EXISTS (SELECT 1 FROM json_each(${users.roleIds}) WHERE value = ${ADMIN_ROLE_ID}))`;

/**
 * A token's caller subqueries (sessionUserOf, sessionIsAdmin), built once per verified token: its
 * claims are one frozen object for as long as the isolate keeps the token (tokens.ts verifyToken),
 * and the SQL a route embeds them in only reads them.
 */
const callerSql = new WeakMap<TokenClaims, [SQL, SQL]>();
function callerSqlOf(claims: TokenClaims): [SQL, SQL] {
  let kept = callerSql.get(claims);
  if (!kept) {
    kept = [sessionUserOf(claims.sid), sessionIsAdmin(claims)];
    callerSql.set(claims, kept);
  }
  return kept;
}

/** A JWT's session, user and roles, and the `last_active` touch, in one batch. */
export async function readTokenSession(
  db: Database,
  claims: TokenClaims,
  seen: { now: number; userAgent: string; ip: string },
  extra: CallerReads = [],
) {
  const { sid } = claims;
  const [, [session], [user], userRoles, ...extraResults] = (await runBatch(db, [
    touchSession(db, { ...seen, sid, jti: claims.jti, username: claims.username, pwdTs: claims.pwd_ts }),
    sessionByKey(db, { sid }),
    sessionUser(db, { sid }),
    sessionUserRoles(db, { sid }),
    // The caller's subqueries are built only for a route that reads with them.
    ...(typeof extra === "function" ? extra(...callerSqlOf(claims)) : extra),
  ])) as [unknown, DeviceSessionRow[], UserRow[], RoleRow[], ...unknown[]];
  return { session, user, roles: userRoles, extra: extraResults };
}

/** The admin's id as a scalar subquery: the first user holding the admin role, whatever it is called. */
export const firstAdminId = () =>
  sql`(SELECT ${users.id} FROM ${users} WHERE EXISTS (SELECT 1 FROM json_each(${users.roleIds}) WHERE value = ${ADMIN_ROLE_ID}) ORDER BY ${users.id} LIMIT 1)`;

/** The permanent token, and the admin it stands for (firstAdminId). */
export async function readPermanentTokenAdmin(db: Database, extra: CallerReads = []) {
  const adminId = firstAdminId();
  const [[token], [admin], adminRoles, ...extraResults] = (await runBatch(db, [
    db.select({ value: settings.value }).from(settings).where(eq(settings.key, "token")),
    db.select().from(users).where(eq(users.id, adminId)),
    rolesOf(db, adminId),
    ...readsFor(extra, adminId),
  ])) as [{ value: string }[], UserRow[], RoleRow[], ...unknown[]];
  return { token: token?.value ?? "", admin, roles: adminRoles, extra: extraResults };
}

/** The guest account (the first user holding the guest role) and its roles. */
export async function readGuest(db: Database, extra: CallerReads = []) {
  const guestId = sql`(SELECT ${users.id} FROM ${users} WHERE EXISTS (SELECT 1 FROM json_each(${users.roleIds}) WHERE value = ${GUEST_ROLE_ID}) ORDER BY ${users.id} LIMIT 1)`;
  const [[guest], guestRoles, ...extraResults] = (await runBatch(db, [
    db.select().from(users).where(eq(users.id, guestId)),
    rolesOf(db, guestId),
    ...readsFor(extra, guestId),
  ])) as [UserRow[], RoleRow[], ...unknown[]];
  return { guest, roles: guestRoles, extra: extraResults };
}

/** The columns of a key the guard reads (auth/access-keys.ts KeyRow). */
export const keyColumns = {
  id: appPasswords.id,
  userId: appPasswords.userId,
  path: appPasswords.path,
  permission: appPasswords.permission,
  expiresAt: appPasswords.expiresAt,
  usage: appPasswords.usage,
  passwordChangedAt: appPasswords.passwordChangedAt,
};

/**
 * An access key presented as a token (docs/decisions.md D16): the live failures of the client's
 * address, the key with this hash, its user and roles, and `extra`, in one batch. `touch` adds the
 * last-use update, which lands only for a key still good whose last use is older than
 * KEY_TOUCH_SECONDS (D16.4). A key never stands for an admin: `callerIsAdmin` is never true.
 */
export function readKeyCaller(
  db: Database,
  read: { hash: string; ip: string; now: number; touch: number | null },
  extra: CallerReads = [],
) {
  return readKeyBy(db, eq(appPasswords.hash, read.hash), read, extra);
}

/**
 * The same batch for a key named by its S3 access key id (features/s3, docs/decisions.md D22),
 * with its sealed S3 secret: SigV4 needs the secret in clear to check a signature.
 */
export function readS3KeyCaller(
  db: Database,
  read: { accessKeyId: string; ip: string; now: number; touch: number | null },
  extra: CallerReads = [],
) {
  return readKeyBy(db, eq(appPasswords.accessKeyId, read.accessKeyId), read, extra);
}

async function readKeyBy(
  db: Database,
  match: SQL,
  read: { ip: string; now: number; touch: number | null },
  extra: CallerReads,
) {
  const keyUserId = sql`(SELECT ${appPasswords.userId} FROM ${appPasswords} WHERE ${match})`;
  const touch =
    read.touch === null
      ? []
      : [
          db
            .update(appPasswords)
            .set({ lastUsedAt: read.now })
            .where(
              and(
                match,
                lt(appPasswords.lastUsedAt, read.now - read.touch),
                sql`(${appPasswords.expiresAt} = 0 OR ${appPasswords.expiresAt} > ${read.now})`,
              ),
            ),
        ];
  const results = await runBatch(db, [
    db
      .select({ count: loginFailures.count })
      .from(loginFailures)
      .where(
        and(
          eq(loginFailures.scope, "ip"),
          eq(loginFailures.subject, read.ip),
          sql`${loginFailures.expiresAt} > ${read.now}`,
        ),
      ),
    db
      .select({ ...keyColumns, s3Secret: appPasswords.s3Secret })
      .from(appPasswords)
      .where(match),
    db.select().from(users).where(eq(users.id, keyUserId)),
    rolesOf(db, keyUserId),
    ...touch,
    ...readsFor(extra, keyUserId, NOT_ADMIN),
  ]);
  results.splice(4, touch.length);
  const [ipCount, [key], [user], userRoles, ...extraResults] = results as [
    { count: number }[],
    (KeyRow & { s3Secret: string | null })[],
    UserRow[],
    RoleRow[],
    ...unknown[],
  ];
  const { s3Secret = null, ...row } = key ?? {};
  return {
    failures: { ip: ipCount[0]?.count ?? 0, user: 0 },
    key: key ? (row as KeyRow) : undefined,
    s3Secret,
    user,
    roles: userRoles,
    extra: extraResults,
  };
}

/** Whose failures a row counts: sign-ins per address and username; share codes per address and share. */
export type LockoutScope = (typeof loginFailures.$inferInsert)["scope"];

/**
 * Counts this attempt against the address or the username before any password work, and returns
 * the count including it: one statement, so parallel attempts each see a different count. The
 * count stops at MAX_FAILURES + 1 and the window stops moving once the limit is reached, so
 * refused attempts neither pile up nor keep the lockout alive (it ends 5 minutes after the
 * attempt that reached the limit). A window that ended starts again at 1.
 */
export function reserveAttempt(db: Database, scope: LockoutScope, subject: string, now: number) {
  return reserveAttemptQuery(db, { scope, subject, now, expiresAt: now + FAILURE_WINDOW_SECONDS });
}

const reserveAttemptQuery = keptQuery(["scope", "subject", "now", "expiresAt"], (db, v) => {
  const live = sql`${loginFailures.expiresAt} > ${v.now}`;
  return db
    .insert(loginFailures)
    .values({ scope: sql`${v.scope}`, subject: sql`${v.subject}`, count: 1, expiresAt: sql`${v.expiresAt}` })
    .onConflictDoUpdate({
      target: [loginFailures.scope, loginFailures.subject],
      set: {
        count: sql`CASE WHEN ${live} THEN min(${loginFailures.count} + 1, ${MAX_FAILURES + 1}) ELSE 1 END`,
        expiresAt: sql`CASE WHEN ${live} AND ${loginFailures.count} >= ${MAX_FAILURES} THEN ${loginFailures.expiresAt} ELSE ${v.expiresAt} END`,
      },
    })
    .returning({ count: loginFailures.count });
});
