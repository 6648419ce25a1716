// The queries of S3's multipart uploads (multipart.ts) that the chunked upload API's store has no
// use for: a part stored again replaces the one before (S3's rule, where the chunk API keeps the
// first, docs/decisions.md D12.7), and the key's user's uploads below a bucket. Everything else
// (reading a session with its parts, recording a new one, claiming and ending it) is
// features/uploads/store.ts's, on the same tables.
import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { uploadChunks, uploadSessions } from "../../db/schema.ts";
import type { UploadChunk, UploadSession } from "../uploads/rules.ts";

/** Records part `chunk.index` (replacing one stored before under that number) and refreshes the session. */
export async function storePart(db: Database, chunk: UploadChunk, now: number): Promise<void> {
  await db.batch([
    db
      .insert(uploadChunks)
      .values(chunk)
      .onConflictDoUpdate({
        target: [uploadChunks.sessionId, uploadChunks.index],
        set: { size: chunk.size, sha256: chunk.sha256, tag: chunk.tag },
      }),
    db.update(uploadSessions).set({ lastActive: now }).where(eq(uploadSessions.id, chunk.sessionId)),
  ]);
}

/** Forgets part `index`: its bytes upstream are no longer the ones recorded (a body that failed its hash). */
export async function forgetPart(db: Database, sessionId: string, index: number): Promise<void> {
  await db.delete(uploadChunks).where(and(eq(uploadChunks.sessionId, sessionId), eq(uploadChunks.index, index)));
}

/** The user's S3 uploads in progress whose path is below `folder` (a bucket's full path), by path. */
export async function uploadsBelow(db: Database, userId: number, folder: string): Promise<UploadSession[]> {
  const prefix = `${folder}/`;
  return db
    .select()
    .from(uploadSessions)
    .where(
      and(
        eq(uploadSessions.userId, userId),
        eq(uploadSessions.chunkSize, 0),
        ne(uploadSessions.state, "completed"),
        sql`substr(${uploadSessions.path}, 1, length(${prefix})) = ${prefix}`,
      ),
    )
    .orderBy(asc(uploadSessions.path), asc(uploadSessions.id));
}
