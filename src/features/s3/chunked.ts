// Streaming signed payloads (docs/decisions.md D22.8): a PutObject body sent as `aws-chunked`
// (`x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD`), each chunk framed as
// `<hex size>;chunk-signature=<sig>\r\n<bytes>\r\n` and signed over the previous signature (the
// first over the request's own), ending with a signed empty chunk. The frames are parsed as the
// body streams; each chunk is held only until its signature is checked, then passed on, so a
// tampered chunk never reaches the storage (those before it have: the caller removes the file).
import { S3Error } from "./rules.ts";
import { CHUNK_TOO_LARGE, CHUNKED_MALFORMED, CHUNK_SIGNATURE_MISMATCH, CHUNKED_LENGTH } from "./messages.ts";
import { ALGORITHM, hmacHex, sha256Hex } from "./sigv4.ts";

export const STREAMING_PAYLOAD = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
/** The hex SHA-256 of nothing: the chunk string to sign's fixed line. */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/** The largest chunk held for its check. SDKs send 64 KiB; S3 asks at least 8 KiB of all but the last. */
export const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
/** The longest chunk header line (`<hex>;chunk-signature=<64 hex>`), with room to spare. */
const MAX_HEADER_BYTES = 1024;

/** What signs the chunks: the derived key, the request's date and scope, and its own signature (the seed). */
export interface ChunkSigning {
  key: ArrayBuffer;
  amzDate: string;
  scope: string;
  seed: string;
}

/** The signature of one chunk's bytes after `previous`. */
export const chunkSignature = async (signing: ChunkSigning, previous: string, bytes: Uint8Array) =>
  hmacHex(
    signing.key,
    [`${ALGORITHM}-PAYLOAD`, signing.amzDate, signing.scope, previous, EMPTY_SHA256, await sha256Hex(bytes)].join("\n"),
  );

const CRLF = [13, 10] as const;

function indexOfCrlf(bytes: Uint8Array): number {
  for (let i = 0; i + 1 < bytes.length; i++) if (bytes[i] === CRLF[0] && bytes[i + 1] === CRLF[1]) return i;
  return -1;
}

/** The bytes received and not yet parsed, kept as they came and joined once per frame (never regrown). */
class Pending {
  private pieces: Uint8Array[] = [];
  length = 0;
  push(bytes: Uint8Array) {
    this.pieces.push(bytes);
    this.length += bytes.length;
  }
  /** The first `n` bytes (at most what there is) as one array, left in place. */
  peek(n: number): Uint8Array {
    const out = new Uint8Array(Math.min(n, this.length));
    let at = 0;
    for (const piece of this.pieces) {
      if (at >= out.length) break;
      const part = piece.subarray(0, out.length - at);
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
  /** The first `n` bytes, taken out. */
  take(n: number): Uint8Array {
    const out = this.peek(n);
    let left = out.length;
    while (left > 0) {
      const first = this.pieces[0]!;
      if (first.length <= left) {
        this.pieces.shift();
        left -= first.length;
      } else {
        this.pieces[0] = first.subarray(left);
        left = 0;
      }
    }
    this.length -= out.length;
    return out;
  }
}

/**
 * The aws-chunked body decoded to its `decodedLength` bytes, each chunk's signature checked in turn.
 * The stream errors on the first fault (a frame out of shape, a chunk too large, a wrong signature,
 * a length other than the declared one), and `failure()` tells which, in S3's words.
 */
export function verifiedChunks(signing: ChunkSigning, decodedLength: number) {
  const pending = new Pending();
  let previous = signing.seed;
  let chunk: { size: number; signature: string } | null = null;
  let done = false;
  let decoded = 0;
  let failure: S3Error | null = null;
  const fail = (controller: TransformStreamDefaultController<Uint8Array>, error: S3Error) => {
    failure = error;
    controller.error(error);
  };
  const drain = async (controller: TransformStreamDefaultController<Uint8Array>) => {
    for (;;) {
      if (done) {
        if (pending.length > 0) return fail(controller, new S3Error("IncompleteBody", CHUNKED_MALFORMED));
        return;
      }
      if (chunk === null) {
        const end = indexOfCrlf(pending.peek(MAX_HEADER_BYTES + 2));
        if (end < 0) {
          if (pending.length > MAX_HEADER_BYTES) fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
          return;
        }
        const header = new TextDecoder().decode(pending.take(end + 2).subarray(0, end));
        const match = /^([0-9a-fA-F]{1,16});chunk-signature=([0-9a-f]{64})$/.exec(header);
        if (!match) return fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
        const size = Number.parseInt(match[1]!, 16);
        if (size > MAX_CHUNK_BYTES) return fail(controller, new S3Error("InvalidRequest", CHUNK_TOO_LARGE));
        chunk = { size, signature: match[2]! };
      }
      if (pending.length < chunk.size + 2) return;
      const framed = pending.take(chunk.size + 2);
      const bytes = framed.subarray(0, chunk.size);
      if (framed[chunk.size] !== CRLF[0] || framed[chunk.size + 1] !== CRLF[1])
        return fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
      const expected = await chunkSignature(signing, previous, bytes);
      if (expected !== chunk.signature)
        return fail(controller, new S3Error("SignatureDoesNotMatch", CHUNK_SIGNATURE_MISMATCH));
      previous = chunk.signature;
      decoded += bytes.length;
      if (decoded > decodedLength) return fail(controller, new S3Error("IncompleteBody", CHUNKED_LENGTH));
      if (bytes.length === 0) done = true;
      else controller.enqueue(bytes);
      chunk = null;
    }
  };
  const stream = new TransformStream<Uint8Array, Uint8Array>({
    async transform(bytes, controller) {
      if (failure) return;
      pending.push(bytes);
      await drain(controller);
    },
    flush(controller) {
      if (failure) return;
      if (!done || decoded !== decodedLength) fail(controller, new S3Error("IncompleteBody", CHUNKED_LENGTH));
    },
  });
  return { stream, failure: () => failure };
}
