// The decisions of the chunked upload API (docs/decisions.md D12): the chunk size, when a session
// is live, what a snapshot says, and the SHA-256 of a chunk computed as it streams through.
import type { uploadChunks, uploadSessions } from "../../db/schema.ts";

export const MIB = 1024 * 1024;
/** Cloudflare refuses request bodies over 100 MB (95.4 MiB) on its Free and Pro plans: a chunk stays under. */
export const MAX_CHUNK_MIB = 95;
/** S3's most parts in one upload; every backend is held to it. */
export const MAX_CHUNKS = 10_000;
/** A session nobody sent anything to for this long is dropped, its parts aborted upstream (cron). */
export const IDLE_SECONDS = 24 * 3600;
/** How long a completed session still answers `status` with `completed`. */
export const COMPLETED_KEPT_SECONDS = 3600;
/** A completion that has not finished after this long is taken as dead: another request may retry it. */
export const COMPLETING_STALE_SECONDS = 15 * 60;

export type UploadSession = typeof uploadSessions.$inferSelect;
export type UploadChunk = typeof uploadChunks.$inferSelect;

/**
 * The chunk size of a new upload (OpenList server/handles/multipart.go:29-39, with a floor): the
 * client's `X-Chunk-Size` when it is below the ceiling (`multipart_chunk_size` MiB), else the
 * ceiling; at least 1 MiB, at least the storage's smallest part, and large enough for the file to
 * fit in MAX_CHUNKS chunks. Null when even the ceiling cannot hold it.
 */
export function chunkSizeFor(
  size: number,
  requested: number | null,
  settingMib: number,
  minPartBytes: number,
): number | null {
  const ceiling = Math.min(Math.max(1, settingMib), MAX_CHUNK_MIB) * MIB;
  const asked = requested !== null && requested > 0 && requested < ceiling ? requested : ceiling;
  const chunk = Math.max(asked, MIB, minPartBytes, Math.ceil(size / MAX_CHUNKS));
  return chunk > MAX_CHUNK_MIB * MIB ? null : chunk;
}

/** `multipart_chunk_size` as stored; the default when it is not a number. */
export const settingMib = (raw: string | undefined) => {
  const mib = Number(raw);
  return Number.isInteger(mib) && mib >= 1 ? mib : 16;
};

export const totalChunks = (session: Pick<UploadSession, "size" | "chunkSize">) =>
  Math.ceil(session.size / session.chunkSize);

/** The length of chunk `index`: the chunk size, the last one what is left. */
export const chunkLength = (session: Pick<UploadSession, "size" | "chunkSize">, index: number) =>
  Math.min(session.chunkSize, session.size - index * session.chunkSize);

/** Why the session can take no request: expired (receiving, idle too long), gone (completed long ago), or null. */
export function sessionLapse(session: UploadSession, now: number): "expired" | "gone" | null {
  if (session.state === "completed") return session.lastActive < now - COMPLETED_KEPT_SECONDS ? "gone" : null;
  return session.lastActive < now - IDLE_SECONDS ? "expired" : null;
}

/** Sorted indexes as OpenList's inclusive ranges: [0,1,2,5] → [[0,2],[5,5]]. */
export function ranges(indexes: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const index of [...indexes].sort((a, b) => a - b)) {
    const last = out.at(-1);
    if (last && last[1] + 1 === index) last[1] = index;
    else out.push([index, index]);
  }
  return out;
}

/**
 * What OpenList's clients read of a session (OpenList internal/multipart/session.go:103-146):
 * `received` is exactly the chunks stored whole upstream; `frontier` the first one missing.
 */
export function snapshot(session: UploadSession, chunks: Pick<UploadChunk, "index" | "size">[]) {
  const total = totalChunks(session);
  const completed = session.state === "completed";
  const stored = new Set(chunks.map((chunk) => chunk.index));
  let frontier = 0;
  while (stored.has(frontier)) frontier++;
  return {
    upload_id: session.id,
    // Completing reads as receiving: the UI keeps polling while the join runs.
    state: completed ? "completed" : "receiving",
    attempt: 0,
    path: session.path,
    size: session.size,
    chunk_size: session.chunkSize,
    total_chunks: total,
    received: completed ? [[0, total - 1]] : ranges([...stored]),
    received_bytes: completed ? session.size : chunks.reduce((sum, chunk) => sum + chunk.size, 0),
    frontier: completed ? total : frontier,
    storage_progress: completed ? 100 : 0,
  };
}

type DigestStreamClass = new (algorithm: string) => WritableStream<Uint8Array> & { digest: Promise<ArrayBuffer> };
type LargeReader = ReadableStreamBYOBReader & {
  readAtLeast<T extends ArrayBufferView>(min: number, view: T): Promise<ReadableStreamReadResult<T>>;
};

/** How much one step of a chunk reads: few, large steps keep JavaScript out of the byte path. */
const READ_BYTES = 1024 * 1024;

const hex = (buffer: ArrayBuffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * `body` passed through, held to exactly `size` bytes and hashed: it fails once it runs past `size`
 * or ends short, so the upstream never stores a wrong chunk. `done()` resolves with the SHA-256
 * (hex) once the stream ended whole.
 *
 * In workerd the body is read in steps of 1 MiB (`readAtLeast`) and each step is fed to a native
 * DigestStream: a TransformStream there handles every few kilobytes the socket delivers in
 * JavaScript, and halved a chunk's throughput, as did `tee()` (docs/performance.md). Elsewhere
 * (Node, the unit tests) the bytes are counted in a TransformStream and kept for one digest.
 */
export function hashed(body: ReadableStream<Uint8Array>, size: number, fault: { short: Error; long: Error }) {
  const Digest = (crypto as unknown as { DigestStream?: DigestStreamClass }).DigestStream;
  return Digest ? hashedInLargeReads(body, size, fault, Digest) : hashedInScript(body, size, fault);
}

function hashedInLargeReads(
  body: ReadableStream<Uint8Array>,
  size: number,
  fault: { short: Error; long: Error },
  Digest: DigestStreamClass,
) {
  const reader = body.getReader({ mode: "byob" }) as LargeReader;
  const digest = new Digest("SHA-256");
  const writer = digest.getWriter();
  digest.digest.catch(() => undefined); // a stopped chunk leaves it rejected, and nobody asks
  let seen = 0;
  let settle!: { resolve: (hex: string) => void; reject: (error: unknown) => void };
  const hash = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  hash.catch(() => undefined);
  const stop = (error: unknown) => {
    settle.reject(error);
    void reader.cancel(error).catch(() => undefined);
    void writer.abort(error).catch(() => undefined);
  };
  const out = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          // One byte past the end proves the body ends there.
          const want = Math.min(size - seen, READ_BYTES) || 1;
          const { done, value } = await reader.readAtLeast(want, new Uint8Array(want));
          const bytes = value?.byteLength ?? 0;
          if (seen === size) {
            if (bytes > 0) throw fault.long;
            await writer.close();
            settle.resolve(hex(await digest.digest));
            return controller.close();
          }
          if (done || bytes === 0) throw fault.short;
          seen += bytes;
          await writer.write(value);
          controller.enqueue(value);
        } catch (error) {
          stop(error);
          controller.error(error);
        }
      },
      cancel: stop,
    },
    { highWaterMark: 0 },
  );
  return { body: out, done: () => hash, fail: stop };
}

function hashedInScript(body: ReadableStream<Uint8Array>, size: number, fault: { short: Error; long: Error }) {
  const kept: Uint8Array[] = [];
  let seen = 0;
  let resolveHash!: (hex: string) => void;
  let rejectHash!: (error: unknown) => void;
  const hash = new Promise<string>((resolve, reject) => {
    resolveHash = resolve;
    rejectHash = reject;
  });
  hash.catch(() => undefined);
  const through = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > size) {
        rejectHash(fault.long);
        throw fault.long;
      }
      kept.push(chunk.slice());
      controller.enqueue(chunk);
    },
    async flush() {
      if (seen < size) {
        rejectHash(fault.short);
        throw fault.short;
      }
      const all = new Uint8Array(seen);
      let at = 0;
      for (const part of kept) {
        all.set(part, at);
        at += part.byteLength;
      }
      resolveHash(hex(await crypto.subtle.digest("SHA-256", all)));
    },
  });
  return {
    body: body.pipeThrough(through),
    done: () => hash,
    fail: (error: unknown) => rejectHash(error),
  };
}
