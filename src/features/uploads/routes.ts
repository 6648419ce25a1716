// Chunked uploads (`/api/fs/multipart/*`, the wire of OpenList server/handles/multipart.go that the
// served web UI speaks) with docs/decisions.md D12's changes: the session lives in the database
// (any isolate takes the next chunk), each chunk goes straight upstream (S3: one UploadPart; other
// storages: a staged part), nothing is buffered but the chunk in flight, every step re-checks what
// /api/fs/put checks, and a chunk sent again is compared by its SHA-256.
import type { Context } from "hono";
import * as z from "zod/mini";
import { planned, reading, type RoutePlan, signedIn } from "../../auth/guard.ts";
import { joined } from "../../db/plan.ts";
import type { PartedUploads } from "../../drivers/types.ts";
import { ApiError } from "../../http/errors.ts";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { createRoute } from "../../http/openapi.ts";
import { fromJson } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { cleanPath } from "../../lib/path.ts";
import { emptyBody } from "../../lib/streams.ts";
import { FILE_EXISTS, PERMISSION_DENIED } from "../fs/messages.ts";
import { fileFailure } from "../fs/mounts.ts";
import { exists, makeDirs } from "../fs/operations.ts";
import { hasRelativeSegment, isValidName, isWithin, joinBasePath, joinName } from "../fs/path.ts";
import { fullPathOf, viewerOf, type Viewer } from "../fs/rules.ts";
import { partsOf } from "../fs/staged-parts.ts";
import type { FsState } from "../fs/state.ts";
import { statePlan } from "../fs/store.ts";
import {
  FilePathHeader,
  LastModifiedHeader,
  OverwriteHeader,
  PasswordHeader,
  uploadChecks,
  uploadPath,
} from "../fs/writes.ts";
import {
  cannotComplete,
  CHUNK_INDEX_INVALID,
  CHUNK_SIZE_INVALID,
  DIRECT_UPLOAD_OFF,
  FILE_NAME_INVALID,
  chunkDiffers,
  chunkDiffersCompleted,
  chunkOutOfRange,
  chunkSizeWrong,
  chunkTooLarge,
  COMPLETING,
  FILE_SIZE_INVALID,
  FILE_SIZE_NOT_POSITIVE,
  fileTooLarge,
  incompleteChunk,
  MULTIPART_DISABLED,
  SESSION_COMPLETING,
  SESSION_EXPIRED,
  SESSION_NOT_FOUND,
  STATUS_LOOKUP_INVALID,
  STORAGE_CHANGED,
} from "./messages.ts";
import {
  chunkLength,
  chunkSizeFor,
  fileHashesOf,
  hashed,
  initPlan,
  isS3Upload,
  liveSessionAt,
  MAX_CHUNK_MIB,
  MAX_CHUNKS,
  MIB,
  sessionLapse,
  settingMib,
  snapshot,
  totalChunks,
  type UploadSession,
} from "./rules.ts";
import {
  claimCompletion,
  deleteSession,
  markCompleted,
  recordChunk,
  releaseCompletion,
  settleInit,
  touchSession,
  type UploadLookup,
  uploadReads,
  type UploadReads,
} from "./store.ts";

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * A route's plan: the file side's state (the target's storages guessed from File-Path), the
 * multipart settings and the session the request names, read in the guard's batch.
 */
function uploadPlan(names: Names): RoutePlan<[FsState, UploadReads]> {
  return (c, callerId) => {
    let guessed: string | null = null;
    try {
      guessed = joinBasePath("/", decodeURIComponent(c.req.header("File-Path") ?? ""));
    } catch {}
    const needs = { paths: guessed && !hasRelativeSegment(guessed) ? [guessed] : [], folders: [] };
    return joined(statePlan(c.var.db, needs), uploadReads(c.var.db, lookupOf(c, names, guessed), callerId));
  };
}

const initReads = uploadPlan("path");
const sessionReads = uploadPlan("id");
const statusReads = uploadPlan("id-or-path");

/** How a route names its session: by id, by File-Path and X-File-Size (init), or either (status). */
type Names = "id" | "path" | "id-or-path";

/** The session id a request gives (header or query), or null. */
const idOf = (c: Context<AppEnv>) => c.req.header("X-Upload-Id") || c.req.query("upload_id") || null;

/**
 * The sessions a request names: init and `status?path=&size=` name the caller's sessions at a path
 * and size (D12.5, D12.6); the other steps one session by its id.
 */
function lookupOf(c: Context<AppEnv>, names: Names, initPath: string | null): UploadLookup {
  const atPath = (path: string | null | undefined, size: string | undefined): UploadLookup => {
    if (!path || path === "/" || hasRelativeSegment(path) || !/^\d{1,16}$/.test(size ?? "")) return null;
    return { pathEnd: path, size: Number(size) };
  };
  if (names === "path") return atPath(initPath, c.req.header("X-File-Size"));
  const id = idOf(c);
  if (id || names === "id") return { id: id ?? "" };
  const path = c.req.query("path");
  return atPath(path === undefined ? null : joinBasePath("/", path), c.req.query("size"));
}
const UploadIdHeader = z.object({ "x-upload-id": z.optional(z.string()) });

/** A whole number of at most `digits` digits (a sign allowed): undefined when absent, null when malformed. */
const integerHeader = (digits: number) =>
  z.pipe(
    z.optional(z.string()),
    z.transform((raw) => {
      if (raw === undefined) return undefined;
      return new RegExp(`^-?\\d{1,${digits}}$`).test(raw) ? Number(raw) : null;
    }),
  );

const InitHeaders = z.object({
  "file-path": FilePathHeader,
  "x-file-size": integerHeader(16).openapi({ description: "The file's size in bytes" }),
  "x-chunk-size": integerHeader(16).openapi({ description: "The chunk size the client wants (bytes)" }),
  overwrite: OverwriteHeader.openapi({
    description: "`false`: refuse when the file exists (checked again at complete)",
  }),
  "last-modified": LastModifiedHeader,
  password: PasswordHeader,
  "x-file-md5": z
    .optional(z.string())
    .openapi({ description: "The whole file's MD5 (hex): with the path and size, resumes a live session" }),
  "x-file-sha1": z.optional(z.string()).openapi({ description: "The whole file's SHA-1 (hex)" }),
  "x-file-sha256": z.optional(z.string()).openapi({ description: "The whole file's SHA-256 (hex)" }),
});

const init = createRoute({
  method: "post",
  path: "/api/fs/multipart/init",
  ...reading(signedIn, initReads),
  request: { headers: InitHeaders },
});

const chunk = createRoute({
  method: "put",
  path: "/api/fs/multipart/chunk",
  ...reading(signedIn, sessionReads),
  request: {
    headers: z.object({ ...UploadIdHeader.shape, "x-chunk-index": integerHeader(9) }),
    body: { content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } } },
  },
});

const status = createRoute({
  method: "get",
  path: "/api/fs/multipart/status",
  ...reading(signedIn, statusReads),
  request: {
    query: z.object({
      upload_id: z.optional(z.string()),
      path: z.optional(z.string()).openapi({ description: "Without upload_id: the target path, as given to init" }),
      size: z.optional(z.string()).openapi({ description: "Without upload_id: the file's size in bytes" }),
    }),
  },
});

const complete = createRoute({
  method: "post",
  path: "/api/fs/multipart/complete",
  ...reading(signedIn, sessionReads),
  request: { headers: UploadIdHeader },
});

const abort = createRoute({
  method: "post",
  path: "/api/fs/multipart/abort",
  ...reading(signedIn, sessionReads),
  request: { headers: UploadIdHeader },
});

const DirectBody = z.object({
  path: z.string().check(z.maxLength(4096)).openapi({ description: "The target folder" }),
  file_name: z.string().check(z.maxLength(1024)),
  file_size: z.number().check(z.int(), z.nonnegative()),
  tool: z._default(z.string().check(z.maxLength(64)), "HttpDirect"),
});

/** The target folder's state, read in the guard's batch. */
const directState = fromJson(DirectBody, (db, body) =>
  statePlan(db, { paths: hasRelativeSegment(body.path) ? [] : [joinBasePath("/", body.path) ?? "/"], folders: [] }),
);

const directUploadInfo = createRoute({
  method: "post",
  path: "/api/fs/get_direct_upload_info",
  ...reading(signedIn, directState),
  request: {
    headers: z.object({ overwrite: OverwriteHeader, password: PasswordHeader }),
    body: jsonBody(DirectBody),
  },
});

/** The caller's session the request names: 404 when none (or someone else's), 410 when it expired. */
function sessionOf({ session }: UploadReads): UploadSession {
  const lapse = session && sessionLapse(session, nowSeconds());
  // An S3 multipart upload is the S3 endpoint's alone (D22.9).
  if (!session || lapse === "gone" || isS3Upload(session)) throw new ApiError(404, SESSION_NOT_FOUND);
  if (lapse === "expired") throw new ApiError(410, SESSION_EXPIRED);
  return session;
}

/**
 * What /api/fs/put checks, again, for the session's target (a full path): still inside the
 * caller's base path, still writable with the password given at init; and the storage under it
 * still the one holding the parts.
 */
async function targetOf(c: Context<AppEnv>, state: FsState, session: UploadSession) {
  const viewer = viewerOf(c.var.caller);
  requireInsideBasePath(viewer, session.path);
  const checked = uploadChecks(c, state, viewer, session.path, session.password);
  const mounted = await checked.tree.mount(checked.dir);
  if (mounted.storage.id !== session.storageId || mounted.actualPath !== session.actualDir)
    throw new ApiError(409, STORAGE_CHANGED);
  return { ...checked, mounted, parts: partsOf(mounted) };
}

function requireInsideBasePath(viewer: Viewer, path: string) {
  const base = cleanPath(viewer.basePath || "/");
  if (!isWithin(path, base)) throw new ApiError(403, PERMISSION_DENIED);
  fullPathOf(viewer, base === "/" ? path : path.slice(base.length) || "/");
}

/**
 * `status?path=&size=` (OpenList internal/multipart/session.go:579-597): the caller's live session
 * for the path (joined to the base path, 403 when relative) and size; 404 when none (D12.6).
 */
function liveSessionFor(
  c: Context<AppEnv>,
  reads: UploadReads,
  path: string | undefined,
  size: string | undefined,
): UploadSession {
  const full = path === undefined ? null : fullPathOf(viewerOf(c.var.caller), path);
  if (full === null || !/^\d{1,16}$/.test(size ?? "")) throw new ApiError(400, STATUS_LOOKUP_INVALID);
  const session = liveSessionAt(reads.candidates, full, Number(size), nowSeconds());
  if (!session) throw new ApiError(404, SESSION_NOT_FOUND);
  return session;
}

/**
 * Aborts upstream the sessions an init supersedes (D12.5). One on another storage, or whose abort
 * fails, is left to the cron job (marked lapsed) rather than failing the new upload.
 */
async function abortStale(stale: UploadSession[], storageId: number, parts: PartedUploads, name: string) {
  const gone: string[] = [];
  const lapsed: string[] = [];
  for (const session of stale) {
    const aborted =
      session.storageId === storageId &&
      (await parts.abort(upstreamOf(session, name)).then(
        () => true,
        () => false,
      ));
    (aborted ? gone : lapsed).push(session.id);
  }
  return { gone, lapsed };
}

/** A chunk's bytes, held to `size` bytes (chunk `index`): refused short or long. */
const watchedChunk = (body: ReadableStream<Uint8Array> | null, size: number, index: number) =>
  hashed(body ?? emptyBody(), size, {
    short: new ApiError(400, incompleteChunk(index, size)),
    long: new ApiError(400, chunkTooLarge(index, size)),
  });

/** The SHA-256 of a body held to `size` bytes (chunk `index`), read to its end. */
async function sha256Of(body: ReadableStream<Uint8Array> | null, size: number, index: number) {
  const watched = watchedChunk(body, size, index);
  await watched.body.pipeTo(new WritableStream()).catch(() => undefined);
  return watched.done();
}

const upstreamOf = (session: UploadSession, name: string) => ({
  dir: session.actualDir,
  name,
  uploadId: session.upstreamId,
});

/** Reads a request body to its end, so the browser sees the answer rather than a broken upload. */
const drain = (body: ReadableStream<Uint8Array> | null) => body?.pipeTo(new WritableStream()).catch(() => undefined);

/** `init`: a new session at the target, or the caller's live one for the same file (D12.5). */
async function openUpload(c: Context<AppEnv>, headers: z.output<typeof InitHeaders>) {
  const [state, reads] = await planned(c, initReads);
  if (!reads.enabled) throw new ApiError(403, MULTIPART_DISABLED);
  const viewer = viewerOf(c.var.caller);
  const path = uploadPath(viewer, headers["file-path"]);
  const { password, overwrite } = headers;
  const size = headers["x-file-size"];
  if (size === undefined || size === null) throw new ApiError(400, FILE_SIZE_INVALID);
  if (size <= 0) throw new ApiError(400, FILE_SIZE_NOT_POSITIVE);
  const wanted = headers["x-chunk-size"];
  if (wanted === null) throw new ApiError(400, CHUNK_SIZE_INVALID);
  const hashes = fileHashesOf((header) => c.req.header(header));
  const { name, dir, tree } = uploadChecks(c, state, viewer, path, password);
  if (!overwrite && (await exists(tree, path))) throw new ApiError(403, FILE_EXISTS);
  const mounted = await tree.mount(dir);
  const parts = partsOf(mounted);
  const plan = initPlan(
    reads.candidates,
    { path, size, hashes, storageId: mounted.storage.id, actualDir: mounted.actualPath },
    nowSeconds(),
  );
  if (plan.resume) {
    // The same file again (a page reloaded): the session goes on where it was (D12.5).
    const resumed = plan.resume;
    const superseded = await abortStale(plan.stale, mounted.storage.id, parts, name);
    await settleInit(c.var.db, superseded, { resume: resumed.id, fields: { password, overwrite } }, nowSeconds());
    const chunks = reads.chunks.filter((row) => row.sessionId === resumed.id);
    return ok(c, { ...snapshot(resumed, chunks), resumed: true });
  }
  const chunkSize = chunkSizeFor(size, wanted ?? null, settingMib(reads.chunkMib), parts.minPartBytes);
  if (chunkSize === null) throw new ApiError(400, fileTooLarge(size, MAX_CHUNKS, MAX_CHUNK_MIB * MIB));
  if (mounted.actualPath !== "/") await makeDirs(tree, dir);
  const contentType = c.req.header("Content-Type") || "application/octet-stream";
  const upstream = await parts
    .begin(mounted.actualPath, name, contentType)
    .catch((error: unknown) => Promise.reject(fileFailure(error, "")));
  // Aborted once the new upload exists upstream: a refused begin leaves the old ones as they were.
  const superseded = await abortStale(plan.stale, mounted.storage.id, parts, name);
  const session: UploadSession = {
    id: crypto.randomUUID(),
    userId: c.var.caller.user.id,
    path,
    password,
    overwrite,
    storageId: mounted.storage.id,
    actualDir: mounted.actualPath,
    upstreamId: upstream.uploadId,
    size,
    chunkSize,
    contentType,
    modifiedMs: headers["last-modified"] ?? null,
    fileMd5: hashes.md5,
    fileSha1: hashes.sha1,
    fileSha256: hashes.sha256,
    state: "receiving",
    lastActive: nowSeconds(),
  };
  await settleInit(c.var.db, superseded, { insert: session }, session.lastActive);
  return ok(c, { ...snapshot(session, []), resumed: false });
}

/** `chunk`: one chunk stored upstream; the same bytes again accepted, other bytes refused (D12.7). */
async function storeChunk(
  c: Context<AppEnv>,
  index: number | null | undefined,
  body: ReadableStream<Uint8Array> | null,
) {
  const [state, reads] = await planned(c, sessionReads);
  const session = sessionOf(reads);
  if (index === undefined || index === null) throw new ApiError(400, CHUNK_INDEX_INVALID);
  const stored = reads.chunks.find((row) => row.index === index);
  if (session.state === "completed") {
    // A straggler is absorbed (the UI stops on `completed`), unless its bytes are not the file's (D12.7).
    if (stored && (await sha256Of(body, stored.size, index)) !== stored.sha256)
      throw new ApiError(400, chunkDiffersCompleted(index));
    return ok(c, snapshot(session, reads.chunks));
  }
  if (session.state === "completing") throw new ApiError(400, SESSION_COMPLETING);
  const total = totalChunks(session);
  if (index < 0 || index >= total) throw new ApiError(400, chunkOutOfRange(index, total));
  const expected = chunkLength(session, index);
  const declared = c.req.header("Content-Length");
  if (declared !== undefined && Number(declared) !== expected)
    throw new ApiError(400, chunkSizeWrong(index, Number(declared), expected));
  const { name, parts } = await targetOf(c, state, session);
  const watched = watchedChunk(body, expected, index);
  const now = nowSeconds();
  if (stored) {
    // Sent again: accepted when the bytes prove the same, refused when they differ (D12.7).
    await watched.body.pipeTo(new WritableStream());
    if ((await watched.done()) !== stored.sha256) throw new ApiError(400, chunkDiffers(index));
    await touchSession(c.var.db, session.id, now);
    return ok(c, snapshot(session, reads.chunks));
  }
  let tag: string;
  try {
    tag = await parts.putPart(upstreamOf(session, name), index, expected, watched.body, watched.signal);
  } catch (error) {
    watched.fail(error);
    // The body's own refusal (short, long) says more than what the upstream made of it.
    throw await watched.done().then(
      () => fileFailure(error, ""),
      (fault: unknown) => (fault instanceof ApiError ? fault : fileFailure(error, "")),
    );
  }
  const sha256 = await watched.done();
  const recorded = await recordChunk(c.var.db, { sessionId: session.id, index, size: expected, sha256, tag }, now);
  if (recorded.sha256 !== sha256) throw new ApiError(400, chunkDiffers(index));
  return ok(c, snapshot(session, [...reads.chunks, recorded]));
}

export function registerUploadRoutes(app: Router) {
  app.openapi(init, (c) => openUpload(c, c.req.valid("header")));

  app.openapi(chunk, async (c) => {
    const body = c.req.raw.body;
    try {
      return await storeChunk(c, c.req.valid("header")["x-chunk-index"], body);
    } finally {
      await drain(body);
    }
  });

  app.openapi(status, async (c) => {
    const query = c.req.valid("query");
    const [state, reads] = await planned(c, statusReads);
    const session = idOf(c) ? sessionOf(reads) : liveSessionFor(c, reads, query.path, query.size);
    if (session.state !== "completed") requireInsideBasePath(viewerOf(c.var.caller), session.path);
    if (session.state !== "completed") uploadChecks(c, state, viewerOf(c.var.caller), session.path, session.password);
    return ok(
      c,
      snapshot(
        session,
        reads.chunks.filter((row) => row.sessionId === session.id),
      ),
    );
  });

  app.openapi(complete, async (c) => {
    const [state, reads] = await planned(c, sessionReads);
    const session = sessionOf(reads);
    const { chunks } = reads;
    if (session.state === "completed") return ok(c, snapshot(session, chunks));
    const { name, tree, parts } = await targetOf(c, state, session);
    if (chunks.length < totalChunks(session)) {
      const received = chunks.reduce((sum, row) => sum + row.size, 0);
      throw new ApiError(400, cannotComplete(received, session.size), snapshot(session, chunks));
    }
    const upstream = upstreamOf(session, name);
    if (!session.overwrite && (await exists(tree, session.path))) {
      // Someone wrote the name meanwhile: this upload cannot land, so nothing of it stays.
      await parts.abort(upstream).catch(() => undefined);
      await deleteSession(c.var.db, session.id);
      throw new ApiError(403, FILE_EXISTS);
    }
    const now = nowSeconds();
    if (!(await claimCompletion(c.var.db, session.id, now))) throw new ApiError(409, COMPLETING);
    const tags = [...chunks].sort((a, b) => a.index - b.index).map((row) => row.tag);
    try {
      await parts.complete(upstream, tags);
    } catch (error) {
      await releaseCompletion(c.var.db, session.id);
      throw fileFailure(error, "");
    }
    await markCompleted(c.var.db, session.id, nowSeconds());
    return ok(c, snapshot({ ...session, state: "completed" }, []));
  });

  app.openapi(directUploadInfo, async (c) => {
    const body = c.req.valid("json");
    const headers = c.req.valid("header");
    const state = await planned(c, directState);
    const viewer = viewerOf(c.var.caller);
    if (!isValidName(body.file_name)) throw new ApiError(403, FILE_NAME_INVALID);
    const path = joinName(fullPathOf(viewer, body.path), body.file_name);
    const { name, dir, tree } = uploadChecks(c, state, viewer, path, headers.password);
    if (!headers.overwrite && (await exists(tree, path))) throw new ApiError(403, FILE_EXISTS);
    const mounted = await tree.mount(dir);
    if (!mounted.backend.directUpload) throw new ApiError(403, DIRECT_UPLOAD_OFF);
    if (mounted.actualPath !== "/") await makeDirs(tree, dir);
    const direct = await mounted.backend
      .directUpload(mounted.actualPath, name, body.file_size)
      .catch((error: unknown) => Promise.reject(fileFailure(error, "")));
    return ok(c, { upload_url: direct.url, method: direct.method, chunk_size: 0, headers: direct.headers });
  });

  app.openapi(abort, async (c) => {
    const [state, reads] = await planned(c, sessionReads);
    const session = sessionOf(reads);
    if (session.state === "completed") return ok(c, null);
    const { name, parts } = await targetOf(c, state, session);
    await parts.abort(upstreamOf(session, name)).catch((error: unknown) => Promise.reject(fileFailure(error, "")));
    await deleteSession(c.var.db, session.id);
    return ok(c, null);
  });
}
