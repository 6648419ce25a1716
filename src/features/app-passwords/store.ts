// Every query of the app password endpoints; each function is one round trip.
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { plan } from "../../db/plan.ts";
import { appPasswords, users } from "../../db/schema.ts";

/** The passwords still good: made since the user's last password change. */
const current = (userId: number | SQL) =>
  and(
    eq(appPasswords.userId, userId),
    eq(
      appPasswords.passwordChangedAt,
      sql`(SELECT ${users.passwordChangedAt} FROM ${users} WHERE ${users.id} = ${userId})`,
    ),
  );

/** A user's app passwords (never their hashes), oldest first; the caller's as a subquery in the guard's batch. */
export function appPasswordList(db: Database, userId: number | SQL) {
  return plan(
    [
      db
        .select({
          id: appPasswords.id,
          name: appPasswords.name,
          createdAt: appPasswords.createdAt,
          lastUsedAt: appPasswords.lastUsedAt,
        })
        .from(appPasswords)
        .where(current(userId))
        .orderBy(asc(appPasswords.id)),
    ],
    ([rows]) => rows,
  );
}

/**
 * Stores a new app password unless the user already has `limit` good ones, in one statement
 * (passwords a password change ended go first, so they never count); null when at the limit.
 * A name the user already uses fails with the unique index on (user_id, name).
 */
export async function addAppPassword(
  db: Database,
  entry: { userId: number; name: string; hash: string; now: number },
  limit: number,
) {
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
      INSERT INTO ${appPasswords} (user_id, name, hash, created_at, pwd_ts, last_used_at)
      SELECT ${entry.userId}, ${entry.name}, ${entry.hash}, ${entry.now}, ${users.passwordChangedAt}, 0 FROM ${users}
      WHERE ${users.id} = ${entry.userId} AND (SELECT count(*) FROM ${appPasswords} WHERE user_id = ${entry.userId}) < ${limit}
      RETURNING id`),
  ]);
  return inserted[0]?.id ?? null;
}

/** Revokes one of the user's app passwords; false when it has none with that id. */
export async function deleteAppPassword(db: Database, id: number, userId: number): Promise<boolean> {
  const deleted = await db
    .delete(appPasswords)
    .where(and(eq(appPasswords.id, id), eq(appPasswords.userId, userId)))
    .returning({ id: appPasswords.id });
  return deleted.length > 0;
}
