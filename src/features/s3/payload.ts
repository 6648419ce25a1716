// The bytes a request stores (PutObject; docs/decisions.md D22.2, D22.8, D22.15): the object's size
// as declared, the body decoded when aws-chunked, and everything the client vouched for checked as
// the bytes stream to the storage, never held: the signed SHA-256, each chunk's signature, the
// trailer, and an `x-amz-checksum-<algorithm>` header or trailer. A fault is known only once the
// bytes have passed, so the caller removes what it wrote and answers the fault.
import { FileError } from "../../http/errors.ts";
import { uploadEndedEarly, uploadTooLong } from "../fs/messages.ts";
import { emptyBody } from "../../lib/streams.ts";
import { hashed } from "../uploads/rules.ts";
import { type Checksum, CHECKSUM_ALGORITHMS, checksumFor, checksumHeader, checksumValueValid } from "./checksums.ts";
import { decodedChunks } from "./chunked.ts";
import {
  CHECKSUMS_MANY,
  CHUNKED_LENGTH,
  checksumInvalid,
  checksumMismatch,
  CONTENT_LENGTH_NEEDED,
  CONTENT_SHA_MISMATCH,
  DECODED_LENGTH_NEEDED,
} from "./messages.ts";
import type { S3Request } from "./request.ts";
import { S3Error } from "./rules.ts";
import { UNSIGNED_PAYLOAD } from "../../lib/sigv4.ts";

/** How long a stored body's end may lag the storage's answer before the body counts as cut short. */
const SETTLE_MS = 10_000;

/** The object's size: `x-amz-decoded-content-length` for an aws-chunked body, else `Content-Length`. */
export function declaredSize(request: S3Request): number {
  const length = request.c.req.header(request.chunks ? "x-amz-decoded-content-length" : "Content-Length");
  if (length === undefined || !/^\d{1,16}$/.test(length.trim()))
    throw new S3Error("MissingContentLength", request.chunks ? DECODED_LENGTH_NEEDED : CONTENT_LENGTH_NEEDED);
  return Number(length.trim());
}

/** The `x-amz-checksum-<algorithm>` header sent, checked for shape; null when none is. */
function headerChecksum(headers: Headers): { sum: Checksum; name: string; value: string } | null {
  const sent = CHECKSUM_ALGORITHMS.filter((algorithm) => headers.has(checksumHeader(algorithm)));
  if (sent.length === 0) return null;
  if (sent.length > 1) throw new S3Error("InvalidRequest", CHECKSUMS_MANY);
  const algorithm = sent[0]!;
  const name = checksumHeader(algorithm);
  const value = headers.get(name)!.trim();
  if (!checksumValueValid(algorithm, value)) throw new S3Error("InvalidRequest", checksumInvalid(name));
  return { sum: checksumFor(algorithm), name, value };
}

/** `body` passed through as it is read, each piece added to `sum`. */
function summed(body: ReadableStream<Uint8Array>, sum: Checksum): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          await sum.update(value);
          controller.enqueue(value);
        } catch (error) {
          sum.abort();
          controller.error(error);
        }
      },
      cancel: (reason) => {
        sum.abort();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** A request's body on its way to the storage, and what it is checked against. */
export interface Payload {
  body: ReadableStream<Uint8Array>;
  /** After a put that threw: the payload's own fault behind it, or null when the storage failed on its own. */
  failure(): S3Error | null;
  /** After a put that succeeded: the fault found at the body's end, or null when everything held. */
  verdict(): Promise<S3Error | null>;
  /** The checksum header S3 echoes once it held (`x-amz-checksum-<algorithm>`), or null. */
  checksum(): { name: string; value: string } | null;
}

export function payloadOf(request: S3Request, size: number): Payload {
  const { c } = request;
  const raw = c.req.raw.body ?? emptyBody();
  const header = headerChecksum(c.req.raw.headers);
  const chunked = request.chunks ? decodedChunks(request.chunks, size) : null;
  // A signed whole-body hash is checked as it streams to the storage (D22.2); chunks are checked one by one (D22.8).
  const check =
    chunked || request.payloadHash === UNSIGNED_PAYLOAD
      ? null
      : hashed(raw, size, {
          short: new FileError("refused", uploadEndedEarly(0, size)),
          long: new FileError("refused", uploadTooLong(size)),
        });
  const decoded = chunked ? raw.pipeThrough(chunked.stream) : (check?.body ?? raw);
  const body = header ? summed(decoded, header.sum) : decoded;
  let held: { name: string; value: string } | null = null;
  return {
    body,
    failure: () => chunked?.failure() ?? null,
    async verdict() {
      if (chunked) {
        await Promise.race([chunked.settled, new Promise((resolve) => setTimeout(resolve, SETTLE_MS))]);
        const fault = chunked.failure();
        if (fault) return fault;
        if (!chunked.finished()) return new S3Error("IncompleteBody", CHUNKED_LENGTH);
        held = chunked.checksum();
      }
      if (check && (await check.done()) !== request.payloadHash)
        return new S3Error("XAmzContentSHA256Mismatch", CONTENT_SHA_MISMATCH);
      if (header) {
        if ((await header.sum.base64()) !== header.value)
          return new S3Error("BadDigest", checksumMismatch(header.name));
        held = { name: header.name, value: header.value };
      }
      return null;
    },
    checksum: () => held,
  };
}
