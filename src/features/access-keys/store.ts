// Every query of the access key endpoints; each function is one round trip. Keys are rows of the
// app password table (docs/decisions.md D16.1).
import { and, asc, count, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { plan } from "../../db/plan.ts";
import { appPasswords, users, type AccessKeyUsage } from "../../db/schema.ts";

const listed = {
  id: appPasswords.id,
  userId: appPasswords.userId,
  name: appPasswords.name,
  path: appPasswords.path,
  permission: appPasswords.permission,
  expiresAt: appPasswords.expiresAt,
  usage: appPasswords.usage,
  accessKeyId: appPasswords.accessKeyId,
  createdAt: appPasswords.createdAt,
  lastUsedAt: appPasswords.lastUsedAt,
};

/** Keys still good: made since their user's last password change (expired ones are listed, to be revoked). */
const current = sql`${appPasswords.passwordChangedAt} = (SELECT ${users.passwordChangedAt} FROM ${users} WHERE ${users.id} = ${appPasswords.userId})`;

/** A user's keys (never their hashes or sealed secrets), oldest first; the caller's as a subquery in the guard's batch. */
export function accessKeyList(db: Database, userId: number | SQL) {
  return plan(
    [
      db
        .select(listed)
        .from(appPasswords)
        .where(and(eq(appPasswords.userId, userId), current))
        .orderBy(asc(appPasswords.id)),
    ],
    ([rows]) => rows,
  );
}

/** A page of everyone's keys, with their users' names, for the admin. */
export function accessKeyPage(db: Database, window: { limit: number; offset: number }) {
  return plan(
    [
      db
        .select({ ...listed, username: users.username })
        .from(appPasswords)
        .innerJoin(users, eq(users.id, appPasswords.userId))
        .where(current)
        .orderBy(asc(appPasswords.id))
        .limit(window.limit)
        .offset(window.offset),
      db.select({ total: count() }).from(appPasswords).where(current),
    ],
    ([content, [total]]) => ({ content, total: total?.total ?? 0 }),
  );
}

export interface KeyEntry {
  userId: number;
  name: string;
  hash: string;
  now: number;
  path: string;
  permission: number;
  expiresAt: number;
  usage: AccessKeyUsage[];
  accessKeyId: string | null;
  s3Secret: string | null;
}

/**
 * Stores a new key unless the user already has `limit` good ones, in one batch (keys a password
 * change ended go first, so they never count); null when at the limit. A name the user already
 * uses fails with the unique index on (user_id, name).
 */
export async function addAccessKey(db: Database, entry: KeyEntry, limit: number) {
  const [, inserted] = await db.batch([
    db
      .delete(appPasswords)
      .where(
        and(
          eq(appPasswords.userId, entry.userId),
          sql`${appPasswords.passwordChangedAt} <> (SELECT ${users.passwordChangedAt} FROM ${users} WHERE ${users.id} = ${entry.userId})`,
        ),
      ),
    db.all<{ id: number }>(sql`
      INSERT INTO ${appPasswords} (user_id, name, hash, created_at, pwd_ts, last_used_at, path, permission, expires_at, usage, access_key_id, s3_secret)
      SELECT ${entry.userId}, ${entry.name}, ${entry.hash}, ${entry.now}, ${users.passwordChangedAt}, 0, ${entry.path},
        ${entry.permission}, ${entry.expiresAt}, ${JSON.stringify(entry.usage)}, ${entry.accessKeyId}, ${entry.s3Secret}
      FROM ${users}
      WHERE ${users.id} = ${entry.userId} AND (SELECT count(*) FROM ${appPasswords} WHERE user_id = ${entry.userId}) < ${limit}
      RETURNING id`),
  ]);
  return inserted[0]?.id ?? null;
}

/** Deletes a key: the user's own, or anyone's when `userId` is null; false when there is none. */
export async function deleteAccessKey(db: Database, id: number, userId: number | null): Promise<boolean> {
  const deleted = await db
    .delete(appPasswords)
    .where(userId === null ? eq(appPasswords.id, id) : and(eq(appPasswords.id, id), eq(appPasswords.userId, userId)))
    .returning({ id: appPasswords.id });
  return deleted.length > 0;
}
