// What a caller may do at a full path, from the permission scopes of its roles (reference §3.2),
// with FILES.md §3.2's fix: the permission at `/` or the base path is that of the scopes holding
// it, never the OR of every scope (AList granted a sub-scope's write bit at the root).
import type { PermissionScope } from "../../db/schema.ts";
import { isWithin } from "./path.ts";

export const Permission = {
  SEE_HIDES: 1 << 0,
  ACCESS_WITHOUT_PASSWORD: 1 << 1,
  OFFLINE_DOWNLOAD: 1 << 2,
  WRITE: 1 << 3,
  RENAME: 1 << 4,
  MOVE: 1 << 5,
  COPY: 1 << 6,
  REMOVE: 1 << 7,
  WEBDAV_READ: 1 << 8,
  WEBDAV_MANAGE: 1 << 9,
  PATH_LIMIT: 1 << 14,
} as const;

export interface Grants {
  scopes: PermissionScope[];
  /** The user's own `permission` column; only its path-limit bit matters to the file side. */
  userPermission: number;
}

export function grantsOf(roles: readonly { permissionScopes: PermissionScope[] }[], userPermission: number): Grants {
  return { scopes: roles.flatMap((role) => role.permissionScopes), userPermission };
}

/** OR of the scopes at `path` or above it. */
export function permissionAt(grants: Grants, path: string): number {
  let bits = 0;
  for (const scope of grants.scopes) if (isWithin(path, scope.path)) bits |= scope.permission;
  return bits;
}

export const can = (grants: Grants, path: string, bit: number) => (permissionAt(grants, path) & bit) !== 0;

/**
 * Whether `path` may be read at all: some scope holds it, or lies below it (so the folders on the
 * way to a scope can be browsed; their listings are filtered to the branches that lead there).
 */
export function canReadPath(grants: Grants, path: string): boolean {
  return grants.scopes.some((scope) => isWithin(path, scope.path) || isWithin(scope.path, path));
}

/**
 * AList's path limit: a user whose own permission has bit 14 stays inside (at or below) the scope
 * paths of its roles.
 */
export function withinPathLimit(grants: Grants, path: string): boolean {
  if ((grants.userPermission & Permission.PATH_LIMIT) === 0 || path === "/") return true;
  return grants.scopes.some((scope) => isWithin(path, scope.path));
}
