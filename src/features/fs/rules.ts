// The decisions of the file side, over plain inputs (the caller's grants, the metas and settings a
// request read, full paths), in one place: what a caller may do at a path (AList v3.58.0
// server/common/role_perm.go:36-86, with docs/decisions.md D8.2's fix: the permission at `/` or the
// base path is that of the scopes holding it, never the OR of every scope), what metas do (AList
// v3.58.0 internal/op/meta.go:25: the nearest meta of a path is used alone; passwords, hide
// patterns, readme and header, and the write grant, each on the meta's own path or below it), who
// may see and change what in AList's order of checks (AList v3.58.0 server/common/role_perm.go:61,
// server/handles/fsread.go, fsmanage.go) with docs/decisions.md D8's fixes (the base path is joined
// to every request path, the path limit holds), and when a download needs a sign. Each returns data
// or throws the refusal (ApiError).
import type { Caller } from "../../auth/caller.ts";
import { constantTimeEqual } from "../../auth/password.ts";
import type { PermissionScope } from "../../db/schema.ts";
import type { FileObject } from "../../drivers/types.ts";
import { ApiError } from "../../http/errors.ts";
import {
  ACCESS_DENIED,
  hiddenInsideOf,
  HOLDS_MOUNT_POINT,
  INVALID_NAME,
  OWN_BASE_PATH,
  OWN_SCOPE_ROOT,
  PERMISSION_DENIED,
  protectedInside,
  REFRESH_REFUSED,
  RELATIVE_PATH_REFUSED,
  RENAME_PASSWORD_PROTECTED,
  STORAGE_ROOT_DELETE,
  STORAGE_ROOT_MOVE,
  STORAGE_ROOT_RENAME,
} from "./messages.ts";
import {
  baseName,
  cleanPath,
  hasRelativeSegment,
  isValidName,
  isWithin,
  joinBasePath,
  joinName,
  parentOf,
} from "./path.ts";
import { signPath } from "./sign.ts";
import type { FsState, MetaRow, MountsAt } from "./state.ts";
import type { StorageRow } from "./tree.ts";

export type { MetaRow };

// ---------------------------------------------------------------------------------------------
// Permissions: what the scopes of a caller's roles grant at a full path.

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
  READ_ARCHIVES: 1 << 12,
  DECOMPRESS: 1 << 13,
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

// ---------------------------------------------------------------------------------------------
// Metas: the nearest meta of a path, and what it says there.

/** The meta on `path` itself, else on its closest ancestor. */
export function nearestMeta(rows: readonly MetaRow[], path: string): MetaRow | undefined {
  let best: MetaRow | undefined;
  for (const row of rows) {
    if (isWithin(path, row.path) && (!best || row.path.length > best.path.length)) best = row;
  }
  return best;
}

const applies = (meta: MetaRow, path: string, sub: boolean) => meta.path === path || (sub && isWithin(path, meta.path));

/** The meta's password guards `path` (on the meta's own folder, or below it with `p_sub`). */
const passwordGuards = (meta: MetaRow | undefined, path: string): meta is MetaRow =>
  !!meta && meta.password !== "" && applies(meta, path, meta.passwordSub);

export function passwordMatches(meta: MetaRow, supplied: string): boolean {
  const encoder = new TextEncoder();
  return constantTimeEqual(encoder.encode(supplied), encoder.encode(meta.password));
}

/**
 * The hide patterns in force for the entries of folder `dir`. Empty lines are skipped (AList hid
 * everything when the text ended with a newline, docs/decisions.md D8.5); a line that is not a
 * valid pattern hides nothing (create and update refuse such lines).
 */
export function hidePatterns(meta: MetaRow | undefined, dir: string): RegExp[] {
  if (!meta || meta.hide === "" || !applies(meta, dir, meta.hideSub)) return [];
  return meta.hide
    .split("\n")
    .map((line) => line.replace(/\r$/, ""))
    .filter((line) => line !== "")
    .flatMap((line) => {
      try {
        return [new RegExp(line)];
      } catch {
        return [];
      }
    });
}

export const isHidden = (patterns: readonly RegExp[], name: string) => patterns.some((pattern) => pattern.test(name));

/**
 * Direct access to `path` hidden by its nearest meta's rules for the parent folder (AList v3.58.0
 * server/common/role_perm.go:66-74).
 */
const hiddenFromParent = (meta: MetaRow | undefined, path: string) =>
  path !== "/" && isHidden(hidePatterns(meta, parentOf(path)), baseName(path));

/**
 * Does `path` lie in a hidden subtree: is it, or a folder on its way, hidden in its own folder (by
 * that folder's nearest meta)? A hidden name hides everything below it (docs/files.md, Metas).
 */
function hiddenOnTheWay(metas: readonly MetaRow[], path: string): boolean {
  if (!metas.some((meta) => meta.hide !== "")) return false;
  for (let at = path; at !== "/"; at = parentOf(at)) {
    const dir = parentOf(at);
    if (isHidden(hidePatterns(nearestMeta(metas, dir), dir), baseName(at))) return true;
  }
  return false;
}

const readmeFor = (meta: MetaRow | undefined, path: string) =>
  meta && applies(meta, path, meta.readmeSub) ? meta.readme : "";
const headerFor = (meta: MetaRow | undefined, path: string) =>
  meta && applies(meta, path, meta.headerSub) ? meta.header : "";

/**
 * The meta's write grant for folder `dir`: a write that lands in `dir` (an upload or a new folder
 * there, the destination of a move or copy) may go ahead. Without `w_sub` only the meta's own
 * folder is writable, not the folders below it (docs/files.md, Changing files).
 */
export const metaGrantsWrite = (meta: MetaRow | undefined, dir: string) =>
  !!meta && meta.write && (meta.writeSub || meta.path === dir);

// ---------------------------------------------------------------------------------------------
// Access: who may see what.

export interface Viewer {
  grants: Grants;
  basePath: string;
}

export const viewerOf = (caller: Caller): Viewer => ({
  grants: grantsOf(caller.roles, caller.user.permission),
  basePath: caller.user.basePath,
});

/** The full path for a path the client sent (403 for `..` and outside the path limit). */
export function fullPathOf(viewer: Viewer, requestPath: string): string {
  const path = joinBasePath(viewer.basePath, requestPath);
  if (path === null) throw new ApiError(403, RELATIVE_PATH_REFUSED);
  if (!withinPathLimit(viewer.grants, path)) throw new ApiError(403, PERMISSION_DENIED);
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
export function visibleEntries(
  viewer: Viewer,
  meta: MetaRow | undefined,
  path: string,
  entries: FileObject[],
): FileObject[] {
  const hides = (permissionAt(viewer.grants, path) & Permission.SEE_HIDES) === 0 ? hidePatterns(meta, path) : [];
  // Worked out once per folder: a scope at or above it lets every entry be read, and with no hide
  // rule either the listing is the storage's as it is (a folder of 10,000 entries asks nothing per entry).
  const allReadable = viewer.grants.scopes.some((scope) => isWithin(path, scope.path));
  if (allReadable && hides.length === 0) return entries;
  return entries.filter(
    (entry) => !isHidden(hides, entry.name) && (allReadable || canReadPath(viewer.grants, joinName(path, entry.name))),
  );
}

/** May the viewer reach `path` past the hide rules: the see-hides bit, or no hidden name on its way? */
export const mayReach = (viewer: Viewer, metas: readonly MetaRow[], path: string) =>
  (permissionAt(viewer.grants, path) & Permission.SEE_HIDES) !== 0 || !hiddenOnTheWay(metas, path);

/** A path a write names or makes (a rename's new name, a copy's target) is refused when hidden from the viewer. */
export function requireReach(viewer: Viewer, state: FsState, path: string) {
  if (!mayReach(viewer, state.metas, path)) throw new ApiError(403, ACCESS_DENIED);
}

export function requireAccess(viewer: Viewer, state: FsState, path: string, password: string): MetaRow | undefined {
  const meta = nearestMeta(state.metas, path);
  if (!mayReach(viewer, state.metas, path) || !mayAccess(viewer, meta, path, password))
    throw new ApiError(403, ACCESS_DENIED);
  return meta;
}

// ---------------------------------------------------------------------------------------------
// Alias: the metas of the paths an alias shows hold through it (docs/files.md, Metas).

/**
 * The guard of a request's Alias hops: each target path is held to its own metas (hide rules,
 * passwords, and whatever else decides access to a path named directly), with the caller's bits
 * and password at the path it asked for; the target's role scopes do not apply (the alias is the
 * caller's view). `reached` collects the targets entered, for the read-me and the signs.
 */
export function throughAlias(viewer: Viewer, state: FsState, path: string, password: string) {
  const asTarget: Viewer = {
    grants: { scopes: [{ path: "/", permission: permissionAt(viewer.grants, path) }], userPermission: 0 },
    basePath: "/",
  };
  const reached: string[] = [];
  return {
    reached,
    enter(target: string) {
      requireAccess(asTarget, state, target, password);
      reached.push(target);
    },
    entries: (target: string, entries: FileObject[]) =>
      visibleEntries(asTarget, nearestMeta(state.metas, target), target, entries),
  };
}

/** The read-me and header of `path`: its own meta's, else those of the first target an alias reached that has one. */
export function readmeThrough(state: FsState, meta: MetaRow | undefined, path: string, reached: readonly string[]) {
  const first = (of: (meta: MetaRow | undefined, path: string) => string) =>
    of(meta, path) ||
    reached.map((target) => of(nearestMeta(state.metas, target), target)).find((text) => text !== "") ||
    "";
  return { readme: first(readmeFor), header: first(headerFor) };
}

/**
 * A meta password guards one of `targets` (an alias's targets for a file), or a hidden name lies on
 * its way: its links need a sign, as the target's own would.
 */
export const targetNeedsSign = (state: FsState, targets: readonly string[]) =>
  targets.some(
    (target) => passwordGuards(nearestMeta(state.metas, target), target) || hiddenOnTheWay(state.metas, target),
  );

/**
 * Does a download of `path` need a sign? `sign_all`, the storage's `enable_sign`, a meta password
 * guarding the path (AList v3.58.0 server/middlewares/down.go:50-64), or a hidden name on its way:
 * `/d` and `/p` know no caller, so only a sign, given to those who may see the path, reaches it.
 */
export function signRequired(state: FsState, path: string, storage: StorageRow | null): boolean {
  return (
    state.settings.signAll ||
    !!storage?.enableSign ||
    passwordGuards(nearestMeta(state.metas, path), path) ||
    hiddenOnTheWay(state.metas, path)
  );
}

/** The sign for a file's links, or "" when its downloads need none. */
export async function signFor(
  state: FsState,
  path: string,
  storage: StorageRow | null,
  required = signRequired(state, path, storage),
): Promise<string> {
  return required ? signPath(state.settings.token, path, state.settings.linkExpirationHours) : "";
}

// ---------------------------------------------------------------------------------------------
// Checks the routes make before they change anything (manage-routes.ts, upload-routes.ts,
// batch-routes.ts; WebDAV has its own, in src/features/dav/rules.ts, over the same functions).

/**
 * May the viewer change things in `dir` (the folder a write lands in)? Access as for reading it
 * (and `target` past the hide rules), then `bit` at `target`, or with `metaWrite` a meta's write
 * grant for `dir` (the rule of fs/list's `write` flag).
 */
export function requireWritable(
  viewer: Viewer,
  state: FsState,
  dir: string,
  target: string,
  bit: number,
  password: string,
  metaWrite = false,
) {
  const meta = nearestMeta(state.metas, dir);
  if (
    !mayReach(viewer, state.metas, target) ||
    !mayReach(viewer, state.metas, dir) ||
    !mayAccess(viewer, meta, dir, password)
  )
    throw new ApiError(403, ACCESS_DENIED);
  const bits = permissionAt(viewer.grants, target);
  if ((bits & bit) === 0 && !(metaWrite && metaGrantsWrite(meta, dir))) throw new ApiError(403, PERMISSION_DENIED);
}

/**
 * May the viewer put a file (or make a folder) at `path`: a valid name, then write permission (or a
 * meta's write grant) at its folder, past the hide rules and that folder's meta password. The one
 * decision of fs/put, fs/form, every step of a chunked upload, and every file and folder an archive
 * extraction writes (docs/decisions.md D13.6). Answers the name and its folder.
 */
export function requireUploadable(
  viewer: Viewer,
  state: FsState,
  path: string,
  password: string,
): { name: string; dir: string } {
  const name = baseName(path);
  requireName(name);
  const dir = parentOf(path);
  requireWritable(viewer, state, dir, path, Permission.WRITE, password, true);
  return { name, dir };
}

/**
 * The first meta password guarding something in the subtree at `root` (root itself, from above
 * with `p_sub`, or any meta at or below it) that the viewer may not pass: neither the
 * skip-password bit there nor `password`. A write that takes a subtree must pass them all.
 */
export function guardInside(
  viewer: Viewer,
  metas: readonly MetaRow[],
  root: string,
  password: string,
): MetaRow | undefined {
  const nearest = nearestMeta(metas, root);
  const guards = metas.filter((meta) => meta.password !== "" && isWithin(meta.path, root));
  if (passwordGuards(nearest, root) && !guards.includes(nearest)) guards.push(nearest);
  return guards.find(
    (meta) =>
      (permissionAt(viewer.grants, meta.path) & Permission.ACCESS_WITHOUT_PASSWORD) === 0 &&
      !passwordMatches(meta, password),
  );
}

/**
 * A write that takes the object at `path` with everything below it (move, copy, remove): the
 * viewer reaches it past the hide rules, and passes every meta password in it (one `password`,
 * as AList's request carries one).
 */
/**
 * Whether moving, copying or renaming the subtree at `root` to `to` (the folder or path it lands
 * at) could carry hidden names where the viewer sees them: the viewer lacks the see-hides bit, and
 * a hide rule set at or below `root` (metas stay at their paths, so the copy or the moved folder is
 * no longer under them), or one inherited from above with `h_sub` that does not also cover `to`.
 * Names are not listed upstream to find out: a subtree a hide rule touches is enough.
 */
export function hiddenInside(viewer: Viewer, metas: readonly MetaRow[], root: string, to: string): boolean {
  if ((permissionAt(viewer.grants, root) & Permission.SEE_HIDES) !== 0) return false;
  return metas.some(
    (meta) =>
      meta.hide.trim() !== "" &&
      (isWithin(meta.path, root) || (meta.hideSub && isWithin(root, meta.path) && !isWithin(to, meta.path))),
  );
}

/** A copy, move or rename of `path` to `to` that would carry hidden names out of their rules: 403. */
export function requireNothingHidden(viewer: Viewer, state: FsState, path: string, to: string) {
  if (hiddenInside(viewer, state.metas, path, to)) throw new ApiError(403, hiddenInsideOf(baseName(path)));
}

export function requireSubtree(viewer: Viewer, state: FsState, path: string, password: string) {
  if (!mayReach(viewer, state.metas, path)) throw new ApiError(403, ACCESS_DENIED);
  if (guardInside(viewer, state.metas, path, password)) throw new ApiError(403, protectedInside(baseName(path)));
}

/** A rename takes the subtree too: every meta password in it needs its password (or the skip-password bit). */
export function requireRenamable(viewer: Viewer, state: FsState, path: string, password: string) {
  if (!mayReach(viewer, state.metas, path)) throw new ApiError(403, ACCESS_DENIED);
  if (guardInside(viewer, state.metas, path, password)) throw new ApiError(403, RENAME_PASSWORD_PROTECTED);
}

/**
 * Why the viewer may not rename, move or remove `path`, or null: the root, a storage's mount point
 * or a folder holding one (the storage page changes those), the viewer's base path or a folder
 * above it, or a root of the viewer's role scopes or a folder above one (docs/files.md, Changing files).
 */
export function anchoredBy(
  viewer: Viewer,
  path: string,
  mounts: MountsAt,
  operation: "rename" | "move" | "remove",
): string | null {
  if (path === "/" || mounts === "mount point")
    return operation === "rename"
      ? STORAGE_ROOT_RENAME
      : operation === "move"
        ? STORAGE_ROOT_MOVE
        : STORAGE_ROOT_DELETE;
  if (mounts === "above a mount point") return HOLDS_MOUNT_POINT;
  if (isWithin(cleanPath(viewer.basePath || "/"), path)) return OWN_BASE_PATH;
  if (viewer.grants.scopes.some((scope) => isWithin(cleanPath(scope.path || "/"), path))) return OWN_SCOPE_ROOT;
  return null;
}

export function requireMovable(
  viewer: Viewer,
  path: string,
  mounts: MountsAt,
  operation: "rename" | "move" | "remove",
) {
  const refusal = anchoredBy(viewer, path, mounts, operation);
  if (refusal) throw new ApiError(403, refusal);
}

export function requireName(name: string) {
  if (!isValidName(name)) throw new ApiError(400, INVALID_NAME);
}

/** May the viewer write in folder `path` (the `write` of fs/list): the write bit, or a meta's write grant for it. */
export const mayWrite = (viewer: Viewer, meta: MetaRow | undefined, path: string) =>
  (permissionAt(viewer.grants, path) & Permission.WRITE) !== 0 || metaGrantsWrite(meta, path);

/** The page of a folder listing (fs/list), AList v3.58: page from 1; per_page 0 or below is 200, above 500 is 500. */
export function listingPage(page: number, perPage: number) {
  return { page: Math.max(1, page), perPage: perPage <= 0 ? 200 : Math.min(perPage, 500) };
}

/** fs/list's `refresh` is for those who may write there (AList); Gatehouse keeps no cache to refresh. */
export function requireRefreshAllowed(refresh: boolean, write: boolean) {
  if (refresh && !write) throw new ApiError(403, REFRESH_REFUSED);
}

/** `force_root`: the admin names a full path; only `..` is still refused. */
export function fullPathOfAdmin(raw: string): string {
  if (hasRelativeSegment(raw)) throw new ApiError(403, RELATIVE_PATH_REFUSED);
  return cleanPath(raw);
}
