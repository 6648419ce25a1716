// Every query of the SSH key endpoints; each function is one round trip.
import { and, asc, count, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { plan } from "../../db/plan.ts";
import { sshPublicKeys, users } from "../../db/schema.ts";

const listed = {
  id: sshPublicKeys.id,
  title: sshPublicKeys.title,
  fingerprint: sshPublicKeys.fingerprint,
  addedAt: sshPublicKeys.addedAt,
  lastUsedAt: sshPublicKeys.lastUsedAt,
};

/** One page of a user's keys (never the key text), and how many there are. */
/** One page of a user's keys (an id, or the caller's as a subquery) and their count; `user` is undefined when there is no such user. */
export function keyPage(db: Database, userId: number | SQL, window: { limit: number; offset: number }) {
  return plan(
    [
      db.select({ id: users.id }).from(users).where(eq(users.id, userId)),
      db
        .select(listed)
        .from(sshPublicKeys)
        .where(eq(sshPublicKeys.userId, userId))
        .orderBy(asc(sshPublicKeys.id))
        .limit(window.limit)
        .offset(window.offset),
      db.select({ total: count() }).from(sshPublicKeys).where(eq(sshPublicKeys.userId, userId)),
    ],
    ([[user], content, [total]]) => ({ user, content, total: total?.total ?? 0 }),
  );
}

/**
 * Adds a key unless the user already has `limit` keys, in one statement; false when at the limit.
 * A duplicate title fails with the unique index on (user_id, title).
 */
export async function addKey(
  db: Database,
  key: { userId: number; title: string; fingerprint: string; keyText: string; now: number },
  limit: number,
) {
  const result = await db.run(sql`
    INSERT INTO ${sshPublicKeys} (user_id, title, fingerprint, key_str, added_time, last_used_time)
    SELECT ${key.userId}, ${key.title}, ${key.fingerprint}, ${key.keyText}, ${key.now}, ${key.now}
    WHERE (SELECT count(*) FROM ${sshPublicKeys} WHERE user_id = ${key.userId}) < ${limit}`);
  return result.rowsAffected > 0;
}

/** Deletes a key if it belongs to `userId` (any owner when null); false when there was none to delete. */
export async function deleteKey(db: Database, keyId: number, userId: number | null): Promise<boolean> {
  const deleted = await db
    .delete(sshPublicKeys)
    .where(
      userId === null
        ? eq(sshPublicKeys.id, keyId)
        : and(eq(sshPublicKeys.id, keyId), eq(sshPublicKeys.userId, userId)),
    )
    .returning({ id: sshPublicKeys.id });
  return deleted.length > 0;
}
