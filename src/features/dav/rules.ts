// The decisions of the WebDAV server, over plain inputs (header values, full paths, the caller's
// grants, the metas and locks a request read): which path a URL names, what Depth, Destination
// and Overwrite say, what a caller may read and change, and locks at work (RFC 4918 §6-7, §10.4):
// the `If` header parsed and evaluated against the locks a request read, and the rule that a
// locked resource changes only for a request that submits the lock's token, as the lock's owner.
// Each returns data or throws the refusal (DavError); the method handlers (server.ts's dispatch) do the I/O.
import type { FileErrorKind, FileObject } from "../../drivers/types.ts";
import { ACCESS_DENIED, hiddenInsideOf, INVALID_NAME, PERMISSION_DENIED, protectedInside } from "../fs/messages.ts";
import { baseName, decodeDownloadPath, escapePath, isValidName, isWithin, joinBasePath, parentOf } from "../fs/path.ts";
import {
  anchoredBy,
  guardInside,
  hiddenInside,
  mayAccess,
  mayReach,
  metaGrantsWrite,
  nearestMeta,
  Permission,
  permissionAt,
  withinPathLimit,
  type MetaRow,
  type Viewer,
} from "../fs/rules.ts";
import type { MountsAt } from "../fs/state.ts";
import { etagOf } from "../fs/serve.ts";
import {
  CONTENT_LENGTH_NEEDED,
  CONTROL_CHARACTERS,
  depthInvalid,
  DESTINATION_ELSEWHERE,
  DESTINATION_MISSING,
  DESTINATION_NOT_URL,
  destinationOutside,
  IF_EMPTY_LIST,
  IF_EXPECTED_CONDITION,
  IF_EXPECTED_LIST,
  IF_FAILED,
  IF_LIST_UNCLOSED,
  IF_TAG_AFTER_UNTAGGED,
  IF_TAG_WITHOUT_LIST,
  ifCloseMissing,
  isLocked,
  lockTokenSubmitted,
  NO_MANAGE_PERMISSION,
  NO_READ_PERMISSION,
  OVERWRITE_INVALID,
} from "./messages.ts";
import type { LockRow } from "./store.ts";
import { escapeXml } from "./xml.ts";

const DAV_PREFIX = "/dav";

/** A reply other than success: a status, a text a person can read, or an RFC 4918 precondition element. */
export class DavError extends Error {
  override name = "DavError";
  constructor(
    readonly status: number,
    message: string,
    readonly condition?: string,
  ) {
    super(message);
  }
}

/**
 * The HTTP status of a file-side failure, by its kind: a missing object or storage is 404, a
 * driver without the operation 405, a name taken 409, a refusal 403; the rest is the storage's or
 * this gateway's failure, 502.
 */
export function davStatusOf(kind: FileErrorKind): 403 | 404 | 405 | 409 | 502 {
  switch (kind) {
    case "not_found":
    case "no_storage":
      return 404;
    case "not_implemented":
      return 405;
    case "exists":
      return 409;
    case "forbidden":
      return 403;
    case "not_a_folder":
    case "not_a_file":
    case "upstream":
    case "unavailable":
    case "refused":
      return 502;
  }
}

// ---------------------------------------------------------------------------------------------
// Paths: a /dav URL to a full path in the mount tree, and back.

/** The client's view of a full path: the base path taken off again. */
export const viewOf = (viewer: Viewer, fullPath: string) => {
  if (viewer.basePath === "/" || viewer.basePath === "") return fullPath;
  const rest = fullPath.slice(viewer.basePath.replace(/\/+$/, "").length);
  return rest === "" ? "/" : rest;
};

/** Where the client finds a full path: under /dav, in its own view, collections ending in `/`. */
export const hrefOf = (viewer: Viewer, fullPath: string, isDir: boolean) => {
  const view = viewOf(viewer, fullPath);
  return view === "/" ? `${DAV_PREFIX}/` : `${DAV_PREFIX}${escapePath(view)}${isDir ? "/" : ""}`;
};

/** The path of a /dav URL (or of a Destination or If resource), decoded once; null outside /dav. */
export function davPathOf(pathname: string): string | null {
  if (pathname !== DAV_PREFIX && !pathname.startsWith(`${DAV_PREFIX}/`)) return null;
  return decodeDownloadPath(pathname.slice(DAV_PREFIX.length) || "/");
}

/** The full path of a path in the caller's view: its base path joined, the path limit held. */
export function fullPath(viewer: Viewer, viewPath: string): string {
  const path = joinBasePath(viewer.basePath, viewPath);
  if (path === null) throw new DavError(400, CONTROL_CHARACTERS);
  if (!withinPathLimit(viewer.grants, path)) throw new DavError(403, PERMISSION_DENIED);
  return path;
}

export function requireName(path: string) {
  if (path === "/" || !isValidName(baseName(path))) throw new DavError(400, INVALID_NAME);
}

// ---------------------------------------------------------------------------------------------
// Headers

/** `Depth`: 0, 1 or infinity (absent: infinity, except PROPFIND where clients that omit it mean 1). */
export function depthOf(header: string | undefined, method: string): 0 | 1 | -1 {
  if (header === undefined) return method === "PROPFIND" ? 1 : -1;
  const value = header.trim().toLowerCase();
  if (value === "0") return 0;
  if (value === "1") return 1;
  if (value === "infinity") return -1;
  throw new DavError(400, depthInvalid(header));
}

/** The Destination of a COPY or MOVE, in the caller's view: this server's /dav, else 502 (RFC 4918 §9.8.5). */
export function destinationOf(header: string | undefined, url: URL): string {
  if (!header) throw new DavError(400, DESTINATION_MISSING);
  let target: URL;
  try {
    target = new URL(header, url);
  } catch {
    throw new DavError(400, DESTINATION_NOT_URL);
  }
  if (target.host !== url.host) throw new DavError(502, DESTINATION_ELSEWHERE);
  const path = davPathOf(target.pathname);
  if (path === null) throw new DavError(502, destinationOutside(DAV_PREFIX));
  return path;
}

/** `Overwrite`: T (the default) or F. */
export function overwriteOf(header: string | undefined): "T" | "F" {
  const value = (header ?? "T").trim().toUpperCase();
  if (value !== "T" && value !== "F") throw new DavError(400, OVERWRITE_INVALID);
  return value;
}

/** The upload's length: Content-Length, or macOS Finder's X-Expected-Entity-Length with chunked bodies. */
export function uploadSize(header: (name: string) => string | undefined): number {
  for (const name of ["Content-Length", "X-Expected-Entity-Length"]) {
    const value = header(name);
    if (value !== undefined && /^\d{1,16}$/.test(value.trim())) return Number(value.trim());
  }
  throw new DavError(411, CONTENT_LENGTH_NEEDED);
}

/** AList's Etag: the greatest hash the upstream gave, else mtime and size. */
export const etagOfObject = (object: FileObject) => {
  // Most listings carry no hashes: no arrays made for them, one per entry of a big PROPFIND.
  if (object.hashInfo === undefined) return etagOf(object);
  const hashes = Object.values(object.hashInfo ?? {})
    .filter(Boolean)
    .sort();
  return hashes.length > 0 ? `"${hashes.at(-1)}"` : etagOf(object);
};

/** The entity tags of an If-Match or If-None-Match list, weak ones compared as strong. */
export const etagList = (header: string) => header.split(",").map((tag) => tag.trim().replace(/^W\//, ""));

// ---------------------------------------------------------------------------------------------
// Permissions (AList v3.58.0 server/webdav.go:129-150 with docs/decisions.md D8.2): WebDAV read at
// the path (PROPFIND also where a scope below grants it), meta hide and password rules (no password
// can be typed over WebDAV: a guarded path needs the skip-password bit), manage plus the
// operation's bit for changes.

/** May the viewer open `path` without a password (meta hiding, on its whole way, and passwords)? */
function checkAccess(viewer: Viewer, metas: readonly MetaRow[], path: string) {
  if (!mayReach(viewer, metas, path) || !mayAccess(viewer, nearestMeta(metas, path), path, ""))
    throw new DavError(403, ACCESS_DENIED);
}

/**
 * A change that takes the subtree at `path` (COPY, MOVE, DELETE, and a destination that is
 * overwritten): every meta password in it needs the skip-password bit, as none can be typed.
 */
export function checkSubtree(viewer: Viewer, metas: readonly MetaRow[], path: string) {
  checkAccess(viewer, metas, path);
  if (guardInside(viewer, metas, path, "")) throw new DavError(403, protectedInside(baseName(path)));
}

/** A COPY or MOVE that would carry hidden names out from under the rules that hide them: 403. */
export function checkNothingHidden(viewer: Viewer, metas: readonly MetaRow[], path: string, destination: string) {
  if (hiddenInside(viewer, metas, path, destination)) throw new DavError(403, hiddenInsideOf(baseName(path)));
}

/** A MOVE or DELETE of the root, a mount point or a folder holding one, the base path, a scope root (or above them): 403. */
export function checkMovable(viewer: Viewer, path: string, mounts: MountsAt, operation: "move" | "remove") {
  const refusal = anchoredBy(viewer, path, mounts, operation);
  if (refusal) throw new DavError(403, refusal);
}

export function checkRead(viewer: Viewer, metas: readonly MetaRow[], path: string, listing: boolean) {
  const here = (permissionAt(viewer.grants, path) & Permission.WEBDAV_READ) !== 0;
  const below =
    listing &&
    viewer.grants.scopes.some(
      (scope) => isWithin(scope.path, path) && (scope.permission & Permission.WEBDAV_READ) !== 0,
    );
  if (!here && !below) throw new DavError(403, NO_READ_PERMISSION);
  checkAccess(viewer, metas, path);
}

export function checkManage(
  viewer: Viewer,
  metas: readonly MetaRow[],
  path: string,
  bits: number[],
  metaWrite = false,
) {
  const dir = parentOf(path);
  checkAccess(viewer, metas, dir);
  checkAccess(viewer, metas, path);
  const granted = permissionAt(viewer.grants, path);
  if ((granted & Permission.WEBDAV_MANAGE) === 0) throw new DavError(403, NO_MANAGE_PERMISSION);
  // A meta's write grant is judged at the folder the write lands in, as fs/list's `write` flag.
  const writeByMeta = metaWrite && metaGrantsWrite(nearestMeta(metas, dir), dir);
  if (!bits.some((bit) => (granted & bit) !== 0) && !writeByMeta) throw new DavError(403, PERMISSION_DENIED);
}

// ---------------------------------------------------------------------------------------------
// Locks and the If header

interface IfCondition {
  not: boolean;
  token?: string;
  etag?: string;
}

/** One parenthesised list of an If header; `resource` is the tagged URL, or null for the request's own. */
export interface IfList {
  resource: string | null;
  conditions: IfCondition[];
}

/** An If header that does not follow RFC 4918 §10.4's grammar: 400. */
export class BadIfHeader extends Error {
  override name = "BadIfHeader";
}

/** Parses an If header; an absent header is an empty list. */
export function parseIf(header: string | null): IfList[] {
  if (header === null) return [];
  const lists: IfList[] = [];
  let resource: string | null = null;
  let tagged: boolean | null = null;
  let i = 0;
  const skip = () => {
    while (i < header.length && /\s/.test(header[i]!)) i++;
  };
  const until = (end: string) => {
    const close = header.indexOf(end, i + 1);
    if (close < 0) throw new BadIfHeader(ifCloseMissing(end));
    const text = header.slice(i + 1, close);
    i = close + 1;
    return text;
  };
  for (skip(); i < header.length; skip()) {
    if (header[i] === "<") {
      if (tagged === false) throw new BadIfHeader(IF_TAG_AFTER_UNTAGGED);
      tagged = true;
      resource = until(">");
      skip();
      if (header[i] !== "(") throw new BadIfHeader(IF_TAG_WITHOUT_LIST);
      continue;
    }
    if (header[i] !== "(") throw new BadIfHeader(IF_EXPECTED_LIST);
    if (tagged === null) tagged = false;
    i++;
    const conditions: IfCondition[] = [];
    for (skip(); header[i] !== ")"; skip()) {
      if (i >= header.length) throw new BadIfHeader(IF_LIST_UNCLOSED);
      let not = false;
      if (/^not(?!\w)/i.test(header.slice(i, i + 4))) {
        not = true;
        i += 3;
        skip();
      }
      if (header[i] === "<") conditions.push({ not, token: until(">") });
      else if (header[i] === "[") conditions.push({ not, etag: until("]") });
      else throw new BadIfHeader(IF_EXPECTED_CONDITION);
    }
    i++;
    if (conditions.length === 0) throw new BadIfHeader(IF_EMPTY_LIST);
    lists.push({ resource: tagged ? resource : null, conditions });
  }
  return lists;
}

/** The lock tokens a request submits: every token its If header names, outside `Not`. */
export const submittedTokens = (lists: readonly IfList[]) =>
  new Set(lists.flatMap((list) => list.conditions.filter((c) => !c.not && c.token).map((c) => c.token!)));

/** Does `lock` cover `path`: on it, or above it with depth infinity? */
export const covers = (lock: LockRow, path: string) =>
  lock.path === path || (lock.depth === -1 && isWithin(path, lock.path));

/**
 * Whether the If header holds (RFC 4918 §10.4): some list whose conditions all hold. A token holds
 * when a live lock with it covers the list's resource; an entity tag when it is the resource's.
 * No header holds trivially.
 */
export function ifHolds(
  lists: readonly IfList[],
  locks: readonly LockRow[],
  requestPath: string,
  resolve: (href: string) => string | null,
  etagOf: (path: string) => string | null,
): boolean {
  if (lists.length === 0) return true;
  return lists.some((list) => {
    const path = list.resource === null ? requestPath : resolve(list.resource);
    if (path === null) return false;
    return list.conditions.every((condition) => {
      const holds =
        condition.token !== undefined
          ? locks.some((lock) => lock.token === condition.token && covers(lock, path))
          : etagOf(path) === condition.etag;
      return holds !== condition.not;
    });
  });
}

/**
 * The first lock that stands in the way of changing `path` (with `tree`, anything below it too),
 * unless the request submitted its token as its owner; null when the change may go ahead.
 */
export function blockingLock(
  locks: readonly LockRow[],
  path: string,
  tree: boolean,
  submitted: ReadonlySet<string>,
  userId: number,
): LockRow | null {
  return (
    locks.find(
      (lock) =>
        (covers(lock, path) || (tree && isWithin(lock.path, path))) &&
        !(submitted.has(lock.token) && lock.userId === userId),
    ) ?? null
  );
}

/** `Timeout: Second-600, Infinite`: the first value we accept, capped; the default without one. */
const DEFAULT_LOCK_SECONDS = 3600;
const MAX_LOCK_SECONDS = 86_400;

export function lockTimeout(header: string | null): number {
  for (const part of (header ?? "").split(",").map((p) => p.trim())) {
    if (/^infinite$/i.test(part)) return MAX_LOCK_SECONDS;
    const seconds = /^second-(\d{1,10})$/i.exec(part);
    if (seconds) return Math.max(1, Math.min(Number(seconds[1]), MAX_LOCK_SECONDS));
  }
  return DEFAULT_LOCK_SECONDS;
}

/** What a request submitted about locks, and the locks it read. */
export interface LockContext {
  viewer: Viewer;
  /** The request's URL: the If header's tagged resources are resolved against it. */
  url: string;
  /** The full path the request names. */
  path: string;
  ifLists: readonly IfList[];
  locks: readonly LockRow[];
  submitted: ReadonlySet<string>;
  userId: number;
}

/** 423 unless every lock on the way is submitted by its owner; 412 when the If header does not hold. */
export function checkUnlocked(
  request: LockContext,
  targets: { path: string; tree: boolean }[],
  etags: ReadonlyMap<string, string> = new Map(),
) {
  const resolve = (href: string) => {
    try {
      const path = davPathOf(new URL(href, request.url).pathname);
      return path === null ? null : fullPath(request.viewer, path);
    } catch {
      return null;
    }
  };
  if (!ifHolds(request.ifLists, request.locks, request.path, resolve, (path) => etags.get(path) ?? null))
    throw new DavError(412, IF_FAILED);
  for (const target of targets) {
    const lock = blockingLock(request.locks, target.path, target.tree, request.submitted, request.userId);
    if (lock)
      throw new DavError(
        423,
        isLocked(viewOf(request.viewer, lock.path)),
        lockTokenSubmitted(escapeXml(hrefOf(request.viewer, lock.path, false))),
      );
  }
}
