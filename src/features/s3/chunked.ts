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
import { ALGORITHM, hmacHex, sha256Hex, sha256Of } from "../../lib/sigv4.ts";
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
 * One aws-chunked body as it is read: the chunk being read, what passed on, the trailer's lines, and
 * the first fault. `decodedChunks` runs it in a TransformStream.
 */
class ChunkDecoder {
  readonly pending = new Pending();
  private readonly sum: ReturnType<typeof checksumFor> | null;
  private readonly signing: ChunkSigning | null;
  private previous: string;
  private chunk: { size: number; left: number; signature: string | null } | null = null;
  state: "chunks" | "trailer" | "done" = "chunks";
  private readonly trailers = new Map<string, string>();
  decoded = 0;
  failure: S3Error | null = null;
  verified: { name: string; value: string } | null = null;
  closed = false;
  settle = () => {};
  readonly settled = new Promise<void>((resolve) => (this.settle = resolve));

  constructor(
    private readonly payload: ChunkedPayload,
    readonly decodedLength: number,
  ) {
    this.signing = payload.signing;
    this.sum = payload.trailer ? checksumFor(payload.trailer) : null;
    this.previous = payload.signing?.seed ?? "";
  }

  fail(controller: Controller, error: S3Error) {
    this.failure = error;
    this.sum?.abort();
    controller.error(error);
    this.settle();
  }

  private async emit(controller: Controller, bytes: Uint8Array) {
    this.decoded += bytes.length;
    if (this.decoded > this.decodedLength) return this.fail(controller, new S3Error("IncompleteBody", CHUNKED_LENGTH));
    await this.sum?.update(bytes);
    controller.enqueue(bytes);
  }

  /** The next line (without its CRLF), or null until it has arrived; longer than `limit` is malformed. */
  private line(controller: Controller, limit: number): string | null {
    const end = indexOfCrlf(this.pending.peek(limit + 2));
    if (end < 0) {
      if (this.pending.length > limit) this.fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
      return null;
    }
    return new TextDecoder().decode(this.pending.take(end + 2).subarray(0, end));
  }

  /** One chunk's header: its size, and its signature when signed. */
  private header(controller: Controller, text: string) {
    const match = this.signing
      ? /^([0-9a-fA-F]{1,16});chunk-signature=([0-9a-f]{64})$/.exec(text)
      : /^([0-9a-fA-F]{1,16})(?:;.*)?$/.exec(text);
    if (!match) return this.fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
    const size = Number.parseInt(match[1]!, 16);
    if (this.signing && size > MAX_CHUNK_BYTES)
      return this.fail(controller, new S3Error("InvalidRequest", CHUNK_TOO_LARGE));
    this.chunk = { size, left: size, signature: this.signing ? match[2]! : null };
  }

  /** A signed chunk, held whole until its signature is checked: true when it wants more bytes. */
  private async signedChunk(controller: Controller, signing: ChunkSigning, signature: string): Promise<boolean> {
    const current = this.chunk!;
    const framed = current.size === 0 && this.payload.trailing ? 0 : current.size + 2;
    if (this.pending.length < framed) return true;
    const taken = this.pending.take(framed);
    const bytes = taken.subarray(0, current.size);
    if (framed > 0 && (taken[current.size] !== CRLF[0] || taken[current.size + 1] !== CRLF[1])) {
      this.fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
      return false;
    }
    if ((await chunkSignature(signing, this.previous, bytes)) !== signature) {
      this.fail(controller, new S3Error("SignatureDoesNotMatch", CHUNK_SIGNATURE_MISMATCH));
      return false;
    }
    this.previous = signature;
    if (bytes.length > 0) await this.emit(controller, bytes);
    return false;
  }

  /** An unsigned chunk, its bytes passed on as they arrive: true when it wants more bytes. */
  private async unsignedChunk(controller: Controller): Promise<boolean> {
    const current = this.chunk!;
    while (current.left > 0) {
      if (this.pending.length === 0) return true;
      const bytes = this.pending.take(Math.min(current.left, this.pending.length));
      current.left -= bytes.length;
      await this.emit(controller, bytes);
      if (this.failure) return false;
    }
    if (current.size > 0 || !this.payload.trailing) {
      if (this.pending.length < 2) return true;
      const crlf = this.pending.take(2);
      if (crlf[0] !== CRLF[0] || crlf[1] !== CRLF[1]) {
        this.fail(controller, new S3Error("InvalidRequest", CHUNKED_MALFORMED));
        return false;
      }
    }
    return false;
  }

  /** The chunks' part: true when it wants more bytes. */
  private async chunks(controller: Controller): Promise<boolean> {
    if (this.chunk === null) {
      const text = this.line(controller, MAX_HEADER_BYTES);
      if (text === null) return true;
      this.header(controller, text);
      if (this.failure) return false;
    }
    const current = this.chunk!;
    const wantsMore =
      current.signature !== null && this.signing
        ? await this.signedChunk(controller, this.signing, current.signature)
        : await this.unsignedChunk(controller);
    if (wantsMore || this.failure) return wantsMore;
    if (current.size === 0) this.state = this.payload.trailing ? "trailer" : "done";
    this.chunk = null;
    return false;
  }

  /** The trailer's lines up to the empty one that ends them (one right after the empty chunk is skipped). */
  private trailerLines(controller: Controller): boolean {
    for (;;) {
      const text = this.line(controller, MAX_TRAILER_BYTES);
      if (text === null) return !this.failure;
      if (text === "") {
        if (this.trailers.size > 0) return false;
        continue;
      }
      if (!this.addTrailer(controller, text)) return false;
    }
  }

  addTrailer(controller: Controller, text: string): boolean {
    const colon = text.indexOf(":");
    if (colon <= 0 || this.trailers.size >= 8) {
      this.fail(controller, new S3Error("MalformedTrailerError", TRAILER_MALFORMED));
      return false;
    }
    this.trailers.set(text.slice(0, colon).trim().toLowerCase(), text.slice(colon + 1).trim());
    return true;
  }

  /** The trailer checked: its signature when signed, then the checksum against the bytes that passed. */
  async checkTrailer(controller: Controller) {
    if (this.signing) {
      const sent = this.trailers.get(TRAILER_SIGNATURE);
      if (!sent || (await trailerSignature(this.signing, this.previous, this.trailers)) !== sent)
        return this.fail(controller, new S3Error("SignatureDoesNotMatch", TRAILER_SIGNATURE_MISMATCH));
    }
    const { trailer } = this.payload;
    if (!trailer || !this.sum) return;
    const name = checksumHeader(trailer);
    const sent = this.trailers.get(name);
    if (sent === undefined) return this.fail(controller, new S3Error("MalformedTrailerError", trailerMissing(name)));
    if (!checksumValueValid(trailer, sent))
      return this.fail(controller, new S3Error("InvalidRequest", checksumInvalid(name)));
    if ((await this.sum.base64()) !== sent)
      return this.fail(controller, new S3Error("BadDigest", checksumMismatch(name)));
    this.verified = { name, value: sent };
  }

  /** Everything the bytes so far allow: chunks, then the trailer, until more bytes are wanted. */
  async drain(controller: Controller) {
    while (!this.failure) {
      if (this.state === "done") {
        if (this.pending.length > 0) this.fail(controller, new S3Error("IncompleteBody", CHUNKED_MALFORMED));
        return;
      }
      if (this.state === "trailer") {
        if (this.trailerLines(controller) || this.failure) return;
        this.state = "done";
        await this.checkTrailer(controller);
        continue;
      }
      if (await this.chunks(controller)) return;
    }
  }

  /** The body's end: the last trailer line may come without its CRLF, the empty line after it not at all. */
  async end(controller: Controller) {
    if (this.failure) return;
    if (this.state === "trailer") {
      const rest = new TextDecoder().decode(this.pending.take(this.pending.length)).trim();
      if (rest !== "" && !this.addTrailer(controller, rest)) return;
      this.state = "done";
      await this.checkTrailer(controller);
      if (this.failure) return;
    }
    if (this.state !== "done" || this.decoded !== this.decodedLength)
      this.fail(controller, new S3Error("IncompleteBody", CHUNKED_LENGTH));
    this.closed = true;
    this.settle();
  }
}

/**
 * The aws-chunked body decoded to its `decodedLength` bytes: each signed chunk's signature checked
 * in turn, the trailer's signature and checksum at the end. The stream errors on the first fault
 * (a frame out of shape, a chunk too large, a wrong signature, a length other than the declared
 * one, a trailer missing or not matching), and `failure()` tells which, in S3's words;
 * `finished()` tells that the body was read to its end and checked whole.
 */
export function decodedChunks(payload: ChunkedPayload, decodedLength: number) {
  const decoder = new ChunkDecoder(payload, decodedLength);
  const stream = new TransformStream<Uint8Array, Uint8Array>({
    async transform(bytes, controller) {
      if (decoder.failure) return;
      decoder.pending.push(bytes);
      await decoder.drain(controller);
    },
    flush: (controller) => decoder.end(controller),
  });
  return {
    stream,
    failure: () => decoder.failure,
    /** Read to its end and checked whole. */
    finished: () => decoder.closed && decoder.failure === null,
    /** Resolves once the body ended or failed. */
    settled: decoder.settled,
    /** The trailer's checksum once it held. */
    checksum: () => decoder.verified,
  };
}

/** The signed payload without a trailer, as D22.8 first served it. */
export const verifiedChunks = (signing: ChunkSigning, decodedLength: number) =>
  decodedChunks({ signing, trailing: false, trailer: null }, decodedLength);
