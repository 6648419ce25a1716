import { eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { users } from "../../db/schema.ts";

export interface ProfileChange {
  username: string;
  ssoId: string;
  /** New stored password hash and timestamp, when the password changes. */
  password?: { hash: string; changedAt: number };
}

export async function updateProfile(db: Database, userId: number, change: ProfileChange) {
  await db
    .update(users)
    .set({
      username: change.username,
      ssoId: change.ssoId,
      ...(change.password ? { passwordHash: change.password.hash, passwordChangedAt: change.password.changedAt } : {}),
    })
    .where(eq(users.id, userId));
}
