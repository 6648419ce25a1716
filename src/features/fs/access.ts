// Who may see what, in AList's order of checks (reference §3.2, §3.3) with FILES.md §3's fixes:
// the base path is joined to every request path, and the path limit holds.
import type { Caller } from "../../auth/caller.ts";
import { ApiError } from "../../http/errors.ts";
import type { FileObject } from "../../drivers/types.ts";
import { hiddenFromParent, hidePatterns, isHidden, nearestMeta, passwordGuards, passwordMatches, type MetaRow } from "./metas.ts";
import { joinBasePath, joinName, RELATIVE_PATH_REFUSED } from "./path.ts";
import { canReadPath, grantsOf, Permission, permissionAt, withinPathLimit, type Grants } from "./permissions.ts";
import { signPath } from "./sign.ts";
import type { FsState } from "./state.ts";
import type { StorageRow } from "./tree.ts";

/** AList's one text for a role denial, a hidden path and a wrong password alike. */
export const ACCESS_DENIED = "password is incorrect or you have no permission";

export interface Viewer {
  grants: Grants;
  basePath: string;
}

export const viewerOf = (caller: Caller): Viewer => ({ grants: grantsOf(caller.roles, caller.user.permission), basePath: caller.user.basePath });

/** The full path for a path the client sent (403 for `..` and outside the path limit). */
export function fullPathOf(viewer: Viewer, requestPath: string): string {
  const path = joinBasePath(viewer.basePath, requestPath);
  if (path === null) throw new ApiError(403, RELATIVE_PATH_REFUSED);
  if (!withinPathLimit(viewer.grants, path)) throw new ApiError(403, "permission denied");
  return path;
}

/** May the viewer open `path` with `password`? (CanAccessWithRoles) */
export function mayAccess(viewer: Viewer, meta: MetaRow | undefined, path: string, password: string): boolean {
  if (!canReadPath(viewer.grants, path)) return false;
  const bits = permissionAt(viewer.grants, path);
  if ((bits & Permission.SEE_HIDES) === 0 && hiddenFromParent(meta, path)) return false;
  if ((bits & Permission.ACCESS_WITHOUT_PASSWORD) !== 0) return true;
  return !passwordGuards(meta, path) || passwordMatches(meta, password);
}

/**
 * The entries of folder `path` the viewer may see: hide patterns (unless the see-hides bit) and
 * role scopes (a branch is shown when a scope holds it or lies below it).
 */
export function visibleEntries(viewer: Viewer, meta: MetaRow | undefined, path: string, entries: FileObject[]): FileObject[] {
  const hides = (permissionAt(viewer.grants, path) & Permission.SEE_HIDES) === 0 ? hidePatterns(meta, path) : [];
  return entries.filter((entry) => !isHidden(hides, entry.name) && canReadPath(viewer.grants, joinName(path, entry.name)));
}

export function requireAccess(viewer: Viewer, state: FsState, path: string, password: string): MetaRow | undefined {
  const meta = nearestMeta(state.metas, path);
  if (!mayAccess(viewer, meta, path, password)) throw new ApiError(403, ACCESS_DENIED);
  return meta;
}

/**
 * Does a download of `path` need a sign? `sign_all`, the storage's `enable_sign`, or a meta
 * password guarding the path (reference §6.1).
 */
export function signRequired(state: FsState, path: string, storage: StorageRow | null): boolean {
  return state.settings.signAll || !!storage?.enableSign || passwordGuards(nearestMeta(state.metas, path), path);
}

/** The sign for a file's links, or "" when its downloads need none. */
export async function signFor(state: FsState, path: string, storage: StorageRow | null, required = signRequired(state, path, storage)): Promise<string> {
  return required ? signPath(state.settings.token, path, state.settings.linkExpirationHours) : "";
}
