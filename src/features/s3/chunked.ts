// Streaming payloads (docs/decisions.md D22.8, D22.15): a PutObject body sent as `aws-chunked`.
// Signed (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]`), each chunk is framed as
// `<hex size>;chunk-signature=<sig>\r\n<bytes>\r\n` and signed over the previous signature (the
// first over the request's own), ending with a signed empty chunk; unsigned
// (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`), the frames are `<hex size>\r\n<bytes>\r\n`. The trailer
// variants end with trailing header lines after the empty chunk: the checksum `x-amz-trailer`
// named, and when signed an `x-amz-trailer-signature` over them. The frames are parsed as the body
// streams; a signed chunk is held only until its signature is checked, then passed on, so a
// tampered chunk never reaches the storage (those before it have: the caller removes the file).
import { S3Error } from "./rules.ts";
import {
  CHUNK_TOO_LARGE,
  CHUNKED_MALFORMED,
  CHUNK_SIGNATURE_MISMATCH,
  CHUNKED_LENGTH,
  checksumInvalid,
  checksumMismatch,
  TRAILER_MALFORMED,
  TRAILER_SIGNATURE_MISMATCH,
  trailerMissing,
  TRAILER_UNSUPPORTED,
} from "./messages.ts";
import { ALGORITHM, hmacHex, sha256Hex, sha256Of } from "./sigv4.ts";
import {
  type ChecksumAlgorithm,
  checksumAlgorithmOf,
  checksumFor,
  checksumHeader,
  checksumValueValid,
} from "./checksums.ts";

export const STREAMING_PAYLOAD = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
export const STREAMING_PAYLOAD_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER";
export const STREAMING_UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
/** The streaming payloads this endpoint decodes, by their `x-amz-content-sha256`. */
const STREAMING_PAYLOADS = [STREAMING_PAYLOAD, STREAMING_PAYLOAD_TRAILER, STREAMING_UNSIGNED_TRAILER] as const;
export type StreamingPayload = (typeof STREAMING_PAYLOADS)[number];
export const isStreamingPayload = (hash: string): hash is StreamingPayload =>
  STREAMING_PAYLOADS.some((known) => known === hash);

/** The hex SHA-256 of nothing: the chunk string to sign's fixed line. */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/** The largest chunk held for its check. SDKs send 64 KiB; S3 asks at least 8 KiB of all but the last. */
const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
/** The longest chunk header line (`<hex>;chunk-signature=<64 hex>`), with room to spare. */
const MAX_HEADER_BYTES = 1024;
/** The most trailer bytes held: a checksum and a signature are ~150. */
const MAX_TRAILER_BYTES = 4096;

/** What signs the chunks: the derived key, the request's date and scope, and its own signature (the seed). */
export interface ChunkSigning {
  key: ArrayBuffer;
  amzDate: string;
  scope: string;
  seed: string;
}

/** An aws-chunked body's shape: signed or not, with a trailer section or not, and the checksum it carries. */
export interface ChunkedPayload {
  /** The chunks' signing; null for the unsigned variant. */
  signing: ChunkSigning | null;
  /** Whether trailing headers follow the empty chunk (the `-TRAILER` variants). */
  trailing: boolean;
  /** The checksum `x-amz-trailer` names; null when it names none. */
  trailer: ChecksumAlgorithm | null;
}

/** The payload a streaming `x-amz-content-sha256` names, with the checksum `x-amz-trailer` names (D22.15). */
export function chunkedPayloadOf(
  hash: StreamingPayload,
  trailer: string | undefined,
  signing: ChunkSigning,
): ChunkedPayload {
  const trailing = hash !== STREAMING_PAYLOAD;
  let algorithm: ChecksumAlgorithm | null = null;
  if (trailing && trailer !== undefined && trailer.trim() !== "") {
    algorithm = checksumAlgorithmOf(trailer);
    if (!algorithm) throw new S3Error("InvalidRequest", TRAILER_UNSUPPORTED);
  }
  return { signing: hash === STREAMING_UNSIGNED_TRAILER ? null : signing, trailing, trailer: algorithm };
}

/** The signature of one chunk's bytes after `previous`. */
export const chunkSignature = async (signing: ChunkSigning, previous: string, bytes: Uint8Array) =>
  hmacHex(
    signing.key,
    [`${ALGORITHM}-PAYLOAD`, signing.amzDate, signing.scope, previous, EMPTY_SHA256, await sha256Hex(bytes)].join("\n"),
  );

/** The canonical form of trailing headers: `name:value\n` each, by name; the signature's own line left out. */
export const canonicalTrailers = (trailers: ReadonlyMap<string, string>) =>
  [...trailers]
    .filter(([name]) => name !== TRAILER_SIGNATURE)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}:${value}\n`)
    .join("");

/** The trailer's signature after the empty chunk's (`previous`). */
export const trailerSignature = async (
  signing: ChunkSigning,
  previous: string,
  trailers: ReadonlyMap<string, string>,
) =>
  hmacHex(
    signing.key,
    [
      `${ALGORITHM}-TRAILER`,
      signing.amzDate,
      signing.scope,
      previous,
      await sha256Of(canonicalTrailers(trailers)),
    ].join("\n"),
  );

const TRAILER_SIGNATURE = "x-amz-trailer-signature";

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
  /** The first `n` bytes, taken out (a view, not a copy, when the first piece holds them). */
  take(n: number): Uint8Array {
    const first = this.pieces[0];
    if (first && first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.pieces.shift();
      else this.pieces[0] = first.subarray(n);
      this.length -= n;
      return out;
    }
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

type Controller = TransformStreamDefaultController<Uint8Array>;

/**
 * The aws-chunked body decoded to its `decodedLength` bytes: each signed chunk's signature checked
 * in turn, the trailer's signature and checksum at the end. The stream errors on the first fault
 * (a frame out of shape, a chunk too large, a wrong signature, a length other than the declared
 * one, a trailer missing or not matching), and `failure()` tells which, in S3's words;
 * `finished()` tells that the body was read to its end and checked whole.
 */
export function decodedChunks(payload: ChunkedPayload, decodedLength: number) {
  const { signing } = payload;
  const pending = new Pending();
  const sum = payload.trailer ? checksumFor(payload.trailer) : null;
  let previous = signing?.seed ?? "";
  let chunk: { size: number; left: number; signature: string | null } | null = null;
  let state: "chunks" | "trailer" | "done" = "chunks";
  const trailers = new Map<string, string>();
  let decoded = 0;
  let failure: S3Error | null = null;
  let verified: { name: string; value: string } | null = null;
  let closed = false;
  let settle = () => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const fail = (controller: Controller, error: S3Error) => {
    failure = error;
    sum?.abort();
    controller.error(error);
    settle();
  };
  const emit = async (controller: Controller, bytes: Uint8Array) => {
    decoded += bytes.length;
    if (decoded > decodedLength) return fail(controller, new S3Error("IncompleteBody", CHUNKED_LENGTH));
    await sum?.update(bytes);
    controller.enqueue(bytes);
  };
  /** The next line (without its CRLF), or null until it has arrived; longer than `limit` is malformed. */
  const line = (controller: Controller, limit: number): string | null => {
    const end = indexOfCrlf(pending.peek(limit + 2));
    if (end < 0) {
      if (pending.length > limit) fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
      return null;
    }
    return new TextDecoder().decode(pending.take(end + 2).subarray(0, end));
  };
  /** One chunk's header: its size, and its signature when signed. */
  const header = (controller: Controller, text: string) => {
    const match = signing
      ? /^([0-9a-fA-F]{1,16});chunk-signature=([0-9a-f]{64})$/.exec(text)
      : /^([0-9a-fA-F]{1,16})(?:;.*)?$/.exec(text);
    if (!match) return fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
    const size = Number.parseInt(match[1]!, 16);
    if (signing && size > MAX_CHUNK_BYTES) return fail(controller, new S3Error("InvalidRequest", CHUNK_TOO_LARGE));
    chunk = { size, left: size, signature: signing ? match[2]! : null };
  };
  /** The chunks' part: true when it wants more bytes. */
  const chunks = async (controller: Controller): Promise<boolean> => {
    if (chunk === null) {
      const text = line(controller, MAX_HEADER_BYTES);
      if (text === null) return true;
      header(controller, text);
      if (failure) return false;
    }
    const current = chunk!;
    if (current.signature !== null && signing) {
      // A signed chunk is held whole until its signature is checked.
      const framed = current.size === 0 && payload.trailing ? 0 : current.size + 2;
      if (pending.length < framed) return true;
      const taken = pending.take(framed);
      const bytes = taken.subarray(0, current.size);
      if (framed > 0 && (taken[current.size] !== CRLF[0] || taken[current.size + 1] !== CRLF[1])) {
        fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
        return false;
      }
      if ((await chunkSignature(signing, previous, bytes)) !== current.signature) {
        fail(controller, new S3Error("SignatureDoesNotMatch", CHUNK_SIGNATURE_MISMATCH));
        return false;
      }
      previous = current.signature;
      if (bytes.length > 0) await emit(controller, bytes);
    } else {
      // An unsigned chunk's bytes pass on as they arrive.
      while (current.left > 0) {
        if (pending.length === 0) return true;
        const bytes = pending.take(Math.min(current.left, pending.length));
        current.left -= bytes.length;
        await emit(controller, bytes);
        if (failure) return false;
      }
      if (current.size > 0 || !payload.trailing) {
        if (pending.length < 2) return true;
        const crlf = pending.take(2);
        if (crlf[0] !== CRLF[0] || crlf[1] !== CRLF[1]) {
          fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
          return false;
        }
      }
    }
    if (current.size === 0) state = payload.trailing ? "trailer" : "done";
    chunk = null;
    return false;
  };
  /** The trailer's lines up to the empty one that ends them (one right after the empty chunk is skipped). */
  const trailerLines = (controller: Controller): boolean => {
    for (;;) {
      const text = line(controller, MAX_TRAILER_BYTES);
      if (text === null) return !failure;
      if (text === "") {
        if (trailers.size > 0) return false;
        continue;
      }
      if (!addTrailer(controller, text)) return false;
    }
  };
  const addTrailer = (controller: Controller, text: string): boolean => {
    const colon = text.indexOf(":");
    if (colon <= 0 || trailers.size >= 8) {
      fail(controller, new S3Error("MalformedTrailerError", TRAILER_MALFORMED));
      return false;
    }
    trailers.set(text.slice(0, colon).trim().toLowerCase(), text.slice(colon + 1).trim());
    return true;
  };
  /** The trailer checked: its signature when signed, then the checksum against the bytes that passed. */
  const checkTrailer = async (controller: Controller) => {
    if (signing) {
      const sent = trailers.get(TRAILER_SIGNATURE);
      if (!sent || (await trailerSignature(signing, previous, trailers)) !== sent)
        return fail(controller, new S3Error("SignatureDoesNotMatch", TRAILER_SIGNATURE_MISMATCH));
    }
    if (!payload.trailer || !sum) return;
    const name = checksumHeader(payload.trailer);
    const sent = trailers.get(name);
    if (sent === undefined) return fail(controller, new S3Error("MalformedTrailerError", trailerMissing(name)));
    if (!checksumValueValid(payload.trailer, sent))
      return fail(controller, new S3Error("InvalidRequest", checksumInvalid(name)));
    if ((await sum.base64()) !== sent) return fail(controller, new S3Error("BadDigest", checksumMismatch(name)));
    verified = { name, value: sent };
  };
  const drain = async (controller: Controller) => {
    while (!failure) {
      if (state === "done") {
        if (pending.length > 0) fail(controller, new S3Error("IncompleteBody", CHUNKED_MALFORMED));
        return;
      }
      if (state === "trailer") {
        if (trailerLines(controller) || failure) return;
        state = "done";
        await checkTrailer(controller);
        continue;
      }
      if (await chunks(controller)) return;
    }
  };
  const stream = new TransformStream<Uint8Array, Uint8Array>({
    async transform(bytes, controller) {
      if (failure) return;
      pending.push(bytes);
      await drain(controller);
    },
    async flush(controller) {
      if (failure) return;
      if (state === "trailer") {
        // The last trailer line may come without its CRLF, and the empty line after it not at all.
        const rest = new TextDecoder().decode(pending.take(pending.length)).trim();
        if (rest !== "" && !addTrailer(controller, rest)) return;
        state = "done";
        await checkTrailer(controller);
        if (failure) return;
      }
      if (state !== "done" || decoded !== decodedLength)
        fail(controller, new S3Error("IncompleteBody", CHUNKED_LENGTH));
      closed = true;
      settle();
    },
  });
  return {
    stream,
    failure: () => failure,
    /** Read to its end and checked whole. */
    finished: () => closed && failure === null,
    /** Resolves once the body ended or failed. */
    settled,
    /** The trailer's checksum once it held. */
    checksum: () => verified,
  };
}

/** The signed payload without a trailer, as D22.8 first served it. */
export const verifiedChunks = (signing: ChunkSigning, decodedLength: number) =>
  decodedChunks({ signing, trailing: false, trailer: null }, decodedLength);
