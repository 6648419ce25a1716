// S3's multipart uploads (docs/decisions.md D22.9 to D22.14) on the chunked upload sessions of
// /api/fs/multipart (features/uploads, D12): an upload is a session of the key's user with no chunk
// size, each part is a chunk stored straight upstream (an S3 or R2 storage's own UploadPart, a
// staged part on the others) and recorded with its size and SHA-256, completion joins them as the
// chunk API does, and the cron job's sweep aborts what is left idle. Every step is held to
// PutObject's rules at the upload's key, as they stand at that step.
import { sql } from "drizzle-orm";
import { bucketFolder, makeFolders, type S3Request, xml } from "./request.ts";
import { payloadOf } from "./payload.ts";
import { etagOfObject } from "../dav/rules.ts";
import { BadXml, parseXml, type XmlElement } from "../dav/xml.ts";
import { fileFailure } from "../fs/mounts.ts";
import { lookup } from "../fs/operations.ts";
import { baseName, parentOf } from "../fs/path.ts";
import { requireUploadable } from "../fs/rules.ts";
import { contentTypeOf } from "../fs/serve.ts";
import { partsOf } from "../fs/staged-parts.ts";
import { IndexChanges } from "../search/changes.ts";
import {
  hashed,
  isS3Upload,
  MAX_CHUNKS,
  sessionLapse,
  type UploadChunk,
  type UploadSession,
} from "../uploads/rules.ts";
import { claimCompletion, deleteSession, releaseCompletion, settleInit, uploadReads } from "../uploads/store.ts";
import { STORAGE_CHANGED } from "../uploads/messages.ts";
import { boundedBody } from "./objects.ts";
import {
  BAD_KEY,
  COMPLETE_XML_INVALID,
  completeTooLong,
  DECODED_LENGTH_NEEDED,
  entityTooSmall,
  FOLDER_THERE,
  INVALID_PART,
  INVALID_PART_ORDER,
  MAX_PARTS_INVALID,
  MULTIPART_OFF,
  NO_SUCH_UPLOAD,
  PART_LENGTH_NEEDED,
  PART_NUMBER_INVALID,
  partEndedEarly,
  partsWithGap,
  partTooLarge,
  partTooLong,
  UPLOAD_COMPLETING,
} from "./messages.ts";
import { forgetPart, storePart, uploadsBelow } from "./multipart-store.ts";
import { compareKeys, type MultipartOperation, objectPath, S3Error } from "./rules.ts";
import {
  completeDocument,
  initiateDocument,
  type ListedUpload,
  listPartsDocument,
  listUploadsDocument,
} from "./xml.ts";

/** S3's smallest part but the last, held on every storage (a staged one would take less: S3 clients plan for it). */
const MIN_PART_BYTES = 5 * 1024 * 1024;
/** S3's largest part. */
const MAX_PART_BYTES = 5 * 1024 ** 3;
/** A CompleteMultipartUpload body: 10,000 parts of about 120 bytes each, with room. */
const MAX_COMPLETE_BODY = 2 * 1024 * 1024;
/** At most this many parts or uploads in one listing, as S3. */
const MAX_LISTED = 1000;

const nowSeconds = () => Math.floor(Date.now() / 1000);
const noSuchUpload = () => new S3Error("NoSuchUpload", NO_SUCH_UPLOAD);
/** A part's ETag: its SHA-256's first 128 bits, in S3's quotes (D22.11). */
const partTag = (sha256: string) => `"${sha256.slice(0, 32)}"`;
const whoOf = (request: S3Request) => ({ id: String(request.caller.user.id), name: request.caller.user.username });

/** The chunk API's reads (features/uploads/store.ts) for the key's user: the settings, and the session `lookup` names with its parts. */
async function readUploads(request: S3Request, lookup: { id: string } | null) {
  const { db } = request.c.var;
  const reads = uploadReads(db, lookup, sql`${request.caller.user.id}`);
  return reads.read([...(await db.batch(reads.reads))]);
}

/** The object's full path and the bucket's tree; a key no path holds (or a folder marker) is refused. */
async function target(request: S3Request, refusal: () => S3Error) {
  const { path: root, tree } = await bucketFolder(request);
  const path = objectPath(root, request.key);
  if (path === null || request.key.endsWith("/")) throw refusal();
  requireUploadable(request.viewer, request.fs, path, "");
  return { root, path, tree };
}

/**
 * The upload the query's uploadId names, with its parts: the key's user's, for this bucket and key,
 * still receiving and not idle past its time; any other is NoSuchUpload (D22.10). Then PutObject's
 * rules at its key, and the storage under it still the one holding its parts.
 */
async function uploadOf(request: S3Request) {
  const { c } = request;
  const uploadId = new URL(c.req.url).searchParams.get("uploadId") ?? "";
  const { path, tree } = await target(request, noSuchUpload);
  const { session, chunks, enabled } = await readUploads(request, { id: uploadId });
  if (!session || !isS3Upload(session) || session.path !== path) throw noSuchUpload();
  if (session.state !== "receiving") {
    if (session.state === "completing" && sessionLapse(session, nowSeconds()) === null)
      throw new S3Error("OperationAborted", UPLOAD_COMPLETING);
    throw noSuchUpload();
  }
  if (sessionLapse(session, nowSeconds()) !== null) throw noSuchUpload();
  if (!enabled) throw new S3Error("AccessDenied", MULTIPART_OFF);
  const mounted = await tree.mount(parentOf(path));
  if (mounted.storage.id !== session.storageId || mounted.actualPath !== session.actualDir)
    throw new S3Error("InvalidRequest", STORAGE_CHANGED);
  const upstream = { dir: session.actualDir, name: baseName(path), uploadId: session.upstreamId };
  return { session, chunks, path, tree, parts: partsOf(mounted), upstream };
}

/** CreateMultipartUpload: a session with no chunk size, and the storage's own upload (or staging) opened (D22.9). */
async function createMultipartUpload(request: S3Request): Promise<Response> {
  const { c } = request;
  const { root, path, tree } = await target(request, () => new S3Error("InvalidArgument", BAD_KEY));
  if (!(await readUploads(request, null)).enabled) throw new S3Error("AccessDenied", MULTIPART_OFF);
  const before = await lookup(tree, path);
  if (before?.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
  // The folders on the key's way are made now: a staging folder or the storage's upload lives in the last.
  const dir = parentOf(path);
  if (!before && dir !== root) {
    const parent = await lookup(tree, dir);
    if (!parent) await makeFolders(tree, dir);
    else if (!parent.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
  }
  const mounted = await tree.mount(dir);
  const contentType = c.req.header("Content-Type") || contentTypeOf(baseName(path));
  const upstream = await partsOf(mounted)
    .begin(mounted.actualPath, baseName(path), contentType)
    .catch((error: unknown) => Promise.reject(fileFailure(error, "")));
  const now = nowSeconds();
  const session: UploadSession = {
    id: crypto.randomUUID(),
    userId: request.caller.user.id,
    path,
    password: "",
    overwrite: true,
    storageId: mounted.storage.id,
    actualDir: mounted.actualPath,
    upstreamId: upstream.uploadId,
    size: 0,
    chunkSize: 0,
    contentType,
    modifiedMs: null,
    fileMd5: null,
    fileSha1: null,
    fileSha256: null,
    state: "receiving",
    lastActive: now,
  };
  await settleInit(c.var.db, { gone: [], lapsed: [] }, { insert: session }, now);
  return xml(initiateDocument(request.bucket!, request.key, session.id));
}

/**
 * UploadPart: the body streamed straight to the storage as chunk `partNumber - 1`, held to its
 * length, hashed as it goes (and checked against a signed hash or signed chunks), then recorded,
 * replacing a part sent before under that number (D22.11).
 */
async function uploadPart(request: S3Request): Promise<Response> {
  const { c } = request;
  const rawNumber = new URL(c.req.url).searchParams.get("partNumber") ?? "";
  if (!/^\d{1,5}$/.test(rawNumber) || Number(rawNumber) < 1 || Number(rawNumber) > MAX_CHUNKS)
    throw new S3Error("InvalidArgument", PART_NUMBER_INVALID);
  const index = Number(rawNumber) - 1;
  const length = c.req.header(request.chunks ? "x-amz-decoded-content-length" : "Content-Length");
  if (length === undefined || !/^\d{1,16}$/.test(length.trim()))
    throw new S3Error("MissingContentLength", request.chunks ? DECODED_LENGTH_NEEDED : PART_LENGTH_NEEDED);
  const size = Number(length.trim());
  if (size > MAX_PART_BYTES) throw new S3Error("EntityTooLarge", partTooLarge(MAX_PART_BYTES));
  const { session, parts, upstream } = await uploadOf(request);

  // What the client vouched for (a signed hash, signed chunks, a trailer, a checksum) is checked as
  // the bytes stream (payload.ts, as PutObject); the part's own SHA-256 is taken on the way too.
  const payload = payloadOf(request, size);
  const watched = hashed(payload.body, size, {
    short: new S3Error("IncompleteBody", partEndedEarly(size)),
    long: new S3Error("IncompleteBody", partTooLong(size)),
  });
  let tag: string;
  try {
    tag = await parts.putPart(upstream, index, size, watched.body, watched.signal);
  } catch (error) {
    watched.fail(error);
    // A bad chunk signature or the body's own length says more than what the upstream made of it.
    const fault =
      payload.failure() ??
      (await watched.done().then(
        () => null,
        (reason: unknown) => reason,
      ));
    throw fault instanceof S3Error ? fault : fileFailure(error, "");
  }
  const sha256 = await watched.done();
  const fault = await payload.verdict();
  if (fault) {
    // The storage holds these bytes under the part's number now: the part is forgotten, to be sent again.
    await forgetPart(c.var.db, session.id, index);
    throw fault;
  }
  const part: UploadChunk = { sessionId: session.id, index, size, sha256, tag };
  await storePart(c.var.db, part, nowSeconds());
  const headers = new Headers({ ETag: partTag(sha256) });
  const checksum = payload.checksum();
  if (checksum) headers.set(checksum.name, checksum.value);
  return new Response(null, { status: 200, headers });
}

/** CompleteMultipartUpload's `<Part>` list: part numbers and ETags (quotes dropped), in the order given. */
function completeRequestOf(root: XmlElement | null): { number: number; etag: string }[] {
  if (root?.local !== "CompleteMultipartUpload") throw new S3Error("MalformedXML", COMPLETE_XML_INVALID);
  const children = (element: XmlElement) => element.children.filter((child) => typeof child !== "string");
  const text = (element: XmlElement | undefined) =>
    (element?.children.filter((child) => typeof child === "string").join("") ?? "").trim();
  const listed = children(root)
    .filter((child) => child.local === "Part")
    .map((part) => {
      const fields = children(part);
      const number = text(fields.find((field) => field.local === "PartNumber"));
      const etag = text(fields.find((field) => field.local === "ETag")).replace(/^"|"$/g, "");
      if (!/^\d{1,5}$/.test(number)) throw new S3Error("MalformedXML", COMPLETE_XML_INVALID);
      return { number: Number(number), etag };
    });
  if (listed.length === 0) throw new S3Error("MalformedXML", COMPLETE_XML_INVALID);
  return listed;
}

/**
 * The chunks a completion joins, in order (D22.12): numbers ascending (InvalidPartOrder), each
 * uploaded with that ETag (InvalidPart), 1 to N without a gap (the storages number their parts so),
 * every part but the last at least 5 MiB (EntityTooSmall).
 */
function partsToJoin(listed: { number: number; etag: string }[], chunks: UploadChunk[]): UploadChunk[] {
  const byIndex = new Map(chunks.map((chunk) => [chunk.index, chunk]));
  const joined: UploadChunk[] = [];
  for (const [at, part] of listed.entries())
    if (at > 0 && part.number <= listed[at - 1]!.number) throw new S3Error("InvalidPartOrder", INVALID_PART_ORDER);
  for (const [at, part] of listed.entries()) {
    const chunk = byIndex.get(part.number - 1);
    if (!chunk || partTag(chunk.sha256) !== `"${part.etag}"`) throw new S3Error("InvalidPart", INVALID_PART);
    if (part.number !== at + 1) throw new S3Error("InvalidPart", partsWithGap(at + 1));
    joined.push(chunk);
  }
  for (const [at, chunk] of joined.entries())
    if (at < joined.length - 1 && chunk.size < MIN_PART_BYTES)
      throw new S3Error("EntityTooSmall", entityTooSmall(chunk.index + 1, MIN_PART_BYTES));
  return joined;
}

/** CompleteMultipartUpload: the parts listed joined into the object, the session gone, the index told (D22.12). */
async function completeMultipartUpload(request: S3Request): Promise<Response> {
  const { c } = request;
  const { session, chunks, path, tree, parts, upstream } = await uploadOf(request);
  let root: XmlElement | null;
  try {
    root = parseXml(await boundedBody(request, MAX_COMPLETE_BODY, completeTooLong(MAX_COMPLETE_BODY)));
  } catch (error) {
    if (error instanceof BadXml) throw new S3Error("MalformedXML", COMPLETE_XML_INVALID);
    throw error;
  }
  const joined = partsToJoin(completeRequestOf(root), chunks);
  const before = await lookup(tree, path);
  if (before?.isDir) throw new S3Error("InvalidRequest", FOLDER_THERE);
  if (!(await claimCompletion(c.var.db, session.id, nowSeconds())))
    throw new S3Error("OperationAborted", UPLOAD_COMPLETING);
  try {
    await parts.complete(
      upstream,
      joined.map((chunk) => chunk.tag),
    );
  } catch (error) {
    await releaseCompletion(c.var.db, session.id);
    throw fileFailure(error, "");
  }
  await deleteSession(c.var.db, session.id);
  const size = joined.reduce((sum, chunk) => sum + chunk.size, 0);
  const index = new IndexChanges(c.var.db, request.fs);
  index.added(path, false, size);
  await index.flush();
  const after = await lookup(tree, path).catch(() => null);
  const location = new URL(c.req.url);
  location.search = "";
  return xml(completeDocument(location.toString(), request.bucket!, request.key, after ? etagOfObject(after) : '""'));
}

/** AbortMultipartUpload: the parts dropped upstream (or the staging folder removed), the session gone: 204. */
async function abortMultipartUpload(request: S3Request): Promise<Response> {
  const { session, parts, upstream } = await uploadOf(request);
  await parts.abort(upstream).catch((error: unknown) => Promise.reject(fileFailure(error, "")));
  await deleteSession(request.c.var.db, session.id);
  return new Response(null, { status: 204 });
}

/** `max-parts` or `max-uploads`: a whole number, at most 1,000 (S3's page). */
function pageSize(raw: string | null): number {
  if (raw !== null && !/^\d{1,9}$/.test(raw)) throw new S3Error("InvalidArgument", MAX_PARTS_INVALID);
  return Math.min(raw === null ? MAX_LISTED : Number(raw), MAX_LISTED);
}

/** ListParts: the upload's recorded parts by number, in pages (`max-parts`, `part-number-marker`). */
async function listParts(request: S3Request): Promise<Response> {
  const query = new URL(request.c.req.url).searchParams;
  const maxParts = pageSize(query.get("max-parts"));
  const rawMarker = query.get("part-number-marker") ?? "0";
  if (!/^\d{1,5}$/.test(rawMarker)) throw new S3Error("InvalidArgument", PART_NUMBER_INVALID);
  const marker = Number(rawMarker);
  const { session, chunks } = await uploadOf(request);
  const after = chunks.filter((chunk) => chunk.index + 1 > marker).sort((a, b) => a.index - b.index);
  const page = after.slice(0, maxParts);
  return xml(
    listPartsDocument({
      bucket: request.bucket!,
      key: request.key,
      uploadId: session.id,
      marker,
      maxParts,
      truncated: after.length > page.length,
      parts: page.map((chunk) => ({
        number: chunk.index + 1,
        modified: new Date(session.lastActive * 1000),
        etag: partTag(chunk.sha256),
        size: chunk.size,
      })),
      who: whoOf(request),
    }),
  );
}

/**
 * ListMultipartUploads: the key's user's uploads in progress in the bucket, by key then id, with
 * `prefix`, `delimiter` (`/`), `key-marker`, `upload-id-marker` and `max-uploads`; `Initiated` is
 * the time of the upload's last step (D22.13).
 */
async function listMultipartUploads(request: S3Request): Promise<Response> {
  const query = new URL(request.c.req.url).searchParams;
  const maxUploads = pageSize(query.get("max-uploads"));
  const prefix = query.get("prefix") ?? "";
  const delimiter = query.get("delimiter") ?? "";
  const keyMarker = query.get("key-marker") ?? "";
  const uploadIdMarker = query.get("upload-id-marker") ?? "";
  const { path: root } = await bucketFolder(request);
  const now = nowSeconds();
  const listed = (await uploadsBelow(request.c.var.db, request.caller.user.id, root))
    .filter((session) => sessionLapse(session, now) === null)
    .map((session) => ({ key: session.path.slice(root.length + 1), uploadId: session.id, session }))
    .filter(({ key }) => key.startsWith(prefix))
    .filter(({ key, uploadId }) => {
      const order = compareKeys(key, keyMarker);
      return keyMarker === "" || order > 0 || (order === 0 && uploadIdMarker !== "" && uploadId > uploadIdMarker);
    })
    .sort((a, b) => compareKeys(a.key, b.key) || (a.uploadId < b.uploadId ? -1 : 1));
  const uploads: ListedUpload[] = [];
  const prefixes: string[] = [];
  let truncated = false;
  for (const { key, uploadId, session } of listed) {
    const cut = delimiter === "" ? -1 : key.indexOf(delimiter, prefix.length);
    const common = cut < 0 ? null : key.slice(0, cut + delimiter.length);
    if (common !== null && prefixes.at(-1) === common) continue;
    if (uploads.length + prefixes.length >= maxUploads) {
      truncated = true;
      break;
    }
    if (common !== null) prefixes.push(common);
    else uploads.push({ key, uploadId, initiated: new Date(session.lastActive * 1000) });
  }
  return xml(
    listUploadsDocument({
      bucket: request.bucket!,
      prefix,
      delimiter,
      keyMarker,
      uploadIdMarker,
      maxUploads,
      truncated,
      uploads,
      prefixes,
      who: whoOf(request),
    }),
  );
}

/** The operations this file serves, for server.ts's dispatch. */
export const MULTIPART_HANDLERS: Record<MultipartOperation, (request: S3Request) => Promise<Response>> = {
  CreateMultipartUpload: createMultipartUpload,
  UploadPart: uploadPart,
  CompleteMultipartUpload: completeMultipartUpload,
  AbortMultipartUpload: abortMultipartUpload,
  ListParts: listParts,
  ListMultipartUploads: listMultipartUploads,
};
