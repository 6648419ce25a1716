// The second step of sign-in (src/features/auth/rules.ts `signIn`): the code against the user's secret.
// Whether the code's step was used already is decided later, atomically, by the sign-in's write
// batch (store.ts `consumeStep`), so two sign-ins with one code cannot both succeed.
import { otpSealingKeys, type Env } from "../../env.ts";
import { ApiError } from "../../http/errors.ts";
import { INVALID_OTP, SECRET_UNREADABLE } from "./messages.ts";
import { open } from "./secret-box.ts";
import { matchTotpStep } from "./totp.ts";

/**
 * The TOTP step `code` is valid for, or null when the user has two-factor off (`sealedSecret`
 * null). Throws 402 for a missing or wrong code, 500 when the secret cannot be unsealed.
 */
export async function secondFactorStep(
  env: Env,
  sealedSecret: string | null,
  code: string | undefined,
): Promise<number | null> {
  if (sealedSecret === null) return null;
  const secret = await open(otpSealingKeys(env), sealedSecret);
  if (secret === null) throw new ApiError(500, SECRET_UNREADABLE);
  const step = await matchTotpStep(secret, code ?? "");
  if (step === null) throw new ApiError(402, INVALID_OTP);
  return step;
}
