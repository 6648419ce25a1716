// The signed-in user's view of themselves and the changes they may make to their own account.
// Plain inputs (the caller's user and roles), no request: the routes only map to and from the wire.
import type { RoleRow, UserRow } from "../../auth/store.ts";
import type { Database } from "../../db/client.ts";
import { refuseDuplicate } from "../../http/errors.ts";
import { cleanPath } from "../../lib/path.ts";
import { usernameTaken } from "../users/messages.ts";
import { storedPasswordHash } from "../users/rules.ts";
import { updateProfile } from "./store.ts";

/** The names of the user's roles, in the order the user holds them; ids of deleted roles drop out. */
export function roleNames(roleIds: readonly number[], roles: readonly RoleRow[]): string[] {
  const byId = new Map(roles.map((role) => [role.id, role.name]));
  return roleIds.flatMap((id) => byId.get(id) ?? []);
}

/**
 * Permission scopes of all the user's roles merged by cleaned path, first appearance first,
 * permissions OR-ed (AList v3.58.0 server/handles/auth.go:168-178).
 */
export function mergedPermissions(
  roleIds: readonly number[],
  roles: readonly RoleRow[],
): { path: string; permission: number }[] {
  const merged = new Map<string, number>();
  const order = new Map(roleIds.map((id, i) => [id, i]));
  const held = [...roles].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  for (const scope of held.flatMap((role) => role.permissionScopes)) {
    const path = cleanPath(scope.path);
    merged.set(path, (merged.get(path) ?? 0) | scope.permission);
  }
  return [...merged].map(([path, permission]) => ({ path, permission }));
}

/** What a user may change of their own account; absent fields (and an empty password) stay. */
export interface ProfileEdit {
  username?: string | undefined;
  password?: string | undefined;
  ssoId?: string | undefined;
}

/** Saves `edit` to `user`'s own account. A new password moves pwd_ts, so tokens carrying the old one die. */
export async function changeOwnProfile(db: Database, user: UserRow, edit: ProfileEdit): Promise<void> {
  const password = edit.password
    ? { hash: await storedPasswordHash(edit.password), now: Math.floor(Date.now() / 1000) }
    : undefined;
  await refuseDuplicate(
    usernameTaken(edit.username),
    updateProfile(db, user.id, {
      username: edit.username ?? user.username,
      ssoId: edit.ssoId ?? user.ssoId,
      ...(password ? { password } : {}),
    }),
  );
}
