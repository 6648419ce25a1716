// Every query of the sign-in flow: one batch to reserve the attempt and read, one to write.
import { and, eq, inArray, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { FailureCounts } from "../../auth/lockout.ts";
import { reserveAttempt } from "../../auth/store.ts";
import type { Database } from "../../db/client.ts";
import { keptQuery } from "../../db/kept.ts";
import { deviceSessions, DeviceSessionStatus, loginFailures, settings, users } from "../../db/schema.ts";
import { consumeStep, stepUnused } from "../two-factor/store.ts";

/** Cap on the active sessions read per sign-in; only the device limit needs them. */
const ACTIVE_SESSIONS_READ = 1000;

/**
 * Device sessions kept per user. Sign-ins without a Client-Id open a session each; past this many,
 * the oldest inactive ones go first, then the oldest active ones (their tokens stop working).
 */
export const MAX_SESSIONS_PER_USER = 100;

// The lockout's counter lives with the guard's queries (auth/store.ts), which counts wrong access keys too.
export { reserveAttempt };

type Attempt = { username: string; ip: string; now: number };

const userByName = keptQuery(["username"], (db, v) => db.select().from(users).where(eq(users.username, v.username)));
const deviceSettings = keptQuery([], (db) =>
  db
    .select({ key: settings.key, value: settings.value })
    .from(settings)
    .where(inArray(settings.key, ["max_devices", "device_evict_policy"])),
);
/** The keys of the user's active sessions, as one space-separated text: a user may have a hundred. */
const activeSessionKeys = keptQuery(["username"], (db, v) => {
  const active = db
    .select({ deviceKey: deviceSessions.deviceKey })
    .from(deviceSessions)
    .where(
      and(
        eq(deviceSessions.userId, sql`(SELECT ${users.id} FROM ${users} WHERE ${users.username} = ${v.username})`),
        eq(deviceSessions.status, DeviceSessionStatus.ACTIVE),
      ),
    )
    .limit(ACTIVE_SESSIONS_READ)
    .as("active");
  return db.select({ keys: sql<string | null>`group_concat(${active.deviceKey}, ' ')` }).from(active);
});

/**
 * Reserves the attempt (see reserveAttempt) and reads what the sign-in needs, in one batch.
 * `failures` are the attempts before this one that have not succeeded: failed or still running.
 */
export async function readSignInState(db: Database, attempt: Attempt) {
  const [[ipCount], [userCount], [user], devices, [active]] = await db.batch([
    reserveAttempt(db, "ip", attempt.ip, attempt.now),
    reserveAttempt(db, "user", attempt.username, attempt.now),
    userByName(db, { username: attempt.username }),
    deviceSettings(db, {}),
    activeSessionKeys(db, { username: attempt.username }),
  ]);
  const counts: FailureCounts = { ip: (ipCount?.count ?? 1) - 1, user: (userCount?.count ?? 1) - 1 };
  const setting = new Map(devices.map((s) => [s.key, s.value]));
  return {
    failures: counts,
    user,
    maxDevices: Number.parseInt(setting.get("max_devices") ?? "0", 10) || 0,
    evictPolicy: setting.get("device_evict_policy") === "evict_oldest" ? ("evict_oldest" as const) : ("deny" as const),
    /** Device keys are hex: a space cannot be in one. */
    activeSessionKeys: new Set(active?.keys ? active.keys.split(" ") : []),
  };
}

/** What readSignInState read: the failures before this attempt, the account, the device limits. */
export type SignInState = Awaited<ReturnType<typeof readSignInState>>;

/** Gives back a reserved attempt that was no failure (the right password of a disabled account). */
export async function releaseAttempt(db: Database, attempt: Attempt) {
  const giveBack = (scope: "ip" | "user", subject: string) =>
    db
      .update(loginFailures)
      .set({ count: sql`max(${loginFailures.count} - 1, 0)` })
      .where(
        and(
          eq(loginFailures.scope, scope),
          eq(loginFailures.subject, subject),
          sql`${loginFailures.expiresAt} > ${attempt.now}`,
        ),
      );
  await db.batch([giveBack("ip", attempt.ip), giveBack("user", attempt.username)]);
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
  /** evict_oldest policy: once this session is written, the oldest others go until this many are active. */
  maxActive: number | null;
}

export type GrantOutcome = "granted" | "otp_replayed" | "too_many_devices" | "user_gone";

/**
 * Clears the failure counters, consumes the TOTP step, opens or reactivates the device session
 * with a new token id, and applies the device limit and the cap on sessions per user, all in one
 * batch (one transaction: parallel sign-ins of one user take turns, and each sees the sessions
 * the others wrote). The session is conditioned on the step's consumption (`changes()`), so a
 * replayed code, a full device list or a user deleted meanwhile writes no session.
 */
export async function grantSession(db: Database, grant: SessionGrant): Promise<GrantOutcome> {
  const statements: BatchItem<"sqlite">[] = [];
  const conditions = [sql`EXISTS (SELECT 1 FROM ${users} WHERE id = ${grant.userId})`];
  const otpStepUnused = stepUnused(grant.otpStep);
  // A sign-in with a used step is a failure: its attempt stays counted and an imported hash stays
  // as it is. These run before the step is consumed, so they see the same row the UPDATE sees.
  statements.push(
    db
      .delete(loginFailures)
      .where(
        and(
          or(
            and(eq(loginFailures.scope, "ip"), eq(loginFailures.subject, grant.clientIp)),
            and(eq(loginFailures.scope, "user"), eq(loginFailures.subject, grant.username)),
          ),
          sql`EXISTS (SELECT 1 FROM ${users} WHERE id = ${grant.userId} AND ${otpStepUnused})`,
        ),
      ),
  );
  if (grant.passwordUpgrade) {
    const { from, to } = grant.passwordUpgrade;
    statements.push(
      db
        .update(users)
        .set({ passwordHash: to })
        .where(and(eq(users.id, grant.userId), eq(users.passwordHash, from), otpStepUnused)),
    );
  }
  if (grant.otpStep !== null) {
    statements.push(consumeStep(db, grant.userId, grant.otpStep));
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
  if (grant.maxActive !== null) {
    // Counted here, not from what the sign-in read earlier: sign-ins racing each other would all
    // evict the same few sessions and leave themselves active.
    const others = sql`FROM ${deviceSessions} WHERE user_id = ${grant.userId} AND status = ${DeviceSessionStatus.ACTIVE} AND device_key <> ${grant.deviceKey}`;
    statements.push(
      db.run(sql`UPDATE ${deviceSessions} SET status = ${DeviceSessionStatus.INACTIVE} WHERE device_key IN (
        SELECT device_key ${others} ORDER BY last_active, device_key
        LIMIT max(0, (SELECT count(*) ${others}) - ${grant.maxActive - 1})) AND changes() = 1`),
    );
  }
  // The cap: this session first, then active before inactive, newest first; the rest go.
  statements.push(
    db.run(sql`DELETE FROM ${deviceSessions} WHERE device_key IN (
      SELECT device_key FROM ${deviceSessions} WHERE user_id = ${grant.userId}
      ORDER BY device_key = ${grant.deviceKey} DESC, status = ${DeviceSessionStatus.ACTIVE} DESC, last_active DESC, device_key
      LIMIT -1 OFFSET ${MAX_SESSIONS_PER_USER})`),
  );
  statements.push(db.select({ id: users.id }).from(users).where(eq(users.id, grant.userId)));
  const results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  if ((results.at(-1) as unknown[]).length === 0) return "user_gone";
  const writes = results as { rowsAffected: number }[];
  if (writes[sessionStatement]!.rowsAffected > 0) return "granted";
  return grant.otpStep !== null && writes[sessionStatement - 1]!.rowsAffected === 0
    ? "otp_replayed"
    : "too_many_devices";
}

/** Marks a device session inactive: its token is refused from the next request on. */
export async function deactivateSession(db: Database, sessionKey: string) {
  await db
    .update(deviceSessions)
    .set({ status: DeviceSessionStatus.INACTIVE })
    .where(eq(deviceSessions.deviceKey, sessionKey));
}
