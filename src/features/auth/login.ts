// The sign-in flow shared by /api/auth/login and /api/auth/login/hash (reference §4.3 with the
// fixes of DECISIONS §4): lockout, password, second factor, device session, token.
import type { Context } from "hono";
import { clientId, clientIp, deviceKey, maskIp, userAgent } from "../../auth/client.ts";
import { isLockedOut, LOCKED_OUT_MESSAGE } from "../../auth/lockout.ts";
import { checkStaticHash } from "../../auth/password.ts";
import { signToken } from "../../auth/tokens.ts";
import { GUEST_ROLE_ID } from "../../auth/roles.ts";
import { jwtSecret, readConfig } from "../../env.ts";
import type { AppEnv } from "../../http/context.ts";
import { ApiError } from "../../http/errors.ts";
import { INVALID_OTP } from "../two-factor/messages.ts";
import { secondFactorStep } from "../two-factor/sign-in.ts";
import { grantSession, readSignInState, releaseAttempt } from "./store.ts";

/** One message for an unknown user and a wrong password, so neither reveals which it was. */
export const SIGN_IN_FAILED = "username or password is incorrect";

export interface SignInRequest {
  username: string;
  /** AList's static hash of the password (computed by /login, sent by clients of /login/hash). */
  passwordHash: string;
  otpCode: string | undefined;
}

export async function signIn(c: Context<AppEnv>, request: SignInRequest): Promise<{ token: string; device_key: string }> {
  const key = jwtSecret(c.env); // a missing secret fails before any work is done
  const db = c.var.db;
  const now = Math.floor(Date.now() / 1000);
  const ip = clientIp(c);
  const attempt = { username: request.username, ip, now };

  // The attempt is counted as a failure before the password is checked (a success clears the
  // count), so parallel guesses cannot all be checked against a count none of them has raised yet.
  const state = await readSignInState(db, attempt);
  if (isLockedOut(state.failures)) throw new ApiError(429, LOCKED_OUT_MESSAGE);

  // The guest account is how anonymous access is configured, not an account to sign in to.
  const user = state.user && !state.user.roleIds.includes(GUEST_ROLE_ID) ? state.user : undefined;
  const password = await checkStaticHash(request.passwordHash, user?.passwordHash ?? null);
  if (!user || !password.ok) throw new ApiError(400, SIGN_IN_FAILED);
  if (user.disabled) {
    await releaseAttempt(db, attempt);
    throw new ApiError(403, "Current user is disabled, replace please");
  }

  // Whether the code's step was used already is decided once, atomically, by grantSession.
  const otpStep = await secondFactorStep(c.env, user.otpSecret, request.otpCode);

  const sessionKey = await deviceKey(user.id, clientId(c));
  const alreadyActive = state.activeSessions.some((s) => s.deviceKey === sessionKey);
  const limited = state.maxDevices > 0 && !alreadyActive;
  const tokenId = crypto.randomUUID();
  const outcome = await grantSession(db, {
    userId: user.id,
    username: user.username,
    deviceKey: sessionKey,
    tokenId,
    userAgent: userAgent(c),
    maskedIp: maskIp(ip),
    clientIp: ip,
    now,
    otpStep,
    // An imported AList hash becomes a Gatehouse one with this sign-in's writes.
    passwordUpgrade: password.upgrade === null ? null : { from: user.passwordHash, to: password.upgrade },
    maxOtherActive: limited && state.evictPolicy === "deny" ? state.maxDevices : null,
    maxActive: limited && state.evictPolicy === "evict_oldest" ? state.maxDevices : null,
  });
  // Deleted between the read and the write: as if it had never existed.
  if (outcome === "user_gone") throw new ApiError(400, SIGN_IN_FAILED);
  if (outcome === "otp_replayed") throw new ApiError(402, INVALID_OTP);
  if (outcome === "too_many_devices") throw new ApiError(403, "too many active devices");

  const token = await signToken(key, { username: user.username, pwd_ts: user.passwordChangedAt, sid: sessionKey, jti: tokenId }, readConfig(c.env).tokenTtlSeconds, now);
  return { token, device_key: sessionKey };
}
