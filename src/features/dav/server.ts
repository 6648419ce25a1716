// The WebDAV server at /dav (RFC 4918 class 1 and 2) on the file layer of /api/fs: the same mount
// tree, permissions (WebDAV read and manage bits, AList v3.58.0 server/webdav.go:129-150), metas,
// base path and storage policies. Each request reads its caller, its part of the tree, the metas,
// the settings and the locks and dead properties it touches in ONE batch (docs/decisions.md D9.1);
// writes to locks and properties follow only when there is something to write. Bodies stream both
// ways. This file is the method handlers; their decisions (paths, headers, permissions, locks) are
// rules.ts and the texts they answer messages.ts.
import type { Context } from "hono";
import { isAdmin } from "../../auth/guard.ts";
import { type FileObject, redirectable } from "../../drivers/types.ts";
import type { AppEnv } from "../../http/context.ts";
import { readConfig } from "../../env.ts";
import { readAtMost } from "../../http/body.ts";
import { ApiError, FileError } from "../../http/errors.ts";
import { batchedText, emptyBody } from "../../lib/streams.ts";
import { MountTree } from "../fs/mounts.ts";
import { lookup, makeDirs, need, putFile, removePath, transfer } from "../fs/operations.ts";
import { baseName, escapePath, isWithin, joinName, parentOf } from "../fs/path.ts";
import { nearestMeta, Permission, signFor, throughAlias, viewerOf, visibleEntries, type Viewer } from "../fs/rules.ts";
import { contentTypeOf, httpDateSeconds, notModified, parseRange, preconditionFailed, serveLink } from "../fs/serve.ts";
import type { FsState } from "../fs/state.ts";
import { fsStateReads } from "../fs/store.ts";
import { IndexChanges } from "../search/changes.ts";
import { davCaller } from "./auth.ts";
import {
  ALREADY_EXISTS,
  BASIC_CHALLENGE,
  BODY_NOT_UTF8,
  CANNOT_MODIFY_PROTECTED_PROPERTY,
  DELETE_DEPTH,
  DESTINATION_EXISTS,
  FILE_EXISTS,
  FRAGMENT_REFUSED,
  IF_MATCH_FAILED,
  intoItself,
  isLocked,
  LOCK_DEPTH,
  LOCK_EXPIRED,
  LOCK_NOT_LOCKINFO,
  LOCK_OF_ANOTHER,
  LOCK_SCOPE_UNKNOWN,
  LOCK_TOKEN_MATCHES_REQUEST_URI,
  LOCK_TOKEN_MISSING,
  malformedXml,
  methodNotAnswered,
  MKCOL_BODY,
  NO_CONFLICTING_LOCK,
  NO_LOCK_IN_IF,
  NO_STORAGE_HERE,
  NO_SUCH_LOCK,
  NOT_FOUND,
  notAFolder,
  PROPFIND_EMPTY,
  PROPFIND_FINITE_DEPTH,
  PROPFIND_INFINITY,
  PROPFIND_NOT_PROPFIND,
  PROPFIND_UNKNOWN,
  PROPPATCH_NOT_UPDATE,
  PROPPATCH_UNKNOWN,
  PUT_ON_FOLDER,
  SAME_SOURCE_AND_DESTINATION,
  STORAGE_ROOT_REMOVE,
  transferDepth,
  withoutProp,
  WRITE_LOCKS_ONLY,
  xmlBodyTooLarge,
} from "./messages.ts";
import {
  BadIfHeader,
  checkManage,
  checkMovable,
  checkNothingHidden,
  checkSubtree,
  checkRead,
  checkUnlocked,
  covers,
  davPathOf,
  DavError,
  davStatusOf,
  depthOf,
  destinationOf,
  etagList,
  etagOfObject,
  fullPath,
  hrefOf,
  lockTimeout,
  overwriteOf,
  parseIf,
  requireName,
  submittedTokens,
  uploadSize,
  viewOf,
  type IfList,
} from "./rules.ts";
import { runBatch } from "../../db/plan.ts";
import {
  copyTreeProperties,
  davReads,
  deleteLock,
  forgetTree,
  insertLock,
  patchProperties,
  refreshLock,
  toDavRows,
  type DavRows,
  type LockRow,
} from "./store.ts";
import {
  BadXml,
  childDav,
  clarkName,
  DAV_NS,
  davResponse,
  elements,
  emptyElement,
  escapeXml,
  isDav,
  MULTISTATUS_CLOSE,
  MULTISTATUS_OPEN,
  parseXml,
  serialize,
  type XmlElement,
} from "./xml.ts";

/** Each method and its handler, in the order `Allow` lists them; OPTIONS is answered before sign-in. */
const HANDLERS = {
  GET: get,
  HEAD: get,
  PUT: put,
  DELETE: (request) => remove(request, request.depth),
  MKCOL: mkcol,
  COPY: (request) => copyOrMove(request, "COPY", request.destination!, request.depth),
  MOVE: (request) => copyOrMove(request, "MOVE", request.destination!, request.depth),
  PROPFIND: (request) => propfind(request, request.depth),
  PROPPATCH: proppatch,
  LOCK: (request) => lock(request, request.depth),
  UNLOCK: unlock,
} satisfies Record<string, (request: DavRequest) => Promise<Response>>;
type DavMethod = keyof typeof HANDLERS;

const METHODS = ["OPTIONS", ...Object.keys(HANDLERS)].join(", ");
const READ_METHODS = new Set<DavMethod>(["GET", "HEAD", "PROPFIND"]);
const isDavMethod = (method: string): method is DavMethod => Object.hasOwn(HANDLERS, method);

/** What one request knows: who, where (full paths), the tree, its locks and properties. */
interface DavRequest {
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

export async function handleDav(c: Context<AppEnv>): Promise<Response> {
  try {
    return await dispatch(c);
  } catch (error) {
    return errorReply(error);
  }
}

async function dispatch(c: Context<AppEnv>): Promise<Response> {
  const method = c.req.method.toUpperCase();
  // Clients probe OPTIONS before they sign in: it says what the server speaks and reads nothing.
  if (method === "OPTIONS")
    return new Response(null, {
      status: 200,
      headers: { DAV: "1, 2", "MS-Author-Via": "DAV", Allow: METHODS, "Content-Length": "0" },
    });
  if (!isDavMethod(method)) throw new DavError(405, methodNotAnswered(method));
  const request = await readRequest(c, method);
  if (READ_METHODS.has(method)) requireRead(request, request.path, method === "PROPFIND");
  return HANDLERS[method](request);
}

/** The caller and everything the request touches, read in one batch (one more when a base path moves the paths). */
async function readRequest(c: Context<AppEnv>, method: DavMethod): Promise<DavRequest> {
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
    properties: method === "PROPFIND" ? [at[0]!] : [],
    members: method === "PROPFIND" && depth === 1,
    propertyTrees: method === "MOVE" || method === "COPY" || method === "DELETE" ? at : [],
  });
  const fsReads = fsStateReads(c.var.db, {
    paths,
    folders: method === "PROPFIND" && depth === 1 ? [viewPath] : [],
    points: pointsRead(paths),
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

/** The paths a request looks up (is it a mount point?): each path, and the folder a write lands in. */
function pointsRead(paths: string[]): string[] {
  const points = new Set<string>();
  for (const path of paths) {
    if (path === "/") continue;
    points.add(path);
    if (parentOf(path) !== "/") points.add(parentOf(path));
  }
  return [...points];
}

// ---------------------------------------------------------------------------------------------
// The checks of rules.ts, over what this request read.

function requireRead(request: DavRequest, path: string, listing: boolean) {
  checkRead(request.viewer, request.fs.metas, path, listing);
}

function requireManage(request: DavRequest, path: string, bits: number[], metaWrite = false) {
  checkManage(request.viewer, request.fs.metas, path, bits, metaWrite);
}

function requireUnlocked(
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
// Methods

async function existing(request: DavRequest, path: string): Promise<FileObject> {
  const object = await lookup(request.tree, path);
  if (!object) throw new DavError(404, NOT_FOUND);
  return object;
}

/** The folder a new member goes into: 409 when it is missing or a file (RFC 4918 §9.7.1). */
async function requireParent(request: DavRequest, path: string) {
  const parent = await lookup(request.tree, parentOf(path));
  if (!parent?.isDir) throw new DavError(409, notAFolder(viewOf(request.viewer, parentOf(path))));
  if (!(await request.tree.storageAt(parentOf(path)))) throw new DavError(403, NO_STORAGE_HERE);
}

async function get(request: DavRequest): Promise<Response> {
  const { c, path, tree, fs } = request;
  const object = await existing(request, path);
  if (object.isDir) return folderPage(request, object);
  const mounted = await tree.mount(path);
  const policy = mounted.storage.webdavPolicy;
  const proxyOnly = mounted.driver.config.only_proxy || mounted.driver.config.only_local;
  if (policy === "302_redirect" && !proxyOnly) {
    const link = await tree.link(path, { redirect: true, headers: c.req.raw.headers });
    if (redirectable(link))
      return new Response(null, { status: 302, headers: { Location: link.url, "Cache-Control": "no-store" } });
  }
  if (policy === "use_proxy_url" && mounted.storage.downProxyUrl !== "") {
    const base = mounted.storage.downProxyUrl.split("\n")[0]!.trim().replace(/\/+$/, "");
    const sign = mounted.storage.downProxySign ? `?sign=${await signFor(fs, path, mounted.storage, true)}` : "";
    return new Response(null, {
      status: 302,
      headers: { Location: `${base}${escapePath(path)}${sign}`, "Cache-Control": "no-store" },
    });
  }
  // Conditions are judged here against the Etag PROPFIND shows (an upstream's own differs), so
  // If-Match after a PROPFIND means the same thing on every storage; only the range goes upstream.
  const etag = etagOfObject(object);
  const modified = Math.floor(object.modified.getTime() / 1000);
  const validators = { Etag: etag, "Last-Modified": object.modified.toUTCString() };
  if (preconditionFailed(c.req.raw.headers, etag, modified))
    return new Response(null, { status: 412, headers: validators });
  if (notModified(c.req.raw.headers, etag, modified)) return new Response(null, { status: 304, headers: validators });
  const forwarded = new Headers();
  const ifRange = c.req.header("If-Range");
  const range = c.req.header("Range");
  // Checked here, before the link is asked for: an upstream is never sent a range it may choke on.
  if (
    range &&
    parseRange(range) !== null &&
    (ifRange === undefined || ifRange === etag || httpDateSeconds(ifRange) === modified)
  )
    forwarded.set("Range", range);
  const upstreamRequest = new Request(c.req.raw.url, {
    method: c.req.method === "HEAD" ? "HEAD" : "GET",
    headers: forwarded,
    signal: c.req.raw.signal,
  });
  const link = await tree.link(path, { redirect: false, headers: forwarded });
  const reply = await serveLink(upstreamRequest, link, baseName(path));
  const headers = new Headers(reply.headers);
  // WebDAV clients open files in place: no download prompt.
  headers.delete("Content-Disposition");
  headers.set("Etag", etag);
  headers.set("Last-Modified", validators["Last-Modified"]);
  return new Response(reply.body, { status: reply.status, headers });
}

/** A folder opened in a browser: a plain list of links (WebDAV clients PROPFIND instead). */
async function folderPage(request: DavRequest, folder: FileObject): Promise<Response> {
  const entries = await children(request, request.path);
  const rows = entries.map(
    (entry) =>
      `<li><a href="${escapeXml(hrefOf(request.viewer, joinName(request.path, entry.name), entry.isDir))}">${escapeXml(entry.name)}${entry.isDir ? "/" : ""}</a></li>`,
  );
  const title = escapeXml(viewOf(request.viewer, request.path));
  const body = `<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><ul>${rows.join("")}</ul>\n`;
  return new Response(request.c.req.method === "HEAD" ? null : body, {
    headers: { "Content-Type": "text/html; charset=utf-8", "Last-Modified": folder.modified.toUTCString() },
  });
}

async function children(request: DavRequest, path: string): Promise<FileObject[]> {
  const entries = await request.tree.list(path);
  return visibleEntries(request.viewer, nearestMeta(request.fs.metas, path), path, entries);
}

/** The live properties of an object (RFC 4918 §15), as XML, by Clark name. */
function liveProperties(request: DavRequest, path: string, object: FileObject): Map<string, string> {
  const props = new Map<string, string>();
  const dav = (local: string, value: string) =>
    props.set(`{${DAV_NS}}${local}`, value === "" ? `<D:${local}/>` : `<D:${local}>${value}</D:${local}>`);
  dav("resourcetype", object.isDir ? "<D:collection/>" : "");
  dav("displayname", escapeXml(path === "/" ? "" : baseName(path)));
  dav("getlastmodified", object.modified.toUTCString());
  dav("creationdate", (object.created ?? object.modified).toISOString().replace(/\.\d{3}Z$/, "Z"));
  if (!object.isDir) {
    dav("getcontentlength", String(object.size));
    dav("getcontenttype", escapeXml(contentTypeOf(object.name)));
    dav("getetag", escapeXml(etagOfObject(object)));
  }
  dav(
    "supportedlock",
    "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry><D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>",
  );
  dav(
    "lockdiscovery",
    request.dav.locks
      .filter((lock) => covers(lock, path))
      .map((lock) => activeLock(request, lock))
      .join(""),
  );
  return props;
}

type PropfindKind =
  | { kind: "allprop"; include: string[] }
  | { kind: "propname" }
  | { kind: "prop"; names: { ns: string; local: string }[] };

function propfindKind(body: XmlElement | null): PropfindKind {
  if (body === null) return { kind: "allprop", include: [] };
  if (!isDav(body, "propfind")) throw new DavError(400, PROPFIND_NOT_PROPFIND);
  const [first] = elements(body);
  if (!first) throw new DavError(400, PROPFIND_EMPTY);
  if (isDav(first, "propname")) return { kind: "propname" };
  if (isDav(first, "allprop"))
    return { kind: "allprop", include: elements(childDav(body, "include") ?? first).map(clarkName) };
  if (isDav(first, "prop")) return { kind: "prop", names: elements(first).map((e) => ({ ns: e.ns, local: e.local })) };
  throw new DavError(400, PROPFIND_UNKNOWN);
}

async function propfind(request: DavRequest, depth: 0 | 1 | -1): Promise<Response> {
  if (depth === -1) throw new DavError(403, PROPFIND_INFINITY, PROPFIND_FINITE_DEPTH);
  const kind = propfindKind(await xmlBody(request.c));
  const object = await existing(request, request.path);
  const members = depth === 1 && object.isDir ? await children(request, request.path) : [];
  const dead = new Map<string, Map<string, string>>();
  for (const row of request.dav.properties) {
    if (!dead.has(row.path)) dead.set(row.path, new Map());
    dead.get(row.path)!.set(row.name, row.xml);
  }
  const responseOf = (path: string, entry: FileObject) => {
    const live = liveProperties(request, path, entry);
    const own = dead.get(path) ?? new Map<string, string>();
    const href = hrefOf(request.viewer, path, entry.isDir);
    if (kind.kind === "propname")
      return davResponse(href, {
        propstats: [{ status: 200, props: [...live.keys(), ...own.keys()].map((name) => emptyElement(nameOf(name))) }],
      });
    if (kind.kind === "allprop")
      return davResponse(href, { propstats: [{ status: 200, props: [...live.values(), ...own.values()] }] });
    const found: string[] = [];
    const missing: string[] = [];
    for (const name of kind.names) {
      const clark = clarkName(name);
      const value = live.get(clark) ?? own.get(clark);
      if (value === undefined) missing.push(emptyElement(name));
      else found.push(value);
    }
    return davResponse(href, {
      propstats: [
        { status: 200, props: found },
        { status: 404, props: missing },
      ],
    });
  };
  // Written as it goes, 200 entries a step: a folder of 10,000 entries is never one string in memory.
  const body = batchedText(members, 200, (entry) => responseOf(joinName(request.path, entry.name), entry), {
    head: MULTISTATUS_OPEN + responseOf(request.path, object),
    tail: `${MULTISTATUS_CLOSE}\n`,
  });
  return new Response(body, { status: 207, headers: { "Content-Type": "application/xml; charset=utf-8" } });
}

const nameOf = (clark: string) => {
  const end = clark.indexOf("}");
  return { ns: clark.slice(1, end), local: clark.slice(end + 1) };
};

async function proppatch(request: DavRequest): Promise<Response> {
  const body = await xmlBody(request.c);
  if (body === null || !isDav(body, "propertyupdate")) throw new DavError(400, PROPPATCH_NOT_UPDATE);
  const object = await existing(request, request.path);
  requireManage(request, request.path, [Permission.WEBDAV_MANAGE]);
  requireUnlocked(request, [{ path: request.path, tree: false }], new Map([[request.path, etagOfObject(object)]]));
  const changes: ({ set: { name: string; xml: string } } | { remove: string })[] = [];
  const names: { ns: string; local: string }[] = [];
  for (const action of elements(body)) {
    const set = isDav(action, "set");
    if (!set && !isDav(action, "remove")) throw new DavError(400, PROPPATCH_UNKNOWN);
    const prop = childDav(action, "prop");
    if (!prop) throw new DavError(400, withoutProp(action.local));
    for (const property of elements(prop)) {
      names.push(property);
      changes.push(
        set ? { set: { name: clarkName(property), xml: serialize(property) } } : { remove: clarkName(property) },
      );
    }
  }
  // Live properties are the server's: one refused makes the whole update fail (RFC 4918 §9.2).
  const protectedNames = names.filter((name) => name.ns === DAV_NS);
  const href = hrefOf(request.viewer, request.path, object.isDir);
  if (protectedNames.length > 0) {
    const others = names.filter((name) => name.ns !== DAV_NS);
    const reply = davResponse(href, {
      propstats: [
        { status: 403, props: protectedNames.map(emptyElement), error: CANNOT_MODIFY_PROTECTED_PROPERTY },
        { status: 424, props: others.map(emptyElement) },
      ],
    });
    return multistatus(reply);
  }
  await patchProperties(request.c.var.db, request.path, changes);
  return multistatus(davResponse(href, { propstats: [{ status: 200, props: names.map(emptyElement) }] }));
}

async function mkcol(request: DavRequest): Promise<Response> {
  const { path } = request;
  if ((await cappedBody(request.c)).byteLength > 0) throw new DavError(415, MKCOL_BODY);
  requireName(path);
  requireManage(request, path, [Permission.WRITE], true);
  if (await lookup(request.tree, path)) throw new DavError(405, ALREADY_EXISTS);
  await requireParent(request, path);
  requireUnlocked(request, [
    { path, tree: false },
    { path: parentOf(path), tree: false },
  ]);
  const parent = await request.tree.mount(parentOf(path));
  await need(parent, "makeDir")(parent.actualPath, baseName(path));
  const index = new IndexChanges(request.c.var.db, request.fs);
  index.added(path, true, 0);
  await index.flush();
  return created(201);
}

async function put(request: DavRequest): Promise<Response> {
  const { c, path, tree } = request;
  requireName(path);
  requireManage(request, path, [Permission.WRITE], true);
  const before = await lookup(tree, path);
  if (before?.isDir) throw new DavError(405, PUT_ON_FOLDER);
  if (!before) await requireParent(request, path);
  requireUnlocked(
    request,
    [{ path, tree: false }, ...(before ? [] : [{ path: parentOf(path), tree: false }])],
    new Map(before ? [[path, etagOfObject(before)]] : []),
  );
  if (c.req.header("If-None-Match")?.trim() === "*" && before) throw new DavError(412, FILE_EXISTS);
  if (
    c.req.header("If-Match") &&
    (!before || !etagList(c.req.header("If-Match")!).some((tag) => tag === "*" || tag === etagOfObject(before)))
  )
    throw new DavError(412, IF_MATCH_FAILED);
  const size = uploadSize((name) => c.req.header(name));
  const parent = await tree.mount(parentOf(path));
  await putFile(parent, {
    name: baseName(path),
    size,
    body: c.req.raw.body ?? emptyBody(),
    contentType: c.req.header("Content-Type") || contentTypeOf(baseName(path)),
  });
  const index = new IndexChanges(c.var.db, request.fs);
  index.added(path, false, size);
  await index.flush();
  return created(before ? 204 : 201);
}

async function remove(request: DavRequest, depth: 0 | 1 | -1): Promise<Response> {
  const { path, tree } = request;
  const object = await existing(request, path);
  if (object.isDir && depth !== -1) throw new DavError(400, DELETE_DEPTH);
  requireManage(request, path, [Permission.REMOVE]);
  checkSubtree(request.viewer, request.fs.metas, path);
  checkMovable(request.viewer, path, await tree.mountsAt(path), "remove");
  const storage = path === "/" ? null : await tree.storageAt(path);
  if (!storage || (await tree.mount(path)).actualPath === "/") throw new DavError(403, STORAGE_ROOT_REMOVE);
  requireUnlocked(
    request,
    [
      { path, tree: true },
      { path: parentOf(path), tree: false },
    ],
    new Map([[path, etagOfObject(object)]]),
  );
  await removePath(tree, path);
  const index = new IndexChanges(request.c.var.db, request.fs);
  index.removed(path);
  await runBatch(request.c.var.db, [
    ...forgetTree(
      request.c.var.db,
      path,
      request.dav.locks.some((lock) => isWithin(lock.path, path)),
      (request.dav.propertyCounts[0] ?? 0) > 0,
    ),
    ...index.take(),
  ]);
  return created(204);
}

async function copyOrMove(
  request: DavRequest,
  method: "COPY" | "MOVE",
  destination: string,
  depth: 0 | 1 | -1,
): Promise<Response> {
  const { c, path, tree } = request;
  const db = c.var.db;
  if (depth === 1 || (method === "MOVE" && depth === 0)) throw new DavError(400, transferDepth(method));
  const overwriteHeader = overwriteOf(c.req.header("Overwrite"));
  const source = await existing(request, path);
  requireName(destination);
  if (destination === path) throw new DavError(403, SAME_SOURCE_AND_DESTINATION);
  if (isWithin(destination, path)) throw new DavError(403, intoItself(method));
  requireManage(request, path, method === "MOVE" ? [Permission.MOVE, Permission.RENAME] : [Permission.COPY]);
  requireManage(request, destination, [Permission.WRITE], true);
  checkSubtree(request.viewer, request.fs.metas, path);
  checkSubtree(request.viewer, request.fs.metas, destination);
  checkNothingHidden(request.viewer, request.fs.metas, path, destination);
  if (method === "MOVE") checkMovable(request.viewer, path, await tree.mountsAt(path), "move");
  await requireParent(request, destination);
  const target = await lookup(tree, destination);
  if (target && overwriteHeader === "F") throw new DavError(412, DESTINATION_EXISTS);
  // An existing destination is deleted first: the same rules as DELETE.
  if (target) checkMovable(request.viewer, destination, await tree.mountsAt(destination), "remove");
  const etags = new Map([
    [path, etagOfObject(source)],
    ...(target ? [[destination, etagOfObject(target)] as [string, string]] : []),
  ]);
  requireUnlocked(
    request,
    [
      ...(method === "MOVE"
        ? [
            { path, tree: true },
            { path: parentOf(path), tree: false },
          ]
        : []),
      { path: destination, tree: true },
      { path: parentOf(destination), tree: false },
    ],
    etags,
  );
  const [sourceProperties = 0, destinationProperties = 0] = request.dav.propertyCounts;
  if (target) {
    await removePath(tree, destination);
    await runBatch(db, forgetTree(db, destination, true, destinationProperties > 0));
  }
  const index = new IndexChanges(db, request.fs);
  if (target) index.removed(destination);
  if (method === "COPY" && depth === 0 && source.isDir) {
    await makeDirs(tree, destination);
    index.added(destination, true, 0);
  } else {
    await transfer(tree, method === "MOVE" ? "move" : "copy", path, parentOf(destination), baseName(destination));
    if (method === "MOVE") index.moved(path, destination);
    else index.copied(path, destination);
  }
  // Dead properties go with the resource; locks stay behind (RFC 4918 §7.7: a moved resource is not locked).
  await runBatch(db, [
    ...(sourceProperties > 0 ? copyTreeProperties(db, path, destination) : []),
    ...(method === "MOVE"
      ? forgetTree(
          db,
          path,
          request.dav.locks.some((lock) => isWithin(lock.path, path)),
          sourceProperties > 0,
        )
      : []),
    ...index.take(),
  ]);
  return created(target ? 204 : 201);
}

function activeLock(request: DavRequest, lock: LockRow): string {
  return [
    "<D:activelock>",
    "<D:locktype><D:write/></D:locktype>",
    `<D:lockscope>${lock.exclusive ? "<D:exclusive/>" : "<D:shared/>"}</D:lockscope>`,
    `<D:depth>${lock.depth === -1 ? "infinity" : "0"}</D:depth>`,
    lock.owner === "" ? "" : lock.owner,
    `<D:timeout>Second-${Math.max(0, lock.expiresAt - Math.floor(Date.now() / 1000))}</D:timeout>`,
    `<D:locktoken><D:href>${escapeXml(lock.token)}</D:href></D:locktoken>`,
    `<D:lockroot><D:href>${escapeXml(hrefOf(request.viewer, lock.path, false))}</D:href></D:lockroot>`,
    "</D:activelock>",
  ].join("");
}

const lockReply = (request: DavRequest, lock: LockRow, status: number) =>
  new Response(
    `<?xml version="1.0" encoding="utf-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLock(request, lock)}</D:lockdiscovery></D:prop>\n`,
    {
      status,
      headers: { "Content-Type": "application/xml; charset=utf-8", "Lock-Token": `<${lock.token}>` },
    },
  );

async function lock(request: DavRequest, depth: 0 | 1 | -1): Promise<Response> {
  const { c, path, tree } = request;
  const db = c.var.db;
  const now = Math.floor(Date.now() / 1000);
  const timeout = lockTimeout(c.req.header("Timeout") ?? null);
  const body = await xmlBody(c);
  requireManage(request, path, [Permission.WEBDAV_MANAGE]);

  if (body === null) {
    // A refresh names its lock in the If header.
    const held = request.dav.locks.find((row) => request.submitted.has(row.token) && covers(row, path));
    if (!held) throw new DavError(412, NO_LOCK_IN_IF, LOCK_TOKEN_MATCHES_REQUEST_URI);
    if (held.userId !== request.userId) throw new DavError(403, LOCK_OF_ANOTHER);
    const refreshed = await refreshLock(db, held.token, request.userId, timeout, now);
    if (!refreshed) throw new DavError(412, LOCK_EXPIRED);
    return lockReply(request, refreshed, 200);
  }

  if (!isDav(body, "lockinfo")) throw new DavError(400, LOCK_NOT_LOCKINFO);
  if (depth === 1) throw new DavError(400, LOCK_DEPTH);
  const scope = childDav(body, "lockscope");
  const exclusive = scope ? !!childDav(scope, "exclusive") : true;
  if (scope && !exclusive && !childDav(scope, "shared")) throw new DavError(400, LOCK_SCOPE_UNKNOWN);
  const type = childDav(body, "locktype");
  if (type && !childDav(type, "write")) throw new DavError(422, WRITE_LOCKS_ONLY);
  const owner = childDav(body, "owner");
  const object = await lookup(tree, path);
  if (!object) {
    requireName(path);
    requireManage(request, path, [Permission.WRITE], true);
    await requireParent(request, path);
  }
  const row: LockRow = {
    token: `urn:uuid:${crypto.randomUUID()}`,
    path,
    depth: depth === 0 ? 0 : -1,
    exclusive,
    owner: owner ? serialize(owner) : "",
    userId: request.userId,
    timeoutSeconds: timeout,
    expiresAt: now + timeout,
  };
  if (!(await insertLock(db, row, now)))
    throw new DavError(423, isLocked(viewOf(request.viewer, path)), NO_CONFLICTING_LOCK);
  if (object) return lockReply(request, row, 200);
  // A lock on a name that does not exist makes an empty file (RFC 4918 §7.3), as Windows and macOS expect.
  try {
    const parent = await tree.mount(parentOf(path));
    await need(parent, "put")(parent.actualPath, {
      name: baseName(path),
      size: 0,
      body: emptyBody(),
      contentType: contentTypeOf(baseName(path)),
    });
  } catch (error) {
    await deleteLock(db, row.token);
    throw error;
  }
  return lockReply(request, row, 201);
}

async function unlock(request: DavRequest): Promise<Response> {
  const token = /^\s*<([^>]+)>\s*$/.exec(request.c.req.header("Lock-Token") ?? "")?.[1];
  if (!token) throw new DavError(400, LOCK_TOKEN_MISSING);
  const held = request.dav.locks.find((row) => row.token === token && covers(row, request.path));
  if (!held) throw new DavError(409, NO_SUCH_LOCK, LOCK_TOKEN_MATCHES_REQUEST_URI);
  if (held.userId !== request.userId && !request.admin) throw new DavError(403, LOCK_OF_ANOTHER);
  await deleteLock(request.c.var.db, token);
  return created(204);
}

// ---------------------------------------------------------------------------------------------
// Bodies and replies

/** The request's XML body, parsed; null when empty. */
async function xmlBody(c: Context<AppEnv>): Promise<XmlElement | null> {
  const bytes = await cappedBody(c);
  try {
    return parseXml(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch (error) {
    throw new DavError(400, error instanceof BadXml ? malformedXml(error.message) : BODY_NOT_UTF8);
  }
}

/** A body other than PUT's, whole, refused past MAX_BODY_BYTES (413) whether or not its length was declared. */
async function cappedBody(c: Context<AppEnv>): Promise<Uint8Array> {
  const limit = readConfig(c.env).maxBodyBytes;
  const bytes = await readAtMost(c.req.raw.body, limit, c.req.header("Content-Length"));
  if (!bytes) throw new DavError(413, xmlBodyTooLarge(limit));
  return bytes;
}

const created = (status: 201 | 204) => new Response(null, { status });

const multistatus = (responses: string) =>
  new Response(`${MULTISTATUS_OPEN}${responses}${MULTISTATUS_CLOSE}\n`, {
    status: 207,
    headers: { "Content-Type": "application/xml; charset=utf-8" },
  });

/** Every refusal as a WebDAV reply: its own (the sign-in's among them), and the file side's by kind (davStatusOf). */
export function errorReply(error: unknown): Response {
  if (error instanceof DavError) {
    if (error.condition) {
      return new Response(
        `<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:">${error.condition}</D:error>\n`,
        {
          status: error.status,
          headers: { "Content-Type": "application/xml; charset=utf-8" },
        },
      );
    }
    const headers: Record<string, string> = { "Content-Type": "text/plain; charset=utf-8" };
    // A 401 asks for credentials; a 429 (the sign-in lockout) says when to try again.
    if (error.status === 401) headers["WWW-Authenticate"] = BASIC_CHALLENGE;
    if (error.status === 429) headers["Retry-After"] = "300";
    if (error.status === 405) headers.Allow = METHODS;
    return new Response(`${error.message}\n`, { status: error.status, headers });
  }
  if (error instanceof FileError) return errorReply(new DavError(davStatusOf(error.kind), error.message));
  // A shared rule of the file side (an Alias target's meta, say) refuses with the API's error; its
  // envelope code is an HTTP status already.
  if (error instanceof ApiError) return errorReply(new DavError(error.code, error.message));
  if (error instanceof Error && error.name === "AbortError") return new Response(null, { status: 499 });
  throw error;
}
