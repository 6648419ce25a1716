// What every WebDAV method starts from: the request read in ONE batch (the caller, its part of the
// tree, the metas, the settings, and the locks and dead properties it touches; docs/decisions.md
// D9.1), the checks of rules.ts over what it read, and the bodies and replies the methods share.
import type { Context } from "hono";
import { isAdmin } from "../../auth/guard.ts";
import type { FileObject } from "../../drivers/types.ts";
import { readAtMost } from "../../http/body.ts";
import type { AppEnv } from "../../http/context.ts";
import { readConfig } from "../../env.ts";
import { MountTree } from "../fs/mounts.ts";
import { lookup } from "../fs/operations.ts";
import { parentOf } from "../fs/path.ts";
import { throughAlias, viewerOf, type Viewer } from "../fs/rules.ts";
import type { FsState } from "../fs/state.ts";
import { fsStateReads } from "../fs/store.ts";
import { davCaller } from "./auth.ts";
import {
  BODY_NOT_UTF8,
  FRAGMENT_REFUSED,
  malformedXml,
  NO_STORAGE_HERE,
  NOT_FOUND,
  notAFolder,
  xmlBodyTooLarge,
} from "./messages.ts";
import {
  BadIfHeader,
  checkManage,
  checkRead,
  checkUnlocked,
  davPathOf,
  DavError,
  depthOf,
  destinationOf,
  fullPath,
  parseIf,
  submittedTokens,
  viewOf,
  type IfList,
} from "./rules.ts";
import { davReads, toDavRows, type DavRows } from "./store.ts";
import { BadXml, MULTISTATUS_CLOSE, MULTISTATUS_OPEN, parseXml, type XmlElement } from "./xml.ts";

/** The methods that only read (the rest write, or lock). */
export const READ_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "PROPFIND"]);

export interface DavRequest {
  c: Context<AppEnv>;
  viewer: Viewer;
  userId: number;
  admin: boolean;
  /** The path the client named, as it sees it (before its base path). */
  viewPath: string;
  /** The full path in the mount tree. */
  path: string;
  /** COPY's and MOVE's Destination as a full path; null for the other methods. */
  destination: string | null;
  depth: 0 | 1 | -1;
  fs: FsState;
  tree: MountTree;
  dav: DavRows;
  ifLists: IfList[];
  submitted: Set<string>;
}

/** The caller and everything the request touches, read in one batch (one more when a base path moves the paths). */
export async function readRequest(c: Context<AppEnv>, method: string): Promise<DavRequest> {
  const url = new URL(c.req.url);
  // A fragment is the client's own business; one in a request names nothing on the server.
  if (url.hash !== "") throw new DavError(400, FRAGMENT_REFUSED);
  const viewPath = davPathOf(url.pathname)!;
  // What the headers say, read up front (the batch needs the destination); a malformed header is
  // answered only once the caller is known, so that strangers learn nothing but 401.
  let malformed: unknown = null;
  const parsed = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch (error) {
      malformed ??= error instanceof BadIfHeader ? new DavError(400, error.message) : error;
      return fallback;
    }
  };
  const destination =
    method === "MOVE" || method === "COPY"
      ? parsed<string | null>(() => destinationOf(c.req.header("Destination"), url), null)
      : null;
  const ifLists = parsed(() => parseIf(c.req.header("If") ?? null), []);
  const depth = parsed(() => depthOf(c.req.header("Depth"), method), 0);

  // One batch: the caller, the tree under the paths (as if the base path were `/`, as every
  // admin's is; another base path costs one more read), the locks and the properties.
  const paths = [viewPath, ...(destination ? [destination] : [])];
  const now = Math.floor(Date.now() / 1000);
  const davNeeds = (at: string[]) => ({
    locked: at,
    properties: method === "PROPFIND" ? at[0]! : null,
    members: method === "PROPFIND" && depth === 1,
    propertyTrees: method === "MOVE" || method === "COPY" || method === "DELETE" ? at : [],
  });
  const fsReads = fsStateReads(c.var.db, {
    paths,
    folders: method === "PROPFIND" && depth === 1 ? [viewPath] : [],
    points: pointsRead(paths, !READ_METHODS.has(method)),
  });
  const davBatch = davReads(c.var.db, davNeeds(paths), now);
  const { caller, reads } = await davCaller(c, [...fsReads.reads, ...davBatch]);
  c.set("caller", caller);
  if (malformed) throw malformed;
  const fs = fsReads.toState(reads.slice(0, fsReads.reads.length));
  let dav = toDavRows(reads.slice(fsReads.reads.length));

  const viewer = viewerOf(caller);
  const path = fullPath(viewer, viewPath);
  const destinationPath = destination === null ? null : fullPath(viewer, destination);
  if (path !== viewPath || (destinationPath !== null && destinationPath !== destination)) {
    // The caller's base path moved the paths: its locks and properties are read again.
    const [first, ...rest] = davReads(c.var.db, davNeeds([path, ...(destinationPath ? [destinationPath] : [])]), now);
    dav = toDavRows(await c.var.db.batch([first, ...rest]));
  }

  return {
    c,
    viewer,
    userId: caller.user.id,
    admin: isAdmin(caller),
    viewPath,
    path,
    destination: destinationPath,
    depth,
    fs,
    // No password can be typed over WebDAV: an alias's guarded targets need the skip-password bit.
    tree: new MountTree(fs.tree, c.var.db, c.req.raw.signal).guardedBy(throughAlias(viewer, fs, path, "")),
    dav,
    ifLists,
    submitted: submittedTokens(ifLists),
  };
}

/**
 * The paths a request looks up (is it a mount point?): each path, and for a write the folder it
 * lands in. Only writes ask for the parent: a parent with many mounts below it (a folder of 10,000
 * storages) costs a read of every one of them to find its first.
 */
function pointsRead(paths: string[], writes: boolean): string[] {
  const points = new Set<string>();
  for (const path of paths) {
    if (path === "/") continue;
    points.add(path);
    if (writes && parentOf(path) !== "/") points.add(parentOf(path));
  }
  return [...points];
}

// ---------------------------------------------------------------------------------------------
// The checks of rules.ts, over what this request read.

export function requireRead(request: DavRequest, path: string, listing: boolean) {
  checkRead(request.viewer, request.fs.metas, path, listing);
}

export function requireManage(request: DavRequest, path: string, bits: number[], metaWrite = false) {
  checkManage(request.viewer, request.fs.metas, path, bits, metaWrite);
}

export function requireUnlocked(
  request: DavRequest,
  targets: { path: string; tree: boolean }[],
  etags: Map<string, string> = new Map(),
) {
  const { viewer, path, ifLists, submitted, userId } = request;
  checkUnlocked(
    { viewer, url: request.c.req.url, path, ifLists, locks: request.dav.locks, submitted, userId },
    targets,
    etags,
  );
}

// ---------------------------------------------------------------------------------------------
// What the methods look up

export async function existing(request: DavRequest, path: string): Promise<FileObject> {
  const object = await lookup(request.tree, path);
  if (!object) throw new DavError(404, NOT_FOUND);
  return object;
}

/** The folder a new member goes into: 409 when it is missing or a file (RFC 4918 §9.7.1). */
export async function requireParent(request: DavRequest, path: string) {
  const parent = await lookup(request.tree, parentOf(path));
  if (!parent?.isDir) throw new DavError(409, notAFolder(viewOf(request.viewer, parentOf(path))));
  if (!(await request.tree.storageAt(parentOf(path)))) throw new DavError(403, NO_STORAGE_HERE);
}

// ---------------------------------------------------------------------------------------------
// Bodies and replies

/** The request's XML body, parsed; null when empty. */
export async function xmlBody(c: Context<AppEnv>): Promise<XmlElement | null> {
  const bytes = await cappedBody(c);
  try {
    return parseXml(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch (error) {
    throw new DavError(400, error instanceof BadXml ? malformedXml(error.message) : BODY_NOT_UTF8);
  }
}

/** A body other than PUT's, whole, refused past MAX_BODY_BYTES (413) whether or not its length was declared. */
export async function cappedBody(c: Context<AppEnv>): Promise<Uint8Array> {
  const limit = readConfig(c.env).maxBodyBytes;
  const bytes = await readAtMost(c.req.raw.body, limit, c.req.header("Content-Length"));
  if (!bytes) throw new DavError(413, xmlBodyTooLarge(limit));
  return bytes;
}

export const created = (status: 201 | 204) => new Response(null, { status });

export const multistatus = (responses: string) =>
  new Response(`${MULTISTATUS_OPEN}${responses}${MULTISTATUS_CLOSE}\n`, {
    status: 207,
    headers: { "Content-Type": "application/xml; charset=utf-8" },
  });
