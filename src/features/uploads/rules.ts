// The decisions of the chunked upload API (docs/decisions.md D12): the chunk size, when a session
// is live, which session an init resumes and which it supersedes, what a snapshot says, and the
// SHA-256 of a chunk computed as it streams through.
import type { uploadChunks, uploadSessions } from "../../db/schema.ts";
import { ApiError } from "../../http/errors.ts";
import { exactLength } from "../../lib/streams.ts";
import { hashInvalid } from "./messages.ts";

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

/**
 * An S3 multipart upload's session (docs/decisions.md D22.9) has no chunk size: its parts are of
 * any size, numbered by the client, and its size is known only at completion. The chunk API here
 * never takes one (its own sessions always have a chunk size of at least 1 MiB).
 */
export const isS3Upload = (session: Pick<UploadSession, "chunkSize">) => session.chunkSize === 0;

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

/** The whole file's hashes a client sent at init, lower-case hex; null where it sent none. */
export interface FileHashes {
  md5: string | null;
  sha1: string | null;
  sha256: string | null;
}

const HASH_HEADERS = [
  ["md5", "X-File-Md5", 32],
  ["sha1", "X-File-Sha1", 40],
  ["sha256", "X-File-Sha256", 64],
] as const;

/**
 * The X-File-* headers of an init (the UI sends all three when "Try rapid" is ticked): each is
 * absent or a hex digest of its length, anything else refused rather than silently dropped, since
 * they decide whether an earlier session is resumed (docs/decisions.md D12.5).
 */
export function fileHashesOf(header: (name: string) => string | undefined): FileHashes {
  const hashes: FileHashes = { md5: null, sha1: null, sha256: null };
  for (const [key, name, digits] of HASH_HEADERS) {
    const value = header(name);
    if (value === undefined || value === "") continue;
    if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(value)) throw new ApiError(400, hashInvalid(name, digits));
    hashes[key] = value.toLowerCase();
  }
  return hashes;
}

const hashesOf = (session: UploadSession): FileHashes => ({
  md5: session.fileMd5,
  sha1: session.fileSha1,
  sha256: session.fileSha256,
});

/**
 * The same file, as far as the hashes tell (OpenList internal/multipart/session.go:301-334): they
 * share at least one kind and agree on every kind both have. No hashes on either side: unknown,
 * so not the same (resuming another file's chunks would join two files into one).
 */
function sameFile(a: FileHashes, b: FileHashes): boolean {
  let shared = 0;
  for (const [key] of HASH_HEADERS) {
    const [x, y] = [a[key], b[key]];
    if (x === null || y === null) continue;
    if (x !== y) return false;
    shared++;
  }
  return shared > 0;
}

/**
 * What an init finds among the caller's sessions at its target (docs/decisions.md D12.5): the one
 * it resumes (receiving, still live, same size, same storage folder, same file by its hashes), and
 * the ones it supersedes (every other receiving session of the caller at that path, whatever its
 * size), whose upstream uploads are aborted so nothing stays pending. A session being completed is
 * left to finish.
 */
export function initPlan(
  sessions: UploadSession[],
  wanted: { path: string; size: number; hashes: FileHashes; storageId: number; actualDir: string },
  now: number,
): { resume: UploadSession | null; stale: UploadSession[] } {
  const mine = sessions.filter(
    (session) => session.path === wanted.path && session.state === "receiving" && !isS3Upload(session),
  );
  const resume =
    mine
      .filter(
        (session) =>
          session.size === wanted.size &&
          session.storageId === wanted.storageId &&
          session.actualDir === wanted.actualDir &&
          sessionLapse(session, now) === null &&
          sameFile(hashesOf(session), wanted.hashes),
      )
      .sort((a, b) => b.lastActive - a.lastActive)[0] ?? null;
  return { resume, stale: mine.filter((session) => session !== resume) };
}

/** The caller's live session for `path` and `size` (`status?path=&size=`): the most recent one still receiving. */
export function liveSessionAt(sessions: UploadSession[], path: string, size: number, now: number) {
  return (
    sessions
      .filter(
        (session) =>
          session.path === path &&
          session.size === size &&
          !isS3Upload(session) &&
          session.state !== "completed" &&
          sessionLapse(session, now) === null,
      )
      .sort((a, b) => b.lastActive - a.lastActive)[0] ?? null
  );
}

/** Sorted indexes as OpenList's inclusive ranges: [0,1,2,5] → [[0,2],[5,5]]. */
function ranges(indexes: number[]): [number, number][] {
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

const hex = (buffer: ArrayBuffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * A SHA-256 fed as bytes arrive: workerd's DigestStream hashes them natively as they come;
 * elsewhere (Node, the unit tests) they are kept for one digest at the end.
 */
function sha256Sink() {
  const Digest = (crypto as unknown as { DigestStream?: DigestStreamClass }).DigestStream;
  if (Digest) {
    const digest = new Digest("SHA-256");
    digest.digest.catch(() => undefined); // a stopped chunk leaves it rejected, and nobody asks
    const writer = digest.getWriter();
    return {
      write: (bytes: Uint8Array) => writer.write(bytes),
      hex: async () => {
        await writer.close();
        return hex(await digest.digest);
      },
      abort: (reason: unknown) => void writer.abort(reason).catch(() => undefined),
    };
  }
  const kept: Uint8Array[] = [];
  return {
    write: async (bytes: Uint8Array) => void kept.push(bytes.slice()),
    hex: async () => hex(await crypto.subtle.digest("SHA-256", await new Blob(kept).arrayBuffer())),
    abort: () => void kept.splice(0),
  };
}

/**
 * `body` passed through, held to exactly `size` bytes (exactLength) and hashed: it fails once it
 * runs past `size` or ends short, so the upstream never stores a wrong chunk. `done()` resolves
 * with the SHA-256 (hex) once the stream ended whole. `signal` aborts at a fault, for the request
 * that sends it upstream (docs/decisions.md D12.8), and once the body is cancelled or failed.
 */
export function hashed(body: ReadableStream<Uint8Array>, size: number, fault: { short: Error; long: Error }) {
  const sink = sha256Sink();
  const exact = exactLength(body, size, {
    short: () => fault.short,
    long: () => fault.long,
    onBytes: (chunk) => sink.write(chunk),
  });
  const hash = exact.done.then(
    () => sink.hex(),
    (error: unknown) => {
      sink.abort(error);
      throw error;
    },
  );
  hash.catch(() => undefined);
  const stopped = new AbortController();
  exact.done.catch(() => stopped.abort());
  return {
    body: exact.body,
    done: () => hash,
    fail: exact.fail,
    signal: AbortSignal.any([exact.signal, stopped.signal]),
  };
}
