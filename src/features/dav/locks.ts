// LOCK and UNLOCK (RFC 4918 §9.10-9.11): write locks kept in the database, refreshed through the If
// header, and a lock on a missing name making an empty file; the lock's XML, which PROPFIND's
// lockdiscovery shows too.
import { emptyBody } from "../../lib/streams.ts";
import { lookup, need } from "../fs/operations.ts";
import { baseName, parentOf } from "../fs/path.ts";
import { Permission, type Viewer } from "../fs/rules.ts";
import { contentTypeOf } from "../fs/serve.ts";
import {
  isLocked,
  LOCK_DEPTH,
  LOCK_EXPIRED,
  LOCK_NOT_LOCKINFO,
  LOCK_OF_ANOTHER,
  LOCK_SCOPE_UNKNOWN,
  LOCK_TOKEN_MATCHES_REQUEST_URI,
  LOCK_TOKEN_MISSING,
  NO_CONFLICTING_LOCK,
  NO_LOCK_IN_IF,
  NO_SUCH_LOCK,
  WRITE_LOCKS_ONLY,
} from "./messages.ts";
import { created, requireManage, requireParent, xmlBody, type DavRequest } from "./request.ts";
import { covers, DavError, hrefOf, lockTimeout, requireName, viewOf } from "./rules.ts";
import { deleteLock, insertLock, refreshLock, type LockRow } from "./store.ts";
import { childDav, escapeXml, isDav, serialize } from "./xml.ts";

/**
 * A lock as lockdiscovery shows it (LOCK's reply, PROPFIND's property), its time left as at `now`:
 * LOCK's reply passes the second it granted the lock in, so it shows the timeout granted however
 * long the empty file's write took.
 */
export function activeLock(viewer: Viewer, lock: LockRow, now = Math.floor(Date.now() / 1000)): string {
  return [
    "<D:activelock>",
    "<D:locktype><D:write/></D:locktype>",
    `<D:lockscope>${lock.exclusive ? "<D:exclusive/>" : "<D:shared/>"}</D:lockscope>`,
    `<D:depth>${lock.depth === -1 ? "infinity" : "0"}</D:depth>`,
    lock.owner === "" ? "" : lock.owner,
    `<D:timeout>Second-${Math.max(0, lock.expiresAt - now)}</D:timeout>`,
    `<D:locktoken><D:href>${escapeXml(lock.token)}</D:href></D:locktoken>`,
    `<D:lockroot><D:href>${escapeXml(hrefOf(viewer, lock.path, false))}</D:href></D:lockroot>`,
    "</D:activelock>",
  ].join("");
}

const lockReply = (request: DavRequest, lock: LockRow, status: number, now: number) =>
  new Response(
    `<?xml version="1.0" encoding="utf-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLock(request.viewer, lock, now)}</D:lockdiscovery></D:prop>\n`,
    {
      status,
      headers: { "Content-Type": "application/xml; charset=utf-8", "Lock-Token": `<${lock.token}>` },
    },
  );

export async function lock(request: DavRequest, depth: 0 | 1 | -1): Promise<Response> {
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
    return lockReply(request, refreshed, 200, now);
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
  if (object) return lockReply(request, row, 200, now);
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
  return lockReply(request, row, 201, now);
}

export async function unlock(request: DavRequest): Promise<Response> {
  const token = /^\s*<([^>]+)>\s*$/.exec(request.c.req.header("Lock-Token") ?? "")?.[1];
  if (!token) throw new DavError(400, LOCK_TOKEN_MISSING);
  const held = request.dav.locks.find((row) => row.token === token && covers(row, request.path));
  if (!held) throw new DavError(409, NO_SUCH_LOCK, LOCK_TOKEN_MATCHES_REQUEST_URI);
  if (held.userId !== request.userId && !request.admin) throw new DavError(403, LOCK_OF_ANOTHER);
  await deleteLock(request.c.var.db, token);
  return created(204);
}
