// The S3 operations on objects, files below a bucket (docs/decisions.md D22): get and head, put
// (streamed, its signed hash or chunks checked), delete, batch delete and copy.
import { bucketAt, makeFolders, bucketFolder, requireBucket, type S3Request, visible, xml } from "./request.ts";
import type { S3Code } from "./messages.ts";
import { declaredSize, payloadOf } from "./payload.ts";
import { emptyBody } from "../../lib/streams.ts";
import { etagOfObject } from "../dav/rules.ts";
import type { MountTree } from "../fs/mounts.ts";
import { lookup, putFile, removePath, transfer } from "../fs/operations.ts";
import { BadXml, parseXml } from "../dav/xml.ts";
import { baseName, parentOf } from "../fs/path.ts";
import { anchoredBy, Permission, requireAccess, requireUploadable, requireWritable } from "../fs/rules.ts";
import { contentTypeOf, notModified, preconditionFailed, rangeWithin, serveLink } from "../fs/serve.ts";
import { IndexChanges } from "../search/changes.ts";
import {
  BAD_KEY,
  CONTENT_SHA_MISMATCH,
  COPY_TO_ITSELF,
  DELETE_XML_INVALID,
  deleteTooLong,
  FOLDER_THERE,
  PRECONDITION_FAILED,
  RANGE_NOT_SATISFIABLE,
  STREAMING_UNSUPPORTED,
} from "./messages.ts";
import {
  copySourceConditions,
  copySourceOf,
  deleteRequestOf,
  noSuchKey,
  objectPath,
  S3Error,
  s3ErrorOf,
} from "./rules.ts";
import { UNSIGNED_PAYLOAD } from "../../lib/sigv4.ts";
import { copyObjectDocument, deleteResultDocument } from "./xml.ts";

/** The query's `response-*` overrides of a GetObject's reply headers. */
const RESPONSE_OVERRIDES = {
  "response-content-type": "Content-Type",
  "response-content-disposition": "Content-Disposition",
  "response-content-language": "Content-Language",
  "response-content-encoding": "Content-Encoding",
  "response-cache-control": "Cache-Control",
  "response-expires": "Expires",
} as const;

export async function getObject(request: S3Request): Promise<Response> {
  const { c } = request;
  // The object is looked up first: found, its bucket is there (one lookup, one round trip for the
  // storages under the key's folder); missing, the bucket says which error it is.
  const { path: root, tree } = bucketAt(request);
  const path = objectPath(root, request.key);
  if (path === null) throw noSuchKey();
  requireAccess(request.viewer, request.fs, path, "");
  const object = await lookup(tree, path);
  if (!object) {
    await requireBucket(tree, root);
    throw noSuchKey();
  }
  if (object.isDir) {
    // A folder answers as S3's folder marker (`photos/`): an empty object; under its bare name, nothing.
    if (!request.key.endsWith("/")) throw noSuchKey();
    return new Response(null, {
      status: 200,
      headers: { "Content-Length": "0", "Last-Modified": object.modified.toUTCString(), ETag: etagOfObject(object) },
    });
  }
  const etag = etagOfObject(object);
  const modified = Math.floor(object.modified.getTime() / 1000);
  const validators = { ETag: etag, "Last-Modified": object.modified.toUTCString() };
  if (preconditionFailed(c.req.raw.headers, etag, modified))
    throw new S3Error("PreconditionFailed", PRECONDITION_FAILED);
  if (notModified(c.req.raw.headers, etag, modified)) return new Response(null, { status: 304, headers: validators });
  const forwarded = new Headers();
  const range = c.req.header("Range");
  if (range) {
    const within = rangeWithin(range, object.size);
    if (within === "unsatisfiable")
      throw new S3Error("InvalidRange", RANGE_NOT_SATISFIABLE, { "Content-Range": `bytes */${object.size}` });
    if (within !== null) forwarded.set("Range", range);
  }
  const method = c.req.method === "HEAD" ? "HEAD" : "GET";
  const link = await tree.link(path, { redirect: false, headers: forwarded });
  const reply = await serveLink(
    new Request(c.req.raw.url, { method, headers: forwarded, signal: c.req.raw.signal }),
    link,
    baseName(path),
  );
  const headers = new Headers(reply.headers);
  headers.delete("Content-Disposition");
  headers.set("ETag", etag);
  headers.set("Last-Modified", validators["Last-Modified"]);
  headers.set("Accept-Ranges", "bytes");
  if (!headers.has("Content-Type")) headers.set("Content-Type", contentTypeOf(baseName(path)));
  if (method === "HEAD" && reply.status === 200) headers.set("Content-Length", String(object.size));
  // Some storages (webdav-server) leave the length out of a range's Content-Range; S3 always gives it.
  const contentRange = headers.get("Content-Range");
  if (contentRange?.endsWith("/*")) headers.set("Content-Range", `${contentRange.slice(0, -1)}${object.size}`);
  const query = new URL(c.req.url).searchParams;
  for (const [name, header] of Object.entries(RESPONSE_OVERRIDES)) {
    const value = query.get(name);
    if (value !== null) headers.set(header, value);
  }
  return new Response(reply.body, { status: reply.status, headers });
}

export async function putObject(request: S3Request): Promise<Response> {
  const { c, viewer, fs } = request;
  const { path: root, tree } = await bucketFolder(request);
  const path = objectPath(root, request.key);
  if (path === null) throw new S3Error("InvalidArgument", BAD_KEY);
  requireUploadable(viewer, fs, path, "");
  const index = new IndexChanges(c.var.db, fs);
  const before = await lookup(tree, path);
  if (request.key.endsWith("/")) {
    // A folder marker (`photos/`, what S3 consoles make for a folder): the folder itself.
    if (!before) {
      await makeFolders(tree, path);
      index.added(path, true, 0);
      await index.flush();
    } else if (!before.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
    return new Response(null, { status: 200, headers: { ETag: '"d41d8cd98f00b204e9800998ecf8427e"' } });
  }
  if (before?.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
  const size = declaredSize(request);
  // S3 makes the folders on a key's way; so does a write here (write permission was checked at the key's folder).
  const dir = parentOf(path);
  if (!before && dir !== root) {
    const parent = await lookup(tree, dir);
    if (!parent) await makeFolders(tree, dir);
    else if (!parent.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
  }
  // What the client vouched for is checked as the bytes stream; a fault takes the file back (D22.2, D22.8, D22.15).
  const payload = payloadOf(request, size);
  const parent = await tree.mount(dir);
  try {
    await putFile(parent, {
      name: baseName(path),
      size,
      body: payload.body,
      contentType: c.req.header("Content-Type") || contentTypeOf(baseName(path)),
    });
  } catch (error) {
    const failure = payload.failure();
    if (!failure) throw error;
    await removePath(tree, path).catch(() => undefined);
    throw failure;
  }
  const fault = await payload.verdict();
  if (fault) {
    await removePath(tree, path).catch(() => undefined);
    throw fault;
  }
  index.added(path, false, size);
  await index.flush();
  // The ETag a later HEAD gives; one lookup more, which S3 clients that compare it need.
  const after = await lookup(tree, path).catch(() => null);
  const headers = new Headers(after ? { ETag: etagOfObject(after) } : {});
  const checksum = payload.checksum();
  if (checksum) headers.set(checksum.name, checksum.value);
  return new Response(null, { status: 200, headers });
}

export async function deleteObject(request: S3Request): Promise<Response> {
  const bucket = await bucketFolder(request);
  await deleteKey(request, bucket, request.key);
  return new Response(null, { status: 204 });
}

/** Deletes one key of the bucket; a key that is not there is no error (S3: a delete is idempotent). */
async function deleteKey(request: S3Request, bucket: { path: string; tree: MountTree }, key: string): Promise<void> {
  const { c, viewer, fs } = request;
  const { path: root, tree } = bucket;
  const path = objectPath(root, key);
  if (path === null) return;
  requireWritable(viewer, fs, parentOf(path), path, Permission.REMOVE, "");
  const object = await lookup(tree, path);
  if (!object) return;
  if (object.isDir) {
    // Only a folder marker (`photos/`) names a folder, and only an empty one goes: S3 deletes one key.
    if (!key.endsWith("/") || (await tree.list(path)).length > 0) return;
    const refusal = anchoredBy(viewer, path, await tree.mountsAt(path), "remove");
    if (refusal) throw new S3Error("AccessDenied", refusal);
  }
  await removePath(tree, path);
  const index = new IndexChanges(c.var.db, fs);
  index.removed(path);
  await index.flush();
}

/** The most a DeleteObjects body may hold: 1,000 keys of S3's 1,024 bytes, with their XML. */
const MAX_DELETE_BODY = 2 * 1024 * 1024;

/** The request body as text, refused past `limit` bytes (`tooLong`) without reading further; its signed hash checked. */
export async function boundedBody(request: S3Request, limit: number, tooLong = deleteTooLong(limit)): Promise<string> {
  const { c } = request;
  if (request.chunks) throw new S3Error("NotImplemented", STREAMING_UNSUPPORTED);
  const declared = Number(c.req.header("Content-Length") ?? "0");
  if (declared > limit) throw new S3Error("MaxMessageLengthExceeded", tooLong);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (c.req.raw.body ?? emptyBody()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new S3Error("MaxMessageLengthExceeded", tooLong);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  if (request.payloadHash !== UNSIGNED_PAYLOAD) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    const hex = [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
    if (hex !== request.payloadHash) throw new S3Error("XAmzContentSHA256Mismatch", CONTENT_SHA_MISMATCH);
  }
  return new TextDecoder().decode(bytes);
}

/**
 * DeleteObjects (D22.6): the `<Delete>` body (capped), each key deleted as DeleteObject deletes it,
 * one after another; a key refused is an `<Error>` in the reply, not the request's failure. Quiet
 * leaves out the `<Deleted>` rows.
 */
export async function deleteObjects(request: S3Request): Promise<Response> {
  const bucket = await bucketFolder(request);
  let root: ReturnType<typeof parseXml>;
  try {
    root = parseXml(await boundedBody(request, MAX_DELETE_BODY));
  } catch (error) {
    if (error instanceof BadXml) throw new S3Error("MalformedXML", DELETE_XML_INVALID);
    throw error;
  }
  const { keys, quiet } = deleteRequestOf(root);
  const deleted: string[] = [];
  const errors: { key: string; code: S3Code; message: string }[] = [];
  for (const key of keys) {
    try {
      await deleteKey(request, bucket, key);
      deleted.push(key);
    } catch (error) {
      const refusal = s3ErrorOf(error);
      if (!refusal) throw error;
      errors.push({ key, code: refusal.code, message: refusal.message });
    }
  }
  return xml(deleteResultDocument(quiet ? [] : deleted, errors));
}

/**
 * CopyObject (D22.6): the source read where the key may read it, the target written where it may
 * write; the file side's copy (the storage's own within one storage, streamed across storages). A
 * target that is there is replaced, as S3 does. Metadata is not kept, so a copy onto itself is
 * S3's refusal unless it asks to REPLACE the metadata, which then changes nothing. The
 * `x-amz-copy-source-if-*` conditions are checked against the source (D22.16).
 */
export async function copyObject(request: S3Request): Promise<Response> {
  const { c, viewer, fs } = request;
  const source = copySourceOf(c.req.header("x-amz-copy-source") ?? "");
  const from = await bucketFolder({ ...request, bucket: source.bucket, key: source.key });
  const fromPath = objectPath(from.path, source.key);
  if (fromPath === null) throw noSuchKey();
  requireAccess(viewer, fs, fromPath, "");
  if (!visible(request, fromPath)) throw noSuchKey();
  const object = await lookup(from.tree, fromPath);
  if (!object || object.isDir) throw noSuchKey();
  // The source's conditions: a copy is never 304, any condition that fails is 412 (D22.16).
  const conditions = copySourceConditions(c.req.raw.headers);
  const sourceTag = etagOfObject(object);
  const sourceModified = Math.floor(object.modified.getTime() / 1000);
  if (preconditionFailed(conditions, sourceTag, sourceModified) || notModified(conditions, sourceTag, sourceModified))
    throw new S3Error("PreconditionFailed", PRECONDITION_FAILED);

  const { path: root, tree } = await bucketFolder(request);
  const path = objectPath(root, request.key);
  if (path === null || request.key.endsWith("/")) throw new S3Error("InvalidArgument", BAD_KEY);
  requireUploadable(viewer, fs, path, "");
  if (path === fromPath) {
    if (c.req.header("x-amz-metadata-directive")?.toUpperCase() !== "REPLACE")
      throw new S3Error("InvalidRequest", COPY_TO_ITSELF);
    return xml(copyObjectDocument(object.modified, etagOfObject(object)));
  }
  const before = await lookup(tree, path);
  if (before?.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
  const dir = parentOf(path);
  if (!before && dir !== root) {
    const parent = await lookup(tree, dir);
    if (!parent) await makeFolders(tree, dir);
    else if (!parent.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
  }
  const index = new IndexChanges(c.var.db, fs);
  // A storage's own copy may refuse to overwrite (WebDAV's COPY): the target goes first, as WebDAV's COPY does.
  if (before) {
    await removePath(tree, path);
    index.removed(path);
  }
  await transfer(tree, "copy", fromPath, dir, baseName(path));
  index.added(path, false, object.size);
  await index.flush();
  const after = await lookup(tree, path).catch(() => null);
  return xml(copyObjectDocument(after?.modified ?? new Date(), after ? etagOfObject(after) : etagOfObject(object)));
}
