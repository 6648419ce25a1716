// Every query the auth guard runs. Each function is one round trip (one batch).
import { and, asc, eq, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client.ts";
import { keptQuery } from "../db/kept.ts";
import { runBatch } from "../db/plan.ts";
import { deviceSessions, DeviceSessionStatus, roles, settings, users } from "../db/schema.ts";
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "./roles.ts";
import type { TokenClaims } from "./tokens.ts";

export type UserRow = typeof users.$inferSelect;
export type RoleRow = typeof roles.$inferSelect;
export type DeviceSessionRow = typeof deviceSessions.$inferSelect;

/**
 * Reads a route hands to the guard so they travel in the guard's own batch: one round trip for
 * the caller and the route's data. Their results come back in the same order.
 */
export type ExtraReads = readonly BatchItem<"sqlite">[];

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
    ...readsFor(extra, sessionUserOf(sid), sessionIsAdmin(claims)),
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
