// Every query of two-factor: enrolments waiting for their first code, the secret on the user, and
// `otp_last_step`, which makes each code work once.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { pendingOtpEnrolments, users } from "../../db/schema.ts";

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

/** Turns two-factor off for the user and drops any enrolment in progress. False: no such user. */
export async function cancelTwoFactor(db: Database, id: number): Promise<boolean> {
  const [cleared] = await db.batch([
    db.update(users).set({ otpSecret: null }).where(eq(users.id, id)),
    db.delete(pendingOtpEnrolments).where(eq(pendingOtpEnrolments.userId, id)),
  ]);
  return cleared.rowsAffected > 0;
}

/**
 * The one place that decides "a TOTP step is used once": true of a `users` row while `step` is
 * later than the last step it used (always true without a step). Sign-in's batch conditions its
 * writes on it, so a replayed code changes nothing.
 */
export function stepUnused(step: number | null): SQL {
  return step === null ? sql`1` : sql`${users.otpLastStep} < ${step}`;
}

/** Marks `step` used, unless it or a later one was: for sign-in's batch, which reads `changes()` after it. */
export function consumeStep(db: Database, userId: number, step: number) {
  return db
    .update(users)
    .set({ otpLastStep: step })
    .where(and(eq(users.id, userId), stepUnused(step)));
}
