// Every query of the admin user routes; each function is one round trip. Writes carry their
// own conditions (the account's kind, the roles existing), and the rows read back in the same
// batch say why a write did not land, so no endpoint reads before it writes.
import { and, eq, getTableColumns, inArray, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../db/client.ts";
import { plan, tablePage } from "../../db/plan.ts";
import {
  deviceSessions,
  DeviceSessionStatus,
  pendingOtpEnrolments,
  roles,
  settings,
  shares,
  sshPublicKeys,
  users,
} from "../../db/schema.ts";
import { ADMIN_ROLE_ID, ALL_PERMISSIONS, GUEST_ROLE_ID } from "../../auth/roles.ts";

export type UserRow = typeof users.$inferSelect;

/**
 * The kind of the `users` row in scope. This is the one definition: writes pick by it atomically,
 * and a refused write reads it back in the same batch to say why (see `WriteResult`).
 */
/** Which of the three kinds of account a user row is (rules.ts decides what each may change). */
export type AccountKind = "admin" | "guest" | "user";

const rowKind = sql<AccountKind>`CASE
  WHEN EXISTS (SELECT 1 FROM json_each(${users.roleIds}) WHERE value = ${ADMIN_ROLE_ID}) THEN 'admin'
  WHEN EXISTS (SELECT 1 FROM json_each(${users.roleIds}) WHERE value = ${GUEST_ROLE_ID}) THEN 'guest'
  ELSE 'user' END`;

/**
 * The columns a new password writes. pwd_ts moves strictly forward from the stored value, so every
 * token carrying the old one dies, even within the same second; computed in the UPDATE itself so
 * that two changes at once cannot both land on the same timestamp.
 */
export function newPasswordColumns(password: { hash: string; now: number }) {
  return { passwordHash: password.hash, passwordChangedAt: sql`max(${password.now}, ${users.passwordChangedAt} + 1)` };
}

/** True when every id names a role. */
function rolesExist(roleIds: readonly number[]): SQL {
  if (roleIds.length === 0) return sql`1`;
  return sql`(SELECT count(*) FROM ${roles} WHERE ${inArray(roles.id, [...roleIds])}) = ${roleIds.length}`;
}

/** Which of `roleIds` exist, read alongside a write to explain a refusal. */
function existingRoleIds(db: Database, roleIds: readonly number[]) {
  return db
    .select({ id: roles.id })
    .from(roles)
    .where(roleIds.length > 0 ? inArray(roles.id, [...roleIds]) : sql`0`);
}

/**
 * The role list of a user created without one: the `default_role` setting's role as AList does,
 * except the admin and guest roles (AList's fresh default, guest, made such a create fail).
 */
const defaultRoleIds = sql`COALESCE((SELECT json_array(${roles.id}) FROM ${roles}
  WHERE ${roles.id} = (SELECT CAST(${settings.value} AS INTEGER) FROM ${settings} WHERE ${settings.key} = 'default_role')
    AND ${roles.id} NOT IN (${ADMIN_ROLE_ID}, ${GUEST_ROLE_ID})), '[]')`;

export const userPage = (db: Database, window: { limit: number; offset: number }) => tablePage(db, users, window);

export function userById(db: Database, id: number) {
  return plan([db.select().from(users).where(eq(users.id, id))], ([[user]]): UserRow | undefined => user);
}

export interface NewUser {
  username: string;
  passwordHash: string;
  passwordChangedAt: number;
  basePath: string;
  /** Empty: the default role. */
  roleIds: readonly number[];
  disabled: boolean;
  permission: number;
  ssoId: string;
  allowLdap: boolean;
}

/** A refusal carries the row as the batch saw it, its kind, and which of the requested roles exist. */
export type WriteResult =
  | { written: true; user: UserRow }
  | { written: false; user: UserRow | undefined; kind: AccountKind | undefined; existingRoleIds: number[] };

/** Inserts the user if all its roles exist. A taken username throws a UNIQUE violation. */
export async function insertUser(db: Database, user: NewUser): Promise<WriteResult> {
  const role = user.roleIds.length > 0 ? sql`${JSON.stringify(user.roleIds)}` : defaultRoleIds;
  const [inserted, [created], known] = await db.batch([
    db.run(sql`INSERT INTO ${users} (username, password_hash, pwd_ts, base_path, role, disabled, permission, sso_id, allow_ldap)
      SELECT ${user.username}, ${user.passwordHash}, ${user.passwordChangedAt}, ${user.basePath}, ${role},
        ${user.disabled ? 1 : 0}, ${user.permission}, ${user.ssoId}, ${user.allowLdap ? 1 : 0}
      WHERE ${rolesExist(user.roleIds)}`),
    db.select().from(users).where(eq(users.username, user.username)),
    existingRoleIds(db, user.roleIds),
  ]);
  if (inserted.rowsAffected > 0 && created) return { written: true, user: created };
  return { written: false, user: undefined, kind: undefined, existingRoleIds: known.map((r) => r.id) };
}

export interface UserChange {
  /** Absent fields stay as they are. */
  username?: string | undefined;
  password?: { hash: string; now: number } | undefined;
  basePath?: string | undefined;
  roleIds?: readonly number[] | undefined;
  disabled?: boolean | undefined;
  permission?: number | undefined;
  ssoId?: string | undefined;
  allowLdap?: boolean | undefined;
}

/**
 * Applies `change` if the account's kind allows it (`allowed`, from the rules) and its roles
 * exist. The admin keeps base path `/` and every permission, whatever was sent (AList's
 * enforceAdminUserDefaults). A new password ends the user's tokens (`newPasswordColumns`);
 * disabling or renaming ends the user's device sessions.
 */
export async function updateUser(
  db: Database,
  id: number,
  change: UserChange,
  allowed: Record<AccountKind, boolean>,
): Promise<WriteResult> {
  const isAdminRow = sql`${rowKind} = 'admin'`;
  const roleIds = change.roleIds;
  const writable = and(
    eq(users.id, id),
    sql`CASE ${rowKind} WHEN 'admin' THEN ${+allowed.admin} WHEN 'guest' THEN ${+allowed.guest} ELSE ${+allowed.user} END`,
    rolesExist(roleIds ?? []),
  );
  const update = db
    .update(users)
    .set({
      ...(change.username !== undefined && { username: change.username }),
      ...(change.password && newPasswordColumns(change.password)),
      ...(roleIds !== undefined && { roleIds: [...roleIds] }),
      ...(change.disabled !== undefined && { disabled: change.disabled }),
      ...(change.ssoId !== undefined && { ssoId: change.ssoId }),
      ...(change.allowLdap !== undefined && { allowLdap: change.allowLdap }),
      basePath: sql`CASE WHEN ${isAdminRow} THEN '/' ELSE ${change.basePath ?? users.basePath} END`,
      permission: sql`CASE WHEN ${isAdminRow} THEN ${ALL_PERMISSIONS} ELSE ${change.permission ?? users.permission} END`,
    })
    .where(writable);
  // Runs before the update, while the old name can still be compared: a rename ends the user's
  // sessions, so that renaming back cannot revive the tokens that carry the old name.
  const endSessionsOnRename: BatchItem<"sqlite">[] =
    change.username === undefined
      ? []
      : [
          db
            .update(deviceSessions)
            .set({ status: DeviceSessionStatus.INACTIVE })
            .where(
              inArray(
                deviceSessions.userId,
                db
                  .select({ id: users.id })
                  .from(users)
                  .where(and(writable, sql`${users.username} <> ${change.username}`)),
              ),
            ),
        ];
  // Runs after the update: ends the sessions only if the user is now disabled.
  const endSessions = db
    .update(deviceSessions)
    .set({ status: DeviceSessionStatus.INACTIVE })
    .where(
      inArray(
        deviceSessions.userId,
        db
          .select({ id: users.id })
          .from(users)
          .where(and(eq(users.id, id), eq(users.disabled, true))),
      ),
    );
  const statements: BatchItem<"sqlite">[] = [
    ...endSessionsOnRename,
    update,
    ...(change.disabled ? [endSessions] : []),
    db
      .select({ ...getTableColumns(users), kind: rowKind })
      .from(users)
      .where(eq(users.id, id)),
    existingRoleIds(db, roleIds ?? []),
  ];
  const results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  const { rowsAffected } = results[endSessionsOnRename.length] as { rowsAffected: number };
  const [row] = results.at(-2) as (UserRow & { kind: AccountKind })[];
  const known = (results.at(-1) as { id: number }[]).map((r) => r.id);
  if (!row) return { written: false, user: undefined, kind: undefined, existingRoleIds: known };
  const { kind, ...user } = row;
  if (rowsAffected > 0) return { written: true, user };
  return { written: false, user, kind, existingRoleIds: known };
}

/**
 * Deletes an ordinary user with their shares, device sessions, SSH keys and pending 2FA enrolment
 * (explicitly, not through FK cascades, which SQLite only applies with foreign_keys on).
 * Returns the row as it was; nothing is deleted for the admin or the guest.
 */
export async function deleteUser(db: Database, id: number): Promise<{ user: UserRow | undefined; deleted: boolean }> {
  const deletable = db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.id, id), sql`${rowKind} = 'user'`));
  const [[user], , , , , removed] = await db.batch([
    db.select().from(users).where(eq(users.id, id)),
    db.delete(shares).where(inArray(shares.creatorId, deletable)),
    db.delete(deviceSessions).where(inArray(deviceSessions.userId, deletable)),
    db.delete(sshPublicKeys).where(inArray(sshPublicKeys.userId, deletable)),
    db.delete(pendingOtpEnrolments).where(inArray(pendingOtpEnrolments.userId, deletable)),
    db.delete(users).where(inArray(users.id, deletable)),
  ]);
  return { user, deleted: removed.rowsAffected > 0 };
}
