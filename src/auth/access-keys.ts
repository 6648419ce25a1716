// Access keys at the guard (docs/decisions.md D16): how a key is told from the other tokens, when a
// key found by its hash may be used, and what its caller may do. A key never does more than its
// user may do now: the caller the guard hands on is the user's, read fresh on every request, with
// every role scope cut to the key's folder and rights (D16.2). The file side then holds the request
// to those scopes, the user's base path and the metas as it does for any caller.
import type { AccessKeyUsage } from "../db/schema.ts";
import type { Caller } from "./caller.ts";
import { ACCESS_KEY_EXPIRED, accessKeyNotFor, PASSWORD_CHANGED, TOKEN_INVALIDATED, USER_DISABLED } from "./messages.ts";
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "./roles.ts";
import type { KeyRow, RoleRow, UserRow } from "./store.ts";

/** What the guard reads of a key (its query is auth/store.ts's). */
export type { KeyRow };

/** New keys; the prefix tells a leaked key apart in logs and secret scanners. */
export const ACCESS_KEY_PREFIX = "gh-key-";
/** App passwords made before keys existed: keys with WebDAV use (D16.1). */
export const APP_PASSWORD_PREFIX = "gh-app-";

export const isAccessKeySecret = (secret: string) =>
  secret.startsWith(ACCESS_KEY_PREFIX) || secret.startsWith(APP_PASSWORD_PREFIX);

/** Last use moves at most once in this many seconds per key (D16.4). */
export const KEY_TOUCH_SECONDS = 300;

/**
 * Keys whose last use this isolate recorded, by hash, and when (unix seconds): the update rides in
 * the guard's batch at most once per KEY_TOUCH_SECONDS per key and isolate, and lands at most once
 * per KEY_TOUCH_SECONDS per key (docs/decisions.md D16.4).
 */
const touchedKeys = new Map<string, number>();
const TOUCHED_MAX = 1000;

/** Whether this request carries the last-use update of the key with `hash`. */
export function keyTouchDue(hash: string, now: number): boolean {
  const last = touchedKeys.get(hash);
  if (last !== undefined && now - last < KEY_TOUCH_SECONDS) return false;
  if (touchedKeys.size >= TOUCHED_MAX) touchedKeys.delete(touchedKeys.keys().next().value!);
  touchedKeys.set(hash, now);
  return true;
}

/** AList's path-limit bit of a user's own permission (features/fs/rules.ts `Permission.PATH_LIMIT`). */
const PATH_LIMIT = 1 << 14;

/** Why `key` may not be used for `use` now, or null when it may. Checked before the caller is made. */
export function keyRefusal(
  key: KeyRow | undefined,
  user: UserRow | undefined,
  use: AccessKeyUsage,
  now: number,
): { code: 401 | 403; message: string; counted: boolean } | null {
  // No such key (or its user is gone): a guess, counted toward the lockout.
  if (!key || !user || user.roleIds.includes(GUEST_ROLE_ID))
    return { code: 401, message: TOKEN_INVALIDATED, counted: true };
  // A password change ends the keys made before it, as it ends login tokens (D16.5).
  if (key.passwordChangedAt !== user.passwordChangedAt) return { code: 401, message: PASSWORD_CHANGED, counted: false };
  if (user.disabled) return { code: 401, message: USER_DISABLED, counted: false };
  if (key.expiresAt !== 0 && key.expiresAt <= now) return { code: 401, message: ACCESS_KEY_EXPIRED, counted: false };
  if (!key.usage.includes(use)) return { code: 403, message: accessKeyNotFor(use), counted: false };
  return null;
}

const within = (path: string, prefix: string) => prefix === "/" || path === prefix || path.startsWith(`${prefix}/`);

/**
 * The caller a key stands for: its user with each role scope cut to the key's folder and rights
 * (a scope below the folder keeps its path, one above it narrows to the folder, any other goes),
 * the path limit on when the key has a folder (so nothing beside it is reached), and never the
 * admin role (so no admin route and no admin-only file operation, D16.3).
 */
export function keyCaller(user: UserRow, roles: readonly RoleRow[], key: KeyRow, via: "access_key" | "basic"): Caller {
  const scoped = roles.map((role) => ({
    ...role,
    permissionScopes: role.permissionScopes.flatMap((scope) => {
      const permission = scope.permission & key.permission;
      if (within(scope.path, key.path)) return [{ path: scope.path, permission }];
      if (within(key.path, scope.path)) return [{ path: key.path, permission }];
      return [];
    }),
  }));
  return {
    user: {
      ...user,
      roleIds: user.roleIds.filter((id) => id !== ADMIN_ROLE_ID),
      permission: key.path === "/" ? user.permission : user.permission | PATH_LIMIT,
    },
    roles: scoped,
    via,
    deviceKey: null,
    key: { id: key.id, path: key.path, permission: key.permission },
  };
}

/**
 * The routes a key reaches on the API: the file side (`/api/fs/*`) and reading its own profile.
 * Everything else (account, sessions, keys, two-factor, shares, tasks, admin) refuses a key, even
 * the admin's (D16.3). A list of what is allowed, so a new route refuses keys until added here.
 */
export function keyReaches(method: string, path: string): boolean {
  return path.startsWith("/api/fs/") || (method === "GET" && path === "/api/me");
}
