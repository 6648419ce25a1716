// Every query of the device-session endpoints; each function is one round trip.
import { and, desc, eq, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { plan } from "../../db/plan.ts";
import { deviceSessions, DeviceSessionStatus } from "../../db/schema.ts";

const listed = {
  sessionId: deviceSessions.deviceKey,
  userId: deviceSessions.userId,
  lastActive: deviceSessions.lastActive,
  status: deviceSessions.status,
  userAgent: deviceSessions.userAgent,
  ip: deviceSessions.ip,
};

/** One page of active sessions, most recently used first: one user's, or everyone's when `userId` is null. */
/** Active sessions, most recent first: one user's (an id, or the caller's as a subquery), or everyone's with null. */
export function activeSessions(db: Database, userId: number | SQL | null, window: { limit: number; offset: number }) {
  const active = eq(deviceSessions.status, DeviceSessionStatus.ACTIVE);
  return plan(
    [
      db
        .select(listed)
        .from(deviceSessions)
        .where(userId === null ? active : and(active, eq(deviceSessions.userId, userId)))
        .orderBy(desc(deviceSessions.lastActive), deviceSessions.deviceKey)
        .limit(window.limit)
        .offset(window.offset),
    ],
    ([rows]) => rows,
  );
}

/**
 * Marks a session inactive, so its token is refused from the next request on. Limited to one
 * user's sessions unless `userId` is null. False when no such session exists.
 */
export async function evictSession(db: Database, sessionId: string, userId: number | null): Promise<boolean> {
  const evicted = await db
    .update(deviceSessions)
    .set({ status: DeviceSessionStatus.INACTIVE })
    .where(
      userId === null
        ? eq(deviceSessions.deviceKey, sessionId)
        : and(eq(deviceSessions.deviceKey, sessionId), eq(deviceSessions.userId, userId)),
    )
    .returning({ sessionId: deviceSessions.deviceKey });
  return evicted.length > 0;
}
