// The decisions of share links (OpenList internal/model/sharing.go, server/handles/sharing.go, with
// docs/decisions.md D14's fixes): who may share what, which id and code a share gets, when a share
// may be used, what path inside it a request names, and whether the creator may still read it.
// Plain inputs (rows, the parsed body, the file side's state); each returns data or throws.
import type { RoleRow } from "../../auth/store.ts";
import { isLockedOut } from "../../auth/lockout.ts";
import { LOCKED_OUT_MESSAGE } from "../../auth/messages.ts";
import { hashStaticHash, staticHash, verifyStaticHash } from "../../auth/password.ts";
import { openListRole } from "../../auth/roles.ts";
import { ApiError, type ApiCode } from "../../http/errors.ts";
import { baseName, cleanPath, isWithin, joinBasePath } from "../fs/path.ts";
import { can, viewerOf, withinPathLimit, type Viewer } from "../fs/rules.ts";
import { signPath, signProblem } from "../fs/sign.ts";
import type { FsState } from "../fs/state.ts";
import { rfc3339 } from "../fs/wire.ts";
import {
  EXPIRES_INVALID,
  ID_CHARACTERS,
  ID_TOO_LONG,
  INVALID_SHARE_ID,
  NO_FILES,
  OBJECT_NOT_FOUND,
  PERMISSION_DENIED,
  sameName,
  SHARE_GONE,
  SHARE_INVALID,
  sharePathDenied,
  WRONG_CODE,
} from "./messages.ts";
import type { OwnedShare, ShareRow, ShareUse } from "./store.ts";

/**
 * The role-scope bits of sharing (docs/decisions.md D14.1), OpenList's bit numbers (OpenList
 * internal/model/user.go:50-67): bit 14 lets a user share what lies under the scope, bit 15 lets it
 * choose the share's id. In a user's own `permission` bit 14 stays AList's path limit.
 */
export const SHARE = 1 << 14;
export const SHARE_CUSTOM_ID = 1 << 15;

/**
 * The sharing bits `/api/me` reports in `permission` for the web UI, which reads bit 14 as "may
 * share" and bit 15 as "may choose ids": those of any scope of the user's roles.
 */
export function sharingBits(roles: readonly Pick<RoleRow, "permissionScopes">[]): number {
  let bits = 0;
  for (const role of roles) for (const scope of role.permissionScopes) bits |= scope.permission;
  return bits & (SHARE | SHARE_CUSTOM_ID);
}

/** A refusal met while using a share: the envelope's code on /api/fs, a real HTTP status on /sd. */
export class ShareError extends ApiError {
  constructor(
    code: Exclude<ApiCode, 200>,
    message: string,
    readonly status: 400 | 403 | 404 | 410 | 429 | 502,
  ) {
    super(code, message);
  }
}

const gone = () => new ShareError(404, SHARE_GONE, 404);
const invalid = (status: 403 | 410) => new ShareError(500, SHARE_INVALID, status);
export const notFound = () => new ShareError(404, OBJECT_NOT_FOUND, 404);

// ---------------------------------------------------------------------------------------------
// Managing shares.

const ID_PATTERN = /^[\w\p{Script=Han}-]+$/u;

/** A share id a user chose (OpenList server/handles/sharing.go:423-433). */
export function requireValidId(id: string) {
  if ([...id].length > 64) throw new ApiError(400, ID_TOO_LONG);
  if (!ID_PATTERN.test(id)) throw new ApiError(400, ID_CHARACTERS);
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A random id of `length` letters and digits (OpenList's: 8, one more on each collision). */
export function randomId(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
  let id = "";
  // 62 letters: bytes of 248 and above are skipped, so every letter is as likely.
  for (const byte of bytes) if (byte < 248 && id.length < length) id += ALPHABET[byte % 62];
  return id.length === length ? id : randomId(length);
}

/**
 * The shared paths as stored: each cleaned (backslashes are separators; nothing climbs above `/`),
 * at least one, and no two with the same name, since a multi-item share names its items by their
 * names (OpenList let the first one shadow the others).
 */
export function sharedPaths(files: readonly string[]): string[] {
  const paths = [...new Set(files.filter((file) => file.trim() !== "").map(cleanPath))];
  if (paths.length === 0) throw new ApiError(400, NO_FILES);
  if (paths.length > 1) {
    const names = new Set<string>();
    for (const path of paths) {
      const name = path === "/" ? "/" : baseName(path);
      if (names.has(name)) throw new ApiError(400, sameName(name));
      names.add(name);
    }
  }
  return paths;
}

/** May `viewer` share `path`: inside its base path and path limit, under a scope with the share bit. */
export const mayShare = (viewer: Viewer, path: string) =>
  isWithin(path, cleanPath(viewer.basePath || "/")) &&
  withinPathLimit(viewer.grants, path) &&
  can(viewer.grants, path, SHARE);

/**
 * The caller may create or change a share of `paths`: the share bit somewhere (403 as OpenList), each
 * path inside its base path under a scope with the share bit, and, to choose the id, bit 15 there too.
 */
export function requireMayShare(viewer: Viewer, paths: readonly string[], choosesId: boolean) {
  const anywhere = viewer.grants.scopes.some((scope) => (scope.permission & SHARE) !== 0);
  if (!anywhere) throw new ApiError(403, PERMISSION_DENIED);
  for (const path of paths) if (!mayShare(viewer, path)) throw new ApiError(403, sharePathDenied(path));
  if (choosesId && !paths.every((path) => can(viewer.grants, path, SHARE_CUSTOM_ID)))
    throw new ApiError(403, PERMISSION_DENIED);
}

/** `expires` as the UI sends it (RFC 3339, or null / "" for never), in Unix milliseconds. */
export function expiresAt(expires: string | null | undefined): number | null {
  if (expires === null || expires === undefined || expires === "") return null;
  const ms = Date.parse(expires);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(expires) || Number.isNaN(ms)) throw new ApiError(400, EXPIRES_INVALID);
  // Go's zero time, which OpenList writes for "never".
  return ms <= 0 ? null : ms;
}

const STORED_CODE = /^pbkdf2-sha256\$\d{1,6}\$[\w-]+\$[\w-]+$/;

/**
 * The stored form of a share's code (docs/decisions.md D14.3): a new `pwd` is hashed as passwords
 * are; without one, `pwd_hash` (what list and get show, and the UI posts back) keeps the code;
 * with neither the share has none.
 */
export async function storedCode(pwd: string, pwdHash: string | undefined): Promise<string> {
  if (pwd !== "") return hashStaticHash(await staticHash(pwd));
  return pwdHash && STORED_CODE.test(pwdHash) ? pwdHash : "";
}

/** A share as the management routes answer it (OpenList server/handles/sharing.go:354-358); `pwd` only when just set. */
export function shareReply({ share, creator }: OwnedShare, pwd = "") {
  return {
    id: share.id,
    expires: share.expiresAtMs === null ? null : rfc3339(new Date(share.expiresAtMs)),
    pwd,
    pwd_hash: share.codeHash,
    accessed: share.accessed,
    max_accessed: share.maxAccessed,
    disabled: share.disabled,
    remark: share.remark,
    readme: share.readme,
    header: share.header,
    order_by: share.orderBy,
    order_direction: share.orderDirection,
    extract_folder: share.extractFolder,
    files: share.files,
    creator: creator.username,
    creator_role: openListRole(creator.roleIds),
  };
}

// ---------------------------------------------------------------------------------------------
// Using a share.

/** `/@s/<id>/<rest>` of a browsing request: the share id and the path inside it; null for any other path. */
export function sharePathOf(path: string): { id: string; rest: string } | null {
  if (path !== "/@s" && !path.startsWith("/@s/")) return null;
  const after = path.slice(4);
  const cut = after.indexOf("/");
  return cut < 0 ? { id: after, rest: "/" } : { id: after.slice(0, cut), rest: after.slice(cut) };
}

export function requireShareId(id: string) {
  if (id === "" || [...id].length > 64 || !ID_PATTERN.test(id)) throw new ShareError(400, INVALID_SHARE_ID, 404);
}

/**
 * The share may be used: it exists (its creator too), is enabled and unexpired, has downloads left,
 * and its creator is enabled and may still share every item (base path, path limit, the share bit
 * at the item): a creator disabled, deleted or narrowed cuts its shares off.
 */
export function requireUsable(use: ShareUse, now = Date.now()): { share: ShareRow; viewer: Viewer } {
  const { share, creator } = use;
  if (!share || !creator) throw gone();
  if (share.disabled || creator.disabled) throw invalid(403);
  if (share.expiresAtMs !== null && share.expiresAtMs <= now) throw invalid(410);
  if (share.maxAccessed > 0 && share.accessed >= share.maxAccessed) throw invalid(410);
  const viewer = viewerOf({ user: creator, roles: use.roles, via: "session", deviceKey: null });
  if (share.files.length === 0 || !share.files.every((path) => mayShare(viewer, path))) throw invalid(403);
  return { share, viewer };
}

/** The subject a share's links sign: the share, its code (a new code ends old links) and the path inside. */
const signedSubject = (share: ShareRow, rest: string) => `/@s/${share.id}${rest}#${share.codeHash}`;

/** The sign `raw_url` carries for a file of a share with a code, so the UI's previews need no code. */
export const shareSign = (state: FsState, share: ShareRow, rest: string) =>
  signPath(state.settings.token, signedSubject(share, rest), state.settings.linkExpirationHours);

/**
 * The share's code is given (`code`), or a sign of this share's file (`sign`, /sd only). Locked out
 * after five wrong codes (auth/lockout.ts): 429; a wrong code: 403.
 */
export async function checkCode(
  use: ShareUse,
  share: ShareRow,
  code: string,
  sign?: { rest: string; value: string },
): Promise<void> {
  if (share.codeHash === "") return;
  if (
    sign &&
    sign.value !== "" &&
    (await signProblem(use.state.settings.token, signedSubject(share, sign.rest), sign.value)) === null
  )
    return;
  if (isLockedOut(use.failures)) throw new ShareError(429, LOCKED_OUT_MESSAGE, 429);
  if (code === "" || !(await verifyStaticHash(await staticHash(code), share.codeHash)))
    throw new ShareError(403, WRONG_CODE, 403);
}

/** Where a path inside a share leads: the virtual root of a multi-item share, or a full path. */
export type ShareTarget = { root: true } | { root: false; path: string; item: string };

/**
 * The full path `rest` names inside the share. A one-item share's root is its item; a multi-item
 * share's root lists its items, each named by its name. `..` (any spelling the path module knows)
 * and control characters are refused, never resolved: nothing leads out of the share.
 */
export function targetOf(share: ShareRow, rest: string): ShareTarget {
  const inside = (item: string, below: string): ShareTarget => {
    const path = joinBasePath(item, below);
    if (path === null) throw notFound();
    return { root: false, path, item };
  };
  if (share.files.length === 1) return inside(share.files[0]!, rest);
  const clean = joinBasePath("/", rest);
  if (clean === null) throw notFound();
  if (clean === "/") return { root: true };
  const name = clean.split("/")[1]!;
  const item = share.files.find((path) => path !== "/" && baseName(path) === name);
  if (!item) throw notFound();
  return inside(item, clean.slice(name.length + 1) || "/");
}
