// The S3 endpoint at /s3 (path-style), on the file layer of /api/fs (docs/decisions.md D22): the
// same mount tree, rules (the key's scope and rights cut from its user's, hide rules, meta
// passwords) and writes (putFile, makeDirs, removePath, the search index). A request is signed
// with an access key's S3 credentials (AWS Signature Version 4, sigv4.ts); its key, user, roles,
// metas and settings are read in one batch (store.ts). This file is the operations' handlers;
// their decisions are rules.ts, the texts messages.ts and the XML xml.ts.
import type { Context } from "hono";
import { keyCaller, keyRefusal, keyTouchDue } from "../../auth/access-keys.ts";
import { clientIp } from "../../auth/client.ts";
import { isLockedOut } from "../../auth/lockout.ts";
import type { Caller } from "../../auth/caller.ts";
import type { FileObject } from "../../drivers/types.ts";
import { otpSealingKeys } from "../../env.ts";
import type { AppEnv } from "../../http/context.ts";
import type { S3Code } from "./messages.ts";
import { type ChunkSigning, STREAMING_PAYLOAD, verifiedChunks } from "./chunked.ts";
import { FileError } from "../../http/errors.ts";
import { etagOfObject } from "../dav/rules.ts";
import { uploadEndedEarly, uploadTooLong } from "../fs/messages.ts";
import { MountTree } from "../fs/mounts.ts";
import { emptyBody, lookup, makeDirs, putFile, removePath, transfer } from "../fs/operations.ts";
import { BadXml, parseXml } from "../dav/xml.ts";
import { baseName, parentOf } from "../fs/path.ts";
import {
  anchoredBy,
  mayAccess,
  mayReach,
  nearestMeta,
  Permission,
  requireAccess,
  requireUploadable,
  requireWritable,
  throughAlias,
  viewerOf,
  visibleEntries,
  type Viewer,
} from "../fs/rules.ts";
import {
  contentTypeOf,
  httpDateSeconds,
  notModified,
  preconditionFailed,
  rangeWithin,
  serveLink,
} from "../fs/serve.ts";
import type { FsState } from "../fs/state.ts";
import { IndexChanges } from "../search/changes.ts";
import { open } from "../two-factor/secret-box.ts";
import { hashed } from "../uploads/rules.ts";
import {
  BAD_KEY,
  CONTENT_LENGTH_NEEDED,
  CONTENT_SHA_MISMATCH,
  ACCESS_DENIED,
  BUCKET_NAME_INVALID,
  BUCKET_NOT_EMPTY,
  BUCKET_TAKEN,
  CONTENT_SHA_MISSING,
  DECODED_LENGTH_NEEDED,
  COPY_TO_ITSELF,
  DELETE_XML_INVALID,
  deleteTooLong,
  DATE_MISSING,
  FOLDER_THERE,
  keyRefused,
  LOCKED_OUT,
  NO_SUCH_ACCESS_KEY,
  PRECONDITION_FAILED,
  PRESIGNED_EXPIRED,
  PRESIGNED_MALFORMED,
  PRESIGNED_NOT_YET_VALID,
  PRESIGNED_TOO_LONG,
  RANGE_NOT_SATISFIABLE,
  SIGN_WITH_SIGV4,
  SIGNATURE_MISMATCH,
  STREAMING_NOT_YET,
  TIME_SKEWED,
} from "./messages.ts";
import {
  bucketAndKey,
  bucketPath,
  continuationToken,
  copySourceOf,
  deleteRequestOf,
  listPage,
  listRequestOf,
  noSuchBucket,
  noSuchKey,
  objectPath,
  operationOf,
  S3Error,
  s3ErrorOf,
  type Operation,
} from "./rules.ts";
import {
  type Authorization,
  amzDateSeconds,
  MAX_PRESIGNED_SECONDS,
  MAX_SKEW_SECONDS,
  parseAuthorization,
  parseQueryAuthorization,
  scopeOf,
  signatureMatches,
  signingKey,
  UNSIGNED_PAYLOAD,
  withoutSignature,
} from "./sigv4.ts";
import { countFailure, readS3Request } from "./store.ts";
import {
  copyObjectDocument,
  deleteResultDocument,
  errorDocument,
  listBucketsDocument,
  listingDocument,
  S3_NS,
} from "./xml.ts";

/** What one signed request knows: who, the key's folder (its buckets' parent), the tree. */
interface S3Request {
  c: Context<AppEnv>;
  caller: Caller;
  viewer: Viewer;
  /** The key's folder, a full path: its entries are the key's buckets (D22.1). */
  scope: string;
  fs: FsState;
  bucket: string | null;
  key: string;
  payloadHash: string;
  /** A streaming signed payload's signing (aws-chunked, D22.8); null otherwise. */
  chunks: ChunkSigning | null;
}

export async function handleS3(c: Context<AppEnv>): Promise<Response> {
  const requestId = crypto.randomUUID().replace(/-/g, "").slice(0, 16).toUpperCase();
  try {
    const reply = await dispatch(c);
    reply.headers.set("x-amz-request-id", requestId);
    return reply;
  } catch (error) {
    const refusal = s3ErrorOf(error);
    if (!refusal) {
      if (error instanceof Error && error.name === "AbortError") return new Response(null, { status: 499 });
      throw error;
    }
    const headers = new Headers({
      "Content-Type": "application/xml",
      "x-amz-request-id": requestId,
      ...refusal.headers,
    });
    const body =
      c.req.method === "HEAD"
        ? null
        : errorDocument(refusal.code, refusal.message, new URL(c.req.url).pathname, requestId);
    return new Response(body, { status: refusal.status, headers });
  }
}

const HANDLERS: Record<Operation, (request: S3Request) => Promise<Response>> = {
  ListBuckets: listBuckets,
  HeadBucket: async (request) => {
    await bucketFolder(request);
    return new Response(null, { status: 200 });
  },
  CreateBucket: createBucket,
  DeleteBucket: deleteBucket,
  GetBucketLocation: async (request) => {
    await bucketFolder(request);
    return xml(`<?xml version="1.0" encoding="UTF-8"?>\n<LocationConstraint xmlns="${S3_NS}"></LocationConstraint>`);
  },
  ListObjects: (request) => listObjects(request, 1),
  ListObjectsV2: (request) => listObjects(request, 2),
  GetObject: getObject,
  HeadObject: getObject,
  PutObject: putObject,
  CopyObject: copyObject,
  DeleteObject: deleteObject,
  DeleteObjects: deleteObjects,
};

async function dispatch(c: Context<AppEnv>): Promise<Response> {
  const url = new URL(c.req.url);
  const request = await signedRequest(c, url);
  const operation = operationOf(
    c.req.method.toUpperCase(),
    request.bucket,
    request.key,
    url.searchParams,
    c.req.raw.headers,
  );
  return HANDLERS[operation](request);
}

// ---------------------------------------------------------------------------------------------
// Signing: the key by its access key id, its user, and the signature (D22.2).

/** What signs a request: the Authorization header's parts or a presigned URL's, its date, the query it covers. */
interface Signing {
  auth: Authorization;
  amzDate: string;
  rawQuery: string;
  payloadHash: string;
}

/** The Authorization header's signing: its date within 15 minutes, the payload's hash required (D22.2). */
function headerSigning(c: Context<AppEnv>, url: URL, header: string, now: number): Signing {
  const auth = parseAuthorization(header);
  if (!auth) throw new S3Error("InvalidArgument", SIGN_WITH_SIGV4);
  const amzDate = c.req.header("x-amz-date") ?? "";
  const signedAt = amzDateSeconds(amzDate) ?? httpDateSeconds(c.req.header("Date") ?? null);
  if (signedAt === null || Number.isNaN(signedAt)) throw new S3Error("AccessDenied", DATE_MISSING);
  if (Math.abs(now - signedAt) > MAX_SKEW_SECONDS) throw new S3Error("RequestTimeTooSkewed", TIME_SKEWED);
  const payloadHash = c.req.header("x-amz-content-sha256");
  if (!payloadHash) throw new S3Error("InvalidRequest", CONTENT_SHA_MISSING);
  return { auth, amzDate, rawQuery: url.search, payloadHash };
}

/**
 * A presigned URL's signing (D22.5): valid from its X-Amz-Date (15 minutes' skew allowed) for
 * X-Amz-Expires seconds, at most 7 days; the signature covers the query without itself, and the
 * payload is UNSIGNED-PAYLOAD unless the client sent and signed x-amz-content-sha256.
 */
function querySigning(c: Context<AppEnv>, url: URL, now: number): Signing {
  const auth = parseQueryAuthorization(url.searchParams);
  if (!auth) throw new S3Error("AuthorizationQueryParametersError", PRESIGNED_MALFORMED);
  if (auth.expires < 1 || auth.expires > MAX_PRESIGNED_SECONDS)
    throw new S3Error("AuthorizationQueryParametersError", PRESIGNED_TOO_LONG);
  const signedAt = amzDateSeconds(auth.amzDate)!;
  if (signedAt - now > MAX_SKEW_SECONDS) throw new S3Error("AccessDenied", PRESIGNED_NOT_YET_VALID);
  if (now > signedAt + auth.expires) throw new S3Error("AccessDenied", PRESIGNED_EXPIRED);
  // A hash header counts only when it is signed: presigners sign none, and a client may add one later.
  const signedHash = auth.signedHeaders.includes("x-amz-content-sha256");
  const payloadHash = (signedHash && c.req.header("x-amz-content-sha256")) || UNSIGNED_PAYLOAD;
  return { auth, amzDate: auth.amzDate, rawQuery: withoutSignature(url.search), payloadHash };
}

async function signedRequest(c: Context<AppEnv>, url: URL): Promise<S3Request> {
  const now = Math.floor(Date.now() / 1000);
  const header = c.req.header("Authorization");
  if (!header && !url.searchParams.has("X-Amz-Algorithm")) throw new S3Error("AccessDenied", SIGN_WITH_SIGV4);
  const { auth, amzDate, rawQuery, payloadHash } = header
    ? headerSigning(c, url, header, now)
    : querySigning(c, url, now);
  const streaming = payloadHash === STREAMING_PAYLOAD && Boolean(header);
  if (payloadHash.startsWith("STREAMING-") && !streaming) throw new S3Error("NotImplemented", STREAMING_NOT_YET);
  if (!streaming && payloadHash !== UNSIGNED_PAYLOAD && !/^[0-9a-f]{64}$/.test(payloadHash))
    throw new S3Error("InvalidArgument", CONTENT_SHA_MISMATCH);

  const db = c.var.db;
  const ip = clientIp(c);
  const touch = keyTouchDue(`s3:${auth.accessKeyId}`, now) ? 300 : null;
  const found = await readS3Request(db, { accessKeyId: auth.accessKeyId, ip, now, touch });
  // Wrong key ids and signatures count toward the sign-in lockout of the address (D16.6).
  if (isLockedOut(found.failures)) throw new S3Error("SlowDown", LOCKED_OUT, { "Retry-After": "300" });
  const secret = found.s3Secret === null ? null : await open(otpSealingKeys(c.env), found.s3Secret, "s3-secret-v1");
  if (!found.key || !found.user || secret === null) {
    await countFailure(db, ip, now);
    throw new S3Error("InvalidAccessKeyId", NO_SUCH_ACCESS_KEY);
  }
  const signed = {
    method: c.req.method.toUpperCase(),
    rawPath: url.pathname,
    rawQuery,
    header: (name: string) => c.req.header(name) ?? (name === "host" ? url.host : undefined),
    payloadHash,
  };
  if (!(await signatureMatches(signed, auth, amzDate, secret))) {
    await countFailure(db, ip, now);
    throw new S3Error("SignatureDoesNotMatch", SIGNATURE_MISMATCH);
  }
  // A real key used late, by a disabled user, or without S3 use: refused, not counted (D16.6).
  const refusal = keyRefusal(found.key, found.user, "s3", now);
  if (refusal) {
    if (refusal.counted) await countFailure(db, ip, now);
    throw new S3Error("AccessDenied", keyRefused(refusal.message));
  }
  const caller = keyCaller(found.user, found.roles, found.key, "access_key");
  c.set("caller", caller);
  const { bucket, key } = bucketAndKey(url.pathname);
  // The chunks of a streaming payload are signed in a chain from the request's own signature (D22.8).
  const chunks = streaming
    ? { key: await signingKey(secret, auth), amzDate, scope: scopeOf(auth), seed: auth.signature }
    : null;
  return { c, caller, viewer: viewerOf(caller), scope: found.key.path, fs: found.fs, bucket, key, payloadHash, chunks };
}

// ---------------------------------------------------------------------------------------------
// The tree, held to the file side's rules with no password (an S3 client cannot send one).

/** The mount tree for a request at `path`: an Alias's targets are held to their metas with no password. */
const treeAt = (request: S3Request, path: string) =>
  new MountTree(request.fs.tree, request.c.var.db, request.c.req.raw.signal).guardedBy(
    throughAlias(request.viewer, request.fs, path, ""),
  );

/** Reached past the hide rules and opened without a password (guarded folders need the skip-password bit). */
const visible = (request: S3Request, path: string) =>
  mayReach(request.viewer, request.fs.metas, path) &&
  mayAccess(request.viewer, nearestMeta(request.fs.metas, path), path, "");

/** The entries of folder `path` the key may see: the file side's visibility, minus what a password guards. */
async function visibleChildren(request: S3Request, tree: MountTree, path: string): Promise<FileObject[]> {
  const { viewer, fs } = request;
  const entries = visibleEntries(viewer, nearestMeta(fs.metas, path), path, await tree.list(path));
  return entries.filter((entry) => visible(request, path === "/" ? `/${entry.name}` : `${path}/${entry.name}`));
}

/** Where the bucket would be (a visible name at the top of the key's scope), not yet looked up; else NoSuchBucket. */
function bucketAt(request: S3Request): { path: string; tree: MountTree } {
  const path = bucketPath(request.scope, request.bucket!);
  if (path === null || !visible(request, request.scope) || !visible(request, path)) throw noSuchBucket();
  return { path, tree: treeAt(request, path) };
}

/** NoSuchBucket unless the bucket's folder is there. */
async function requireBucket(tree: MountTree, path: string): Promise<void> {
  const folder = await lookup(tree, path).catch(() => null);
  if (!folder?.isDir) throw noSuchBucket();
}

/** The bucket's folder (a visible folder at the top of the key's scope), or NoSuchBucket. */
async function bucketFolder(request: S3Request): Promise<{ path: string; tree: MountTree }> {
  const bucket = bucketAt(request);
  await requireBucket(bucket.tree, bucket.path);
  return bucket;
}

// ---------------------------------------------------------------------------------------------
// Operations

async function listBuckets(request: S3Request): Promise<Response> {
  const { scope, caller } = request;
  requireAccess(request.viewer, request.fs, scope, "");
  const entries = await visibleChildren(request, treeAt(request, scope), scope);
  const buckets = entries
    .filter((entry) => entry.isDir)
    .map((entry) => ({ name: entry.name, created: entry.modified }));
  return xml(listBucketsDocument(buckets, { id: String(caller.user.id), name: caller.user.username }));
}

/**
 * CreateBucket (D22.7): a new folder at the top of the key's folder, where the key may make one
 * (write, or a meta's write grant, as `/api/fs/mkdir`). A bucket that is there answers 200, as S3
 * in us-east-1 answers its owner (clients such as rclone create the bucket before they write).
 */
async function createBucket(request: S3Request): Promise<Response> {
  const { c, viewer, fs, scope } = request;
  const path = bucketPath(scope, request.bucket!);
  if (path === null) throw new S3Error("InvalidBucketName", BUCKET_NAME_INVALID);
  // A hidden or password-guarded name is not told apart from one the key may not make.
  if (!visible(request, scope) || !visible(request, path)) throw new S3Error("AccessDenied", ACCESS_DENIED);
  const tree = treeAt(request, path);
  const existing = await lookup(tree, path).catch(() => null);
  if (existing?.isDir) return new Response(null, { status: 200, headers: { Location: `/${request.bucket}` } });
  if (existing) throw new S3Error("BucketAlreadyExists", BUCKET_TAKEN);
  requireWritable(viewer, fs, scope, path, Permission.WRITE, "", true);
  await makeFolders(tree, path);
  const index = new IndexChanges(c.var.db, fs);
  index.added(path, true, 0);
  await index.flush();
  return new Response(null, { status: 200, headers: { Location: `/${request.bucket}` } });
}

/** DeleteBucket (D22.7): the bucket's folder, only when nothing is in it (hidden entries count), with the remove bit. */
async function deleteBucket(request: S3Request): Promise<Response> {
  const { c, viewer, fs, scope } = request;
  const { path, tree } = await bucketFolder(request);
  requireWritable(viewer, fs, scope, path, Permission.REMOVE, "");
  if ((await tree.list(path)).length > 0) throw new S3Error("BucketNotEmpty", BUCKET_NOT_EMPTY);
  const refusal = anchoredBy(viewer, path, await tree.mountsAt(path), "remove");
  if (refusal) throw new S3Error("AccessDenied", refusal);
  await removePath(tree, path);
  const index = new IndexChanges(c.var.db, fs);
  index.removed(path);
  await index.flush();
  return new Response(null, { status: 204 });
}

async function listObjects(request: S3Request, version: 1 | 2): Promise<Response> {
  const { path: root, tree } = await bucketFolder(request);
  const query = new URL(request.c.req.url).searchParams;
  const list = listRequestOf(query, version);
  const page = await listPage(list, async (dir) => {
    const path = dir === "" ? root : `${root}/${dir}`;
    if (!visible(request, path)) return [];
    try {
      return await visibleChildren(request, tree, path);
    } catch (error) {
      // A prefix naming no folder lists nothing, as S3 answers a prefix no key has.
      if (error instanceof FileError && ["not_found", "not_a_folder", "no_storage"].includes(error.kind)) return [];
      throw error;
    }
  });
  const next = page.truncated && page.last !== undefined ? page.last : undefined;
  return xml(
    listingDocument({
      version,
      bucket: request.bucket!,
      prefix: list.prefix,
      delimiter: list.delimiter,
      maxKeys: list.maxKeys,
      encodeUrl: list.encodeUrl,
      truncated: page.truncated,
      objects: page.objects.map(({ key, object }) => ({
        key,
        modified: object.modified,
        etag: etagOfObject(object),
        size: object.size,
      })),
      prefixes: page.prefixes,
      continuationToken: query.get("continuation-token") ?? undefined,
      nextContinuationToken: version === 2 && next !== undefined ? continuationToken(next) : undefined,
      startAfter: version === 2 ? (query.get("start-after") ?? undefined) : undefined,
      marker: query.get("marker") ?? "",
      nextMarker: version === 1 ? next : undefined,
    }),
  );
}

/** The query's `response-*` overrides of a GetObject's reply headers. */
const RESPONSE_OVERRIDES = {
  "response-content-type": "Content-Type",
  "response-content-disposition": "Content-Disposition",
  "response-content-language": "Content-Language",
  "response-content-encoding": "Content-Encoding",
  "response-cache-control": "Cache-Control",
  "response-expires": "Expires",
} as const;

async function getObject(request: S3Request): Promise<Response> {
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
  const query = new URL(c.req.url).searchParams;
  for (const [name, header] of Object.entries(RESPONSE_OVERRIDES)) {
    const value = query.get(name);
    if (value !== null) headers.set(header, value);
  }
  return new Response(reply.body, { status: reply.status, headers });
}

async function putObject(request: S3Request): Promise<Response> {
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
  // An aws-chunked body's own length is its framing's: the object's is x-amz-decoded-content-length.
  const length = c.req.header(request.chunks ? "x-amz-decoded-content-length" : "Content-Length");
  if (length === undefined || !/^\d{1,16}$/.test(length.trim()))
    throw new S3Error("MissingContentLength", request.chunks ? DECODED_LENGTH_NEEDED : CONTENT_LENGTH_NEEDED);
  const size = Number(length.trim());
  // S3 makes the folders on a key's way; so does a write here (write permission was checked at the key's folder).
  const dir = parentOf(path);
  if (!before && dir !== root) {
    const parent = await lookup(tree, dir);
    if (!parent) await makeFolders(tree, dir);
    else if (!parent.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
  }
  // Chunks are checked one by one as they stream; a bad one fails the upload and takes the file back (D22.8).
  const chunked = request.chunks ? verifiedChunks(request.chunks, size) : null;
  const raw = chunked ? (c.req.raw.body ?? emptyBody()).pipeThrough(chunked.stream) : c.req.raw.body;
  // A signed payload is hashed as it streams to the storage, and a mismatch takes the file back (D22.2).
  const check =
    request.payloadHash === UNSIGNED_PAYLOAD || chunked
      ? null
      : hashed(raw ?? emptyBody(), size, {
          short: new FileError("refused", uploadEndedEarly(0, size)),
          long: new FileError("refused", uploadTooLong(size)),
        });
  const parent = await tree.mount(dir);
  try {
    await putFile(parent, {
      name: baseName(path),
      size,
      body: check?.body ?? raw ?? emptyBody(),
      contentType: c.req.header("Content-Type") || contentTypeOf(baseName(path)),
    });
  } catch (error) {
    const failure = chunked?.failure();
    if (!failure) throw error;
    await removePath(tree, path).catch(() => undefined);
    throw failure;
  }
  if (check && (await check.done()) !== request.payloadHash) {
    await removePath(tree, path).catch(() => undefined);
    throw new S3Error("XAmzContentSHA256Mismatch", CONTENT_SHA_MISMATCH);
  }
  index.added(path, false, size);
  await index.flush();
  // The ETag a later HEAD gives; one lookup more, which S3 clients that compare it need.
  const after = await lookup(tree, path).catch(() => null);
  return new Response(null, { status: 200, headers: after ? { ETag: etagOfObject(after) } : {} });
}

/**
 * The folders on a key's way. Clients upload in parallel (rclone four at a time), so two uploads
 * into a new folder race to make it, and the loser's MKCOL fails on a folder that is now there:
 * it tries once more, and a folder that exists by then is what it wanted.
 */
async function makeFolders(tree: MountTree, path: string): Promise<void> {
  try {
    await makeDirs(tree, path);
  } catch {
    try {
      await makeDirs(tree, path);
    } catch (error) {
      if (!(await lookup(tree, path).catch(() => null))?.isDir) throw error;
    }
  }
}

async function deleteObject(request: S3Request): Promise<Response> {
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

/** The request body as text, refused past `limit` bytes without reading further; its signed hash checked. */
async function boundedBody(request: S3Request, limit: number): Promise<string> {
  const { c } = request;
  if (request.chunks) throw new S3Error("NotImplemented", STREAMING_NOT_YET);
  const declared = Number(c.req.header("Content-Length") ?? "0");
  if (declared > limit) throw new S3Error("MaxMessageLengthExceeded", deleteTooLong(limit));
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (c.req.raw.body ?? emptyBody()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new S3Error("MaxMessageLengthExceeded", deleteTooLong(limit));
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
async function deleteObjects(request: S3Request): Promise<Response> {
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
 * S3's refusal unless it asks to REPLACE the metadata, which then changes nothing.
 */
async function copyObject(request: S3Request): Promise<Response> {
  const { c, viewer, fs } = request;
  const source = copySourceOf(c.req.header("x-amz-copy-source") ?? "");
  const from = await bucketFolder({ ...request, bucket: source.bucket, key: source.key });
  const fromPath = objectPath(from.path, source.key);
  if (fromPath === null) throw noSuchKey();
  requireAccess(viewer, fs, fromPath, "");
  if (!visible(request, fromPath)) throw noSuchKey();
  const object = await lookup(from.tree, fromPath);
  if (!object || object.isDir) throw noSuchKey();

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

const xml = (body: string) => new Response(body, { status: 200, headers: { "Content-Type": "application/xml" } });
