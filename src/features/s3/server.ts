// The S3 endpoint at /s3 (path-style), on the file layer of /api/fs (docs/decisions.md D22): the
// same mount tree, rules (the key's scope and rights cut from its user's, hide rules, meta
// passwords) and writes (putFile, makeDirs, removePath, the search index). A request is signed
// with an access key's S3 credentials (AWS Signature Version 4, sigv4.ts); its key, user, roles,
// metas and settings are read in one batch (store.ts). This file checks the signature and
// dispatches; the operations are buckets.ts and objects.ts over request.ts's tree, their decisions
// rules.ts, the texts messages.ts and the XML xml.ts.
import { createBucket, deleteBucket, listBuckets, listObjects } from "./buckets.ts";
import { copyObject, deleteObject, deleteObjects, getObject, putObject } from "./objects.ts";
import { MULTIPART_HANDLERS } from "./multipart.ts";
import { bucketFolder, type S3Request, xml } from "./request.ts";
import type { Context } from "hono";
import { keyCaller, keyRefusal, keyTouchDue } from "../../auth/access-keys.ts";
import { clientIp } from "../../auth/client.ts";
import { isLockedOut } from "../../auth/lockout.ts";
import { otpSealingKeys } from "../../env.ts";
import type { AppEnv } from "../../http/context.ts";
import { chunkedPayloadOf, isStreamingPayload } from "./chunked.ts";
import { viewerOf } from "../fs/rules.ts";
import { httpDateSeconds } from "../fs/serve.ts";
import { open } from "../two-factor/secret-box.ts";
import {
  CONTENT_SHA_MISMATCH,
  CONTENT_SHA_MISSING,
  DATE_MISSING,
  keyRefused,
  LOCKED_OUT,
  NO_SUCH_ACCESS_KEY,
  PRESIGNED_EXPIRED,
  PRESIGNED_MALFORMED,
  PRESIGNED_NOT_YET_VALID,
  PRESIGNED_TOO_LONG,
  SIGN_WITH_SIGV4,
  SIGNATURE_MISMATCH,
  STREAMING_UNSUPPORTED,
  TIME_SKEWED,
} from "./messages.ts";
import { bucketAndKey, operationOf, S3Error, s3ErrorOf, type Operation, virtualBucketAndKey } from "./rules.ts";
import { scopeOf, signingKey, UNSIGNED_PAYLOAD } from "../../lib/sigv4.ts";
import {
  type Authorization,
  amzDateSeconds,
  MAX_PRESIGNED_SECONDS,
  MAX_SKEW_SECONDS,
  parseAuthorization,
  parseQueryAuthorization,
  signatureMatches,
  withoutSignature,
} from "./sigv4.ts";
import { countFailure, readS3Request } from "./store.ts";
import { errorDocument, S3_NS } from "./xml.ts";

/** One S3 request: path-style under /s3, or virtual-hosted-style for `virtualBucket` (D22.17). */
export async function handleS3(c: Context<AppEnv>, virtualBucket?: string): Promise<Response> {
  const requestId = crypto.randomUUID().replace(/-/g, "").slice(0, 16).toUpperCase();
  try {
    const reply = await dispatch(c, virtualBucket);
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
  ...MULTIPART_HANDLERS,
};

async function dispatch(c: Context<AppEnv>, virtualBucket: string | undefined): Promise<Response> {
  const url = new URL(c.req.url);
  const request = await signedRequest(c, url, virtualBucket);
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

async function signedRequest(c: Context<AppEnv>, url: URL, virtualBucket: string | undefined): Promise<S3Request> {
  const now = Math.floor(Date.now() / 1000);
  const header = c.req.header("Authorization");
  if (!header && !url.searchParams.has("X-Amz-Algorithm")) throw new S3Error("AccessDenied", SIGN_WITH_SIGV4);
  const { auth, amzDate, rawQuery, payloadHash } = header
    ? headerSigning(c, url, header, now)
    : querySigning(c, url, now);
  const streaming = isStreamingPayload(payloadHash) && Boolean(header);
  if (payloadHash.startsWith("STREAMING-") && !streaming) throw new S3Error("NotImplemented", STREAMING_UNSUPPORTED);
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
  // The signature covers the path as sent; a virtual host's bucket is in its name (D22.17).
  const { bucket, key } =
    virtualBucket === undefined ? bucketAndKey(url.pathname) : virtualBucketAndKey(virtualBucket, url.pathname);
  // The chunks of a streaming payload are signed in a chain from the request's own signature (D22.8, D22.15).
  const chunks = isStreamingPayload(payloadHash)
    ? chunkedPayloadOf(payloadHash, c.req.header("x-amz-trailer"), {
        key: await signingKey(secret, auth),
        amzDate,
        scope: scopeOf(auth),
        seed: auth.signature,
      })
    : null;
  return { c, caller, viewer: viewerOf(caller), scope: found.key.path, fs: found.fs, bucket, key, payloadHash, chunks };
}
