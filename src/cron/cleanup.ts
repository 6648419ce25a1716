// The scheduled sweep (docs/decisions.md D4.6): device sessions idle longer than `device_session_ttl`,
// expired login-failure windows, 2FA enrolments nobody verified, and expired WebDAV locks, single
// sign-on states and passkey challenges (each already refused once expired; this only keeps the
// tables small when nobody signs in again). Deletes run in bounded
// chunks so a large backlog never holds the write lock long or outruns the Worker's limits;
// whatever is left over goes on the next run. Running it twice in a row removes nothing more.
import { eq, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "../db/client.ts";
import {
  davLocks,
  deviceSessions,
  loginFailures,
  OTP_ENROLMENT_TTL_SECONDS,
  pendingOtpEnrolments,
  settings,
  ssoStates,
  webauthnChallenges,
} from "../db/schema.ts";

const CHUNK = 500;
const MAX_ROUNDS = 20;
const DEFAULT_SESSION_TTL_SECONDS = 86_400;

export interface CleanupReport {
  deviceSessions: number;
  loginFailures: number;
  otpEnrolments: number;
  davLocks: number;
  ssoStates: number;
  passkeyChallenges: number;
  /** True when a table still had rows to delete after the last round. */
  incomplete: boolean;
}

/** `device_session_ttl` as AList reads it: unparsable means the default, 0 or less turns cleanup off. */
export function sessionTtlSeconds(raw: string | undefined): number {
  const ttl = Number.parseInt(raw ?? "", 10);
  return Number.isNaN(ttl) ? DEFAULT_SESSION_TTL_SECONDS : ttl;
}

export async function cleanUp(db: Database, now = Math.floor(Date.now() / 1000)): Promise<CleanupReport> {
  const [ttlRow] = await db
    .select({ value: settings.value })
    .from(settings)
    .where(eq(settings.key, "device_session_ttl"));
  const ttl = sessionTtlSeconds(ttlRow?.value);

  const sweeps: {
    name: Exclude<keyof CleanupReport, "incomplete">;
    table: SQLiteTable;
    expired: SQL;
  }[] = [
    { name: "loginFailures", table: loginFailures, expired: sql`${loginFailures.expiresAt} < ${now}` },
    {
      name: "otpEnrolments",
      table: pendingOtpEnrolments,
      expired: sql`${pendingOtpEnrolments.createdAt} < ${now - OTP_ENROLMENT_TTL_SECONDS}`,
    },
    { name: "davLocks", table: davLocks, expired: sql`${davLocks.expiresAt} <= ${now}` },
    { name: "ssoStates", table: ssoStates, expired: sql`${ssoStates.expiresAt} <= ${now}` },
    { name: "passkeyChallenges", table: webauthnChallenges, expired: sql`${webauthnChallenges.expiresAt} <= ${now}` },
  ];
  if (ttl > 0)
    sweeps.push({
      name: "deviceSessions",
      table: deviceSessions,
      expired: sql`${deviceSessions.lastActive} < ${now - ttl}`,
    });

  const report: CleanupReport = {
    deviceSessions: 0,
    loginFailures: 0,
    otpEnrolments: 0,
    davLocks: 0,
    ssoStates: 0,
    passkeyChallenges: 0,
    incomplete: false,
  };
  let pending = sweeps;
  for (let round = 0; round < MAX_ROUNDS && pending.length > 0; round++) {
    // One round trip per round: a bounded delete from each table that still has work.
    const statements = pending.map(({ table, expired }) =>
      db.run(sql`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${expired} LIMIT ${CHUNK})`),
    );
    const results = await db.batch(statements as [(typeof statements)[number], ...typeof statements]);
    results.forEach((result, i) => {
      report[pending[i]!.name] += result.rowsAffected;
    });
    pending = pending.filter((_, i) => results[i]!.rowsAffected >= CHUNK);
  }
  report.incomplete = pending.length > 0;
  return report;
}
