// Every query of the app password endpoints; each function is one round trip.
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { plan } from "../../db/plan.ts";
import { appPasswords, users } from "../../db/schema.ts";
import { addAccessKey } from "../access-keys/store.ts";

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
 * Stores a new app password unless the user already has `limit` good ones: an access key with the
 * user's whole reach, for WebDAV only (docs/decisions.md D16.1); null when at the limit. A name the
 * user already uses fails with the unique index on (user_id, name).
 */
export function addAppPassword(
  db: Database,
  entry: { userId: number; name: string; hash: string; now: number },
  limit: number,
) {
  const wholeReach = { path: "/", permission: -1, expiresAt: 0, accessKeyId: null, s3Secret: null };
  return addAccessKey(db, { ...entry, ...wholeReach, usage: ["webdav"] }, limit);
}

/** Revokes one of the user's app passwords; false when it has none with that id. */
export async function deleteAppPassword(db: Database, id: number, userId: number): Promise<boolean> {
  const deleted = await db
    .delete(appPasswords)
    .where(and(eq(appPasswords.id, id), eq(appPasswords.userId, userId)))
    .returning({ id: appPasswords.id });
  return deleted.length > 0;
}
