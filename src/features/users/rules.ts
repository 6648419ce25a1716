// What the admin API may do to an account. The admin (role 2) and the guest (role 1) are fixed
// points of the system: the guard recognises them by those roles (AList v3.58.0
// server/handles/user.go:43, :90, internal/op/user.go:141), so they keep them, nobody else gets
// them, and the admin cannot be switched off. Each decision takes plain inputs and returns the user
// or throws the refusal (ApiError) the wire answers.
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "../../auth/roles.ts";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import type { Database } from "../../db/client.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { cleanPath } from "../../lib/path.ts";
import { cancelTwoFactor } from "../two-factor/store.ts";
import {
  ACCOUNT_NOT_DELETABLE,
  ADMIN_NOT_DISABLEABLE,
  ADMIN_ROLE_FIXED,
  GUEST_ROLE_FIXED,
  ROLE_NOT_ASSIGNABLE,
  rolesNotFound,
  USER_NOT_FOUND,
  usernameTaken,
} from "./messages.ts";
import { type AccountKind, deleteUser, insertUser, updateUser, type UserChange, type UserRow } from "./store.ts";

/** Which fixed point an account is; store.ts's `rowKind` decides it, in SQL, for the row being written. */
const ACCOUNT_KINDS: readonly AccountKind[] = ["admin", "guest", "user"];

interface AccountChange {
  /** Absent: unchanged. */
  roleIds?: readonly number[] | undefined;
  disabled?: boolean | undefined;
}

/** Why `change` may not be made to an account of `kind` (a new account is a "user"), or null. */
function accountChangeProblem(kind: AccountKind, change: AccountChange): string | null {
  const roleIds = change.roleIds;
  switch (kind) {
    case "admin":
      if (roleIds && !sameIds(roleIds, [ADMIN_ROLE_ID])) return ADMIN_ROLE_FIXED;
      return change.disabled ? ADMIN_NOT_DISABLEABLE : null;
    case "guest":
      return roleIds && !sameIds(roleIds, [GUEST_ROLE_ID]) ? GUEST_ROLE_FIXED : null;
    case "user":
      return roleIds?.some((id) => id === ADMIN_ROLE_ID || id === GUEST_ROLE_ID) ? ROLE_NOT_ASSIGNABLE : null;
  }
}

/** The same ids in the same order: the stored `role` list keeps the order the admin gave. */
function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** Role ids without repeats, first occurrence first. */
function distinctIds(ids: readonly number[]): number[] {
  return [...new Set(ids)];
}

/** What is stored for a password: AList's static hash, hashed again (auth/password.ts). */
export async function storedPasswordHash(password: string): Promise<string> {
  return hashStaticHash(await staticHash(password));
}

/** The user a read found; a missing one is the 404 every user route answers. */
export function foundUser(user: UserRow | undefined): UserRow {
  if (!user) throw new ApiError(404, USER_NOT_FOUND);
  return user;
}

/** The refusal of roles that do not exist, or null when all of `requested` do. */
function missingRoles(requested: readonly number[], existing: readonly number[]): string | null {
  const missing = requested.filter((id) => !existing.includes(id));
  return missing.length === 0 ? null : rolesNotFound(missing);
}

/** A new account as the admin describes it; absent fields take their defaults. */
export interface NewAccount {
  username: string;
  password: string;
  basePath?: string | undefined;
  /** Absent or empty: the role of the default_role setting (store.ts). */
  roleIds?: readonly number[] | undefined;
  disabled?: boolean | undefined;
  permission?: number | undefined;
  ssoId?: string | undefined;
  allowLdap?: boolean | undefined;
}

/** Creates an ordinary account: never with the admin or guest role, only with roles that exist. */
export async function createUser(db: Database, account: NewAccount): Promise<UserRow> {
  const roleIds = distinctIds(account.roleIds ?? []);
  const problem = accountChangeProblem("user", { roleIds });
  if (problem) throw new ApiError(400, problem);
  const result = await refuseDuplicate(
    usernameTaken(account.username),
    insertUser(db, {
      username: account.username,
      passwordHash: await storedPasswordHash(account.password),
      passwordChangedAt: Math.floor(Date.now() / 1000),
      basePath: cleanPath(account.basePath ?? "/"),
      roleIds,
      disabled: account.disabled ?? false,
      permission: account.permission ?? 0,
      ssoId: account.ssoId ?? "",
      allowLdap: account.allowLdap ?? false,
    }),
  );
  if (result.written) return result.user;
  // Only a missing role stops the insert; the batch read back which ones exist.
  const refusal = missingRoles(roleIds, result.existingRoleIds);
  if (refusal === null) throw new Error(`user ${account.username} not created for no reason the rules know`);
  throw new ApiError(400, refusal);
}

/** An edit of an account as the admin sends it; absent fields stay, an empty password too. */
export interface AccountEdit {
  username?: string | undefined;
  password?: string | undefined;
  basePath?: string | undefined;
  roleIds?: readonly number[] | undefined;
  disabled?: boolean | undefined;
  permission?: number | undefined;
  ssoId?: string | undefined;
  allowLdap?: boolean | undefined;
}

/** Applies `edit` to user `id` as far as the account's kind allows; returns the user as saved. */
export async function changeUser(db: Database, id: number, edit: AccountEdit): Promise<UserRow> {
  const change: UserChange = {
    username: edit.username,
    password: edit.password
      ? { hash: await storedPasswordHash(edit.password), now: Math.floor(Date.now() / 1000) }
      : undefined,
    basePath: edit.basePath === undefined ? undefined : cleanPath(edit.basePath),
    roleIds: edit.roleIds && distinctIds(edit.roleIds),
    disabled: edit.disabled,
    permission: edit.permission,
    ssoId: edit.ssoId,
    allowLdap: edit.allowLdap,
  };
  // The rules are decided here for each kind of account; the write picks by the row's kind.
  const allowed = Object.fromEntries(
    ACCOUNT_KINDS.map((kind) => [kind, accountChangeProblem(kind, change) === null]),
  ) as Record<AccountKind, boolean>;
  const result = await refuseDuplicate(usernameTaken(edit.username), updateUser(db, id, change, allowed));
  if (result.written) return result.user;
  if (!result.user || !result.kind) throw new ApiError(404, USER_NOT_FOUND);
  // The kind is the one the write judged by, read in its batch: no second classification here.
  const refusal =
    accountChangeProblem(result.kind, change) ?? missingRoles(change.roleIds ?? [], result.existingRoleIds);
  // The batch is one transaction, so what it read back always explains a refusal.
  if (refusal === null) throw new Error(`update of user ${id} refused for no reason the rules know`);
  throw new ApiError(400, refusal);
}

/** Deletes an ordinary account; the admin and the guest stay. */
export async function removeUser(db: Database, id: number): Promise<void> {
  const { user, deleted } = await deleteUser(db, id);
  if (!user) throw new ApiError(404, USER_NOT_FOUND);
  if (!deleted) throw new ApiError(400, ACCOUNT_NOT_DELETABLE);
}

/** Turns the user's two-factor authentication off (an admin's way back in for a lost authenticator). */
export async function turnOffTwoFactor(db: Database, id: number): Promise<void> {
  if (!(await cancelTwoFactor(db, id))) throw new ApiError(404, USER_NOT_FOUND);
}
