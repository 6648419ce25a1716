// Every query of the chunked upload API. A request reads the caller, the file side's state, the
// multipart settings and its session with that session's chunks in one batch (the guard's).
import { and, eq, inArray, lt, ne, or, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { settings, storages, uploadChunks, uploadSessions } from "../../db/schema.ts";
import {
  COMPLETED_KEPT_SECONDS,
  COMPLETING_STALE_SECONDS,
  IDLE_SECONDS,
  type UploadChunk,
  type UploadSession,
} from "./rules.ts";

export interface UploadReads {
  enabled: boolean;
  chunkMib: string | undefined;
  /** The caller's session named by the request, or null (none, or another user's). */
  session: UploadSession | null;
  chunks: UploadChunk[];
}

/** The reads of one request: the two settings, and the session `id` if `callerId` owns it, with its chunks. */
export function uploadReads(db: Database, id: string, callerId: SQL) {
  const owned = and(eq(uploadSessions.id, id), eq(uploadSessions.userId, sql`${callerId}`));
  return {
    reads: [
      db
        .select({ key: settings.key, value: settings.value })
        .from(settings)
        .where(inArray(settings.key, ["multipart_enabled", "multipart_chunk_size"])),
      db.select().from(uploadSessions).where(owned),
      db
        .select()
        .from(uploadChunks)
        .where(and(eq(uploadChunks.sessionId, id), sql`exists (select 1 from ${uploadSessions} where ${owned})`)),
    ] as const,
    read([settingRows, sessions, chunks]: unknown[]): UploadReads {
      const values = new Map((settingRows as { key: string; value: string }[]).map((row) => [row.key, row.value]));
      return {
        enabled: (values.get("multipart_enabled") ?? "true") === "true",
        chunkMib: values.get("multipart_chunk_size"),
        session: (sessions as UploadSession[])[0] ?? null,
        chunks: chunks as UploadChunk[],
      };
    },
  };
}

export async function insertSession(db: Database, session: UploadSession): Promise<void> {
  await db.insert(uploadSessions).values(session);
}

/**
 * Records a chunk stored upstream, unless one of that index was recorded meanwhile; refreshes the
 * session's activity. Answers the chunk recorded for that index (this one, or the earlier).
 */
export async function recordChunk(db: Database, chunk: UploadChunk, now: number): Promise<UploadChunk> {
  const [, , [recorded]] = await db.batch([
    db.insert(uploadChunks).values(chunk).onConflictDoNothing(),
    db.update(uploadSessions).set({ lastActive: now }).where(eq(uploadSessions.id, chunk.sessionId)),
    db
      .select()
      .from(uploadChunks)
      .where(and(eq(uploadChunks.sessionId, chunk.sessionId), eq(uploadChunks.index, chunk.index))),
  ]);
  return recorded ?? chunk;
}

export async function touchSession(db: Database, id: string, now: number): Promise<void> {
  await db.update(uploadSessions).set({ lastActive: now }).where(eq(uploadSessions.id, id));
}

/** Takes the completion of a session for this request: false when another request holds it. */
export async function claimCompletion(db: Database, id: string, now: number): Promise<boolean> {
  const claimed = await db
    .update(uploadSessions)
    .set({ state: "completing", lastActive: now })
    .where(
      and(
        eq(uploadSessions.id, id),
        or(
          eq(uploadSessions.state, "receiving"),
          and(eq(uploadSessions.state, "completing"), lt(uploadSessions.lastActive, now - COMPLETING_STALE_SECONDS)),
        ),
      ),
    )
    .returning({ id: uploadSessions.id });
  return claimed.length > 0;
}

export async function releaseCompletion(db: Database, id: string): Promise<void> {
  await db.update(uploadSessions).set({ state: "receiving" }).where(eq(uploadSessions.id, id));
}

/** The session is done: kept a while as `completed` for status, its chunk rows gone. */
export async function markCompleted(db: Database, id: string, now: number): Promise<void> {
  await db.batch([
    db.delete(uploadChunks).where(eq(uploadChunks.sessionId, id)),
    db.update(uploadSessions).set({ state: "completed", lastActive: now }).where(eq(uploadSessions.id, id)),
  ]);
}

export async function deleteSession(db: Database, id: string): Promise<void> {
  await db.batch([
    db.delete(uploadChunks).where(eq(uploadChunks.sessionId, id)),
    db.delete(uploadSessions).where(eq(uploadSessions.id, id)),
  ]);
}

/** Sessions the cron job drops, oldest first, with their storage row (null when it was deleted). */
export async function lapsedSessions(db: Database, now: number, limit: number) {
  return db
    .select({ session: uploadSessions, storage: storages })
    .from(uploadSessions)
    .leftJoin(storages, eq(storages.id, uploadSessions.storageId))
    .where(
      or(
        and(ne(uploadSessions.state, "completed"), lt(uploadSessions.lastActive, now - IDLE_SECONDS)),
        and(eq(uploadSessions.state, "completed"), lt(uploadSessions.lastActive, now - COMPLETED_KEPT_SECONDS)),
      ),
    )
    .orderBy(uploadSessions.lastActive)
    .limit(limit);
}
