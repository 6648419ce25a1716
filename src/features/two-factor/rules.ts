// The decisions of two-factor enrolment (docs/decisions.md D4.5), over plain inputs: the enrolment
// waiting for its first code, the time, what the person submitted and the sealing keys. The routes only
// map the wire to these and save what they return (store.ts).
import { OTP_ENROLMENT_TTL_SECONDS } from "../../db/schema.ts";
import { ApiError } from "../../http/errors.ts";
import { INVALID_OTP, SECRET_NOT_ISSUED } from "./messages.ts";
import { open, seal } from "./secret-box.ts";
import { matchTotpStep, normaliseSecret } from "./totp.ts";

/** The enrolment 2fa/generate saved for the user (store.ts `readPendingEnrolment`). */
export interface PendingEnrolment {
  /** Sealed (secret-box.ts). */
  secret: string;
  /** Unix seconds. */
  createdAt: number;
}

/** What verifying an enrolment turns on: the secret to store, sealed, and the step its code used. */
export interface VerifiedEnrolment {
  sealedSecret: string;
  step: number;
}

/**
 * Checks a submitted secret and code against the user's pending enrolment at `nowMs`. Only the
 * secret this server issued to this user, recently, can be enrolled, and only with a code from it;
 * otherwise throws the 400 the wire answers.
 */
export async function verifiedEnrolment(
  keys: Uint8Array[],
  pending: PendingEnrolment | null | undefined,
  nowMs: number,
  submitted: { secret: string; code: string },
): Promise<VerifiedEnrolment> {
  const issued =
    pending && pending.createdAt > Math.floor(nowMs / 1000) - OTP_ENROLMENT_TTL_SECONDS
      ? await open(keys, pending.secret)
      : null;
  if (issued === null || normaliseSecret(issued) !== normaliseSecret(submitted.secret))
    throw new ApiError(400, SECRET_NOT_ISSUED);
  const step = await matchTotpStep(issued, submitted.code, nowMs);
  if (step === null) throw new ApiError(400, INVALID_OTP);
  return { sealedSecret: await seal(keys, issued), step };
}
