import { and, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { deviceSessions, DeviceSessionStatus, users } from "../../db/schema.ts";
import { newPasswordColumns } from "../users/store.ts";

export interface ProfileChange {
  username: string;
  ssoId: string;
  /** The new stored password hash and the time of the change, when the password changes. */
  password?: { hash: string; now: number };
}

/**
 * One batch. A new name first ends the user's sessions (compared with the old name, before the
 * update): renaming back must not revive the tokens the rename ended.
 */
export async function updateProfile(db: Database, userId: number, change: ProfileChange) {
  const renamed = db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.id, userId), sql`${users.username} <> ${change.username}`));
  await db.batch([
    db
      .update(deviceSessions)
      .set({ status: DeviceSessionStatus.INACTIVE })
      .where(inArray(deviceSessions.userId, renamed)),
    db
      .update(users)
      .set({
        username: change.username,
        ssoId: change.ssoId,
        ...(change.password && newPasswordColumns(change.password)),
      })
      .where(eq(users.id, userId)),
  ]);
}
