// What the admin API may do to an account. The admin (role 2) and the guest (role 1) are fixed
// points of the system: the guard recognises them by those roles (reference §2.2–2.4), so they
// keep them, nobody else gets them, and the admin cannot be switched off.
import * as z from "zod";
import "../../http/openapi.ts";
import { ADMIN_ROLE_ID, ALL_PERMISSIONS, GUEST_ROLE_ID } from "../../auth/roles.ts";

/** Which fixed point an account is; store.ts's `rowKind` decides it, in SQL, for the row being written. */
export type AccountKind = "admin" | "guest" | "user";
export const ACCOUNT_KINDS: readonly AccountKind[] = ["admin", "guest", "user"];

/** The refusal of a name another account has, from the admin API and from /api/me/update alike. */
export const usernameTaken = (username: string | undefined) => `username ${username} is already taken`;

export const ROLE_NOT_ASSIGNABLE = "admin or guest role can not be assigned";
export const ACCOUNT_NOT_DELETABLE = "admin or guest user can not be deleted";

/**
 * A permission bit field (reference §1.2). 0xFFFF is what AList gives the admin; bits 16 and
 * up do not exist in v3.58.
 */
export const Permission = z
  .number()
  .int()
  .min(0, `must be an integer from 0 to ${ALL_PERMISSIONS}`)
  .max(ALL_PERMISSIONS, `must be an integer from 0 to ${ALL_PERMISSIONS}`)
  .openapi({ description: "permission bits (AList v3.58: 0 to 65535)", example: 264 });

export interface AccountChange {
  /** Absent: unchanged. */
  roleIds?: readonly number[] | undefined;
  disabled?: boolean | undefined;
}

/** Why `change` may not be made to an account of `kind` (a new account is a "user"), or null. */
export function accountChangeProblem(kind: AccountKind, change: AccountChange): string | null {
  const roleIds = change.roleIds;
  switch (kind) {
    case "admin":
      if (roleIds && !sameIds(roleIds, [ADMIN_ROLE_ID])) return "cannot change role of admin user";
      return change.disabled ? "admin user can not be disabled" : null;
    case "guest":
      return roleIds && !sameIds(roleIds, [GUEST_ROLE_ID]) ? "cannot change role of guest user" : null;
    case "user":
      return roleIds?.some((id) => id === ADMIN_ROLE_ID || id === GUEST_ROLE_ID) ? ROLE_NOT_ASSIGNABLE : null;
  }
}

/** The same ids in the same order: the stored `role` list keeps the order the admin gave. */
function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** Role ids without repeats, first occurrence first. */
export function distinctIds(ids: readonly number[]): number[] {
  return [...new Set(ids)];
}
