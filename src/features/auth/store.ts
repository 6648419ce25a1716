// Every query of the sign-in flow: one batch to read, one to write.
import { and, asc, eq, gt, inArray, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { FAILURE_WINDOW_SECONDS, type FailureCounts } from "../../auth/lockout.ts";
import type { Database } from "../../db/client.ts";
import { deviceSessions, DeviceSessionStatus, loginFailures, pendingOtpEnrolments, settings, users } from "../../db/schema.ts";

/** Cap on the active sessions read per sign-in; only the device limit needs them. */
const ACTIVE_SESSIONS_READ = 1000;

export async function readSignInState(db: Database, attempt: { username: string; ip: string; now: number }) {
  const [failures, [user], deviceSettings, activeSessions] = await db.batch([
    db
      .select({ scope: loginFailures.scope, count: loginFailures.count })
      .from(loginFailures)
      .where(
        and(
          or(
            and(eq(loginFailures.scope, "ip"), eq(loginFailures.subject, attempt.ip)),
            and(eq(loginFailures.scope, "user"), eq(loginFailures.subject, attempt.username)),
          ),
          gt(loginFailures.expiresAt, attempt.now),
        ),
      ),
    db.select().from(users).where(eq(users.username, attempt.username)),
    db.select({ key: settings.key, value: settings.value }).from(settings).where(inArray(settings.key, ["max_devices", "device_evict_policy"])),
    db
      .select({ deviceKey: deviceSessions.deviceKey, lastActive: deviceSessions.lastActive })
      .from(deviceSessions)
      .where(
        and(
          eq(deviceSessions.userId, sql`(SELECT ${users.id} FROM ${users} WHERE ${users.username} = ${attempt.username})`),
          eq(deviceSessions.status, DeviceSessionStatus.ACTIVE),
        ),
      )
      .orderBy(asc(deviceSessions.lastActive))
      .limit(ACTIVE_SESSIONS_READ),
  ]);
  const counts: FailureCounts = { ip: 0, user: 0 };
  for (const failure of failures) counts[failure.scope] = failure.count;
  const setting = new Map(deviceSettings.map((s) => [s.key, s.value]));
  return {
    failures: counts,
    user,
    maxDevices: Number.parseInt(setting.get("max_devices") ?? "0", 10) || 0,
    evictPolicy: setting.get("device_evict_policy") === "evict_oldest" ? ("evict_oldest" as const) : ("deny" as const),
    activeSessions,
  };
}

/** Counts one failure against the address and the username, opening a fresh window if the old one ended. */
export async function recordFailure(db: Database, attempt: { username: string; ip: string; now: number }) {
  const expiresAt = attempt.now + FAILURE_WINDOW_SECONDS;
  const bump = (scope: "ip" | "user", subject: string) =>
    db
      .insert(loginFailures)
      .values({ scope, subject, count: 1, expiresAt })
      .onConflictDoUpdate({
        target: [loginFailures.scope, loginFailures.subject],
        set: { count: sql`CASE WHEN ${loginFailures.expiresAt} > ${attempt.now} THEN ${loginFailures.count} + 1 ELSE 1 END`, expiresAt },
      });
  await db.batch([bump("ip", attempt.ip), bump("user", attempt.username)]);
}

export interface SessionGrant {
  userId: number;
  deviceKey: string;
  tokenId: string;
  userAgent: string;
  /** Stored on the session, masked. */
  maskedIp: string;
  /** Whose failure counter this success clears. */
  clientIp: string;
  now: number;
  username: string;
  /** TOTP step to consume; the session is written only if this step was not used before. */
  otpStep: number | null;
  /** Replaces an imported AList password hash, if it is still the stored one. */
  passwordUpgrade?: { from: string; to: string } | null;
  /** Deny policy: write the session only while the user has fewer other active sessions. */
  maxOtherActive: number | null;
  /** evict_oldest policy: the sessions to mark inactive once this one is written. */
  evict: string[];
}

export type GrantOutcome = "granted" | "otp_replayed" | "too_many_devices";

/**
 * Consumes the TOTP step, opens or reactivates the device session with a new token id, applies
 * the device limit and clears the failure counters, all in one batch. Each step after the first
 * is conditioned on `changes()`, so a replayed code or a full device list writes no session.
 */
export async function grantSession(db: Database, grant: SessionGrant): Promise<GrantOutcome> {
  const statements: BatchItem<"sqlite">[] = [];
  const conditions = [sql`1`];
  if (grant.otpStep !== null) {
    statements.push(
      db.run(sql`UPDATE ${users} SET otp_last_step = ${grant.otpStep} WHERE id = ${grant.userId} AND otp_last_step < ${grant.otpStep}`),
    );
    conditions.push(sql`changes() = 1`);
  }
  if (grant.maxOtherActive !== null) {
    conditions.push(
      sql`(SELECT count(*) FROM ${deviceSessions} WHERE user_id = ${grant.userId} AND status = ${DeviceSessionStatus.ACTIVE} AND device_key <> ${grant.deviceKey}) < ${grant.maxOtherActive}`,
    );
  }
  statements.push(
    db.run(sql`
      INSERT INTO ${deviceSessions} (device_key, user_id, token_id, user_agent, ip, last_active, status)
      SELECT ${grant.deviceKey}, ${grant.userId}, ${grant.tokenId}, ${grant.userAgent}, ${grant.maskedIp}, ${grant.now}, ${DeviceSessionStatus.ACTIVE}
      WHERE ${sql.join(conditions, sql` AND `)}
      ON CONFLICT (device_key) DO UPDATE SET token_id = excluded.token_id, user_agent = excluded.user_agent,
        ip = excluded.ip, last_active = excluded.last_active, status = excluded.status`),
  );
  const sessionStatement = statements.length - 1;
  if (grant.evict.length > 0) {
    statements.push(
      db.run(
        sql`UPDATE ${deviceSessions} SET status = ${DeviceSessionStatus.INACTIVE} WHERE device_key IN (${sql.join(grant.evict.map((k) => sql`${k}`), sql`, `)}) AND changes() = 1`,
      ),
    );
  }
  statements.push(
    db.delete(loginFailures).where(
      or(
        and(eq(loginFailures.scope, "ip"), eq(loginFailures.subject, grant.clientIp)),
        and(eq(loginFailures.scope, "user"), eq(loginFailures.subject, grant.username)),
      ),
    ),
  );
  if (grant.passwordUpgrade) {
    const { from, to } = grant.passwordUpgrade;
    statements.push(db.update(users).set({ passwordHash: to }).where(and(eq(users.id, grant.userId), eq(users.passwordHash, from))));
  }
  const results = (await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])) as { rowsAffected: number }[];
  if (results[sessionStatement]!.rowsAffected > 0) return "granted";
  return grant.otpStep !== null && results[0]!.rowsAffected === 0 ? "otp_replayed" : "too_many_devices";
}

/** Marks a device session inactive: its token is refused from the next request on. */
export async function deactivateSession(db: Database, sessionKey: string) {
  await db.update(deviceSessions).set({ status: DeviceSessionStatus.INACTIVE }).where(eq(deviceSessions.deviceKey, sessionKey));
}

/** Remembers the (sealed) secret handed out by 2fa/generate, replacing any earlier one. */
export async function savePendingEnrolment(db: Database, userId: number, sealedSecret: string, now: number) {
  await db
    .insert(pendingOtpEnrolments)
    .values({ userId, secret: sealedSecret, createdAt: now })
    .onConflictDoUpdate({ target: pendingOtpEnrolments.userId, set: { secret: sealedSecret, createdAt: now } });
}

export async function readPendingEnrolment(db: Database, userId: number) {
  const [pending] = await db.select().from(pendingOtpEnrolments).where(eq(pendingOtpEnrolments.userId, userId));
  return pending;
}

/** Turns two-factor on with the verified secret; the verifying code's step counts as used. */
export async function enableTwoFactor(db: Database, userId: number, sealedSecret: string, step: number) {
  await db.batch([
    db.update(users).set({ otpSecret: sealedSecret, otpLastStep: step }).where(eq(users.id, userId)),
    db.delete(pendingOtpEnrolments).where(eq(pendingOtpEnrolments.userId, userId)),
  ]);
}
