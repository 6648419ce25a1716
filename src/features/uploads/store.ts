// Every query of the chunked upload API. A request reads the caller, the file side's state, the
// multipart settings and its session with that session's chunks in one batch (the guard's); init
// and status by path read the caller's unfinished sessions at the path instead (D12.5, D12.6).
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
  /**
   * Without an id (init, `status?path=&size=`): the caller's unfinished sessions whose path ends
   * with the request's path (the routes keep those at exactly the full path).
   */
  candidates: UploadSession[];
  /** The chunks of the named session, or of the candidates of the request's size. */
  chunks: UploadChunk[];
}

/**
 * What a request names: a session by id, or (init and `status?path=&size=`, which know no id yet)
 * the path as the client wrote it and the size. The base path is only known once the guard ran, so
 * the sessions read are those whose full path ends with the path given: a superset, one batch.
 */
export type UploadLookup = { id: string } | { pathEnd: string; size: number } | null;

/** The reads of one request: the two settings, and the sessions `lookup` names if `callerId` owns them, with chunks. */
export function uploadReads(db: Database, lookup: UploadLookup, callerId: SQL) {
  const mine = eq(uploadSessions.userId, sql`${callerId}`);
  let named: SQL | undefined = sql`0`;
  let chunked: SQL | undefined = sql`0`;
  if (lookup && "id" in lookup) {
    named = and(eq(uploadSessions.id, lookup.id), mine);
    chunked = named;
  } else if (lookup) {
    named = and(
      mine,
      ne(uploadSessions.state, "completed"),
      sql`substr(${uploadSessions.path}, -length(${lookup.pathEnd})) = ${lookup.pathEnd}`,
    );
    chunked = and(named, eq(uploadSessions.size, lookup.size));
  }
  const sessionIds = db.select({ id: uploadSessions.id }).from(uploadSessions).where(chunked);
  return {
    reads: [
      db
        .select({ key: settings.key, value: settings.value })
        .from(settings)
        .where(inArray(settings.key, ["multipart_enabled", "multipart_chunk_size"])),
      db.select().from(uploadSessions).where(named),
      db.select().from(uploadChunks).where(inArray(uploadChunks.sessionId, sessionIds)),
    ] as const,
    read([settingRows, sessions, chunks]: unknown[]): UploadReads {
      const values = new Map((settingRows as { key: string; value: string }[]).map((row) => [row.key, row.value]));
      const found = sessions as UploadSession[];
      return {
        enabled: (values.get("multipart_enabled") ?? "true") === "true",
        chunkMib: values.get("multipart_chunk_size"),
        session: lookup && "id" in lookup ? (found[0] ?? null) : null,
        candidates: lookup && "id" in lookup ? [] : found,
        chunks: chunks as UploadChunk[],
      };
    },
  };
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

/**
 * The session is done: kept a while as `completed` for status, with its chunk rows, so a chunk sent
 * again is still compared with what the file holds (docs/decisions.md D12.7).
 */
export async function markCompleted(db: Database, id: string, now: number): Promise<void> {
  await db.update(uploadSessions).set({ state: "completed", lastActive: now }).where(eq(uploadSessions.id, id));
}

/**
 * An init's writes in one batch: the sessions it superseded leave (`gone`; those whose upstream
 * upload could not be aborted stay, marked idle since the epoch, for the cron job to abort on its
 * next run), then the new session is recorded, or the resumed one takes the password and Overwrite
 * of the init that resumed it (checked just now).
 */
export async function settleInit(
  db: Database,
  superseded: { gone: string[]; lapsed: string[] },
  write: { insert: UploadSession } | { resume: string; fields: Pick<UploadSession, "password" | "overwrite"> },
  now: number,
): Promise<void> {
  await db.batch([
    db.delete(uploadChunks).where(inArray(uploadChunks.sessionId, superseded.gone)),
    db.delete(uploadSessions).where(inArray(uploadSessions.id, superseded.gone)),
    db.update(uploadSessions).set({ lastActive: 0 }).where(inArray(uploadSessions.id, superseded.lapsed)),
    "insert" in write
      ? db.insert(uploadSessions).values(write.insert)
      : db
          .update(uploadSessions)
          .set({ ...write.fields, lastActive: now })
          .where(eq(uploadSessions.id, write.resume)),
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
