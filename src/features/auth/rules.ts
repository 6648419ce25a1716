// The sign-in flow shared by /api/auth/login and /api/auth/login/hash (AList v3.58.0
// server/handles/auth.go:61, with docs/decisions.md D4's fixes): lockout, password, second factor,
// device session, token. Plain inputs (the request's fields and what it tells of the client);
// refusals are the ApiError the wire answers.
import { deviceKey, maskIp } from "../../auth/client.ts";
import { isLockedOut } from "../../auth/lockout.ts";
import { LOCKED_OUT_MESSAGE, USER_DISABLED } from "../../auth/messages.ts";
import { checkStaticHash } from "../../auth/password.ts";
import { signToken } from "../../auth/tokens.ts";
import { GUEST_ROLE_ID } from "../../auth/roles.ts";
import type { Database } from "../../db/client.ts";
import { jwtSecret, readConfig, type Env } from "../../env.ts";
import { ApiError } from "../../http/errors.ts";
import { INVALID_OTP } from "../two-factor/messages.ts";
import { secondFactorStep } from "../two-factor/sign-in.ts";
import { SIGN_IN_FAILED, TOO_MANY_DEVICES } from "./messages.ts";
import { deactivateSession, grantSession, readSignInState, releaseAttempt } from "./store.ts";

export interface SignInRequest {
  username: string;
  /** AList's static hash of the password (computed by /login, sent by clients of /login/hash). */
  passwordHash: string;
  otpCode: string | undefined;
}

/** What the request tells of the client: its address, user agent and own device id (auth/client.ts). */
export interface SignInClient {
  ip: string;
  userAgent: string;
  /** The `Client-Id` header or `client_id` query: one device session across sign-ins. */
  clientId: string | undefined;
}

export async function signIn(
  env: Env,
  db: Database,
  request: SignInRequest,
  client: SignInClient,
): Promise<{ token: string; device_key: string }> {
  jwtSecret(env); // a missing secret fails before any work is done
  const now = Math.floor(Date.now() / 1000);
  const ip = client.ip;
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
    throw new ApiError(403, USER_DISABLED);
  }

  // Whether the code's step was used already is decided once, atomically, by grantSession.
  const otpStep = await secondFactorStep(env, user.otpSecret, request.otpCode);
  return openSession(env, db, { ...state, user }, client, {
    otpStep,
    // An imported AList hash becomes a Gatehouse one with this sign-in's writes.
    passwordUpgrade: password.upgrade === null ? null : { from: user.passwordHash, to: password.upgrade },
  });
}

/** The account a sign-in established, and what its device limit needs (store.ts readSignInState). */
export interface EstablishedSignIn {
  user: { id: number; username: string; passwordChangedAt: number };
  maxDevices: number;
  evictPolicy: "deny" | "evict_oldest";
  activeSessionKeys: ReadonlySet<string>;
}

/**
 * Opens the device session and signs the token, once the account is established: by password
 * (signIn) or by another way in such as single sign-on, whose sessions and tokens are the same.
 */
export async function openSession(
  env: Env,
  db: Database,
  { user, ...state }: EstablishedSignIn,
  client: SignInClient,
  options: { otpStep: number | null; passwordUpgrade: { from: string; to: string } | null },
): Promise<{ token: string; device_key: string }> {
  const key = jwtSecret(env);
  const now = Math.floor(Date.now() / 1000);
  const ip = client.ip;
  const { otpStep } = options;
  const sessionKey = await deviceKey(user.id, client.clientId);
  const alreadyActive = state.activeSessionKeys.has(sessionKey);
  const limited = state.maxDevices > 0 && !alreadyActive;
  const tokenId = crypto.randomUUID();
  const outcome = await grantSession(db, {
    userId: user.id,
    username: user.username,
    deviceKey: sessionKey,
    tokenId,
    userAgent: client.userAgent,
    maskedIp: maskIp(ip),
    clientIp: ip,
    now,
    otpStep,
    passwordUpgrade: options.passwordUpgrade,
    maxOtherActive: limited && state.evictPolicy === "deny" ? state.maxDevices : null,
    maxActive: limited && state.evictPolicy === "evict_oldest" ? state.maxDevices : null,
  });
  // Deleted between the read and the write: as if it had never existed.
  if (outcome === "user_gone") throw new ApiError(400, SIGN_IN_FAILED);
  if (outcome === "otp_replayed") throw new ApiError(402, INVALID_OTP);
  if (outcome === "too_many_devices") throw new ApiError(403, TOO_MANY_DEVICES);

  const token = await signToken(
    key,
    { username: user.username, pwd_ts: user.passwordChangedAt, sid: sessionKey, jti: tokenId },
    readConfig(env).tokenTtlSeconds,
    now,
  );
  return { token, device_key: sessionKey };
}

/** Ends the caller's device session, so its token stops working. The guest and the permanent token have none. */
export async function signOut(db: Database, sessionKey: string | null): Promise<void> {
  if (sessionKey !== null) await deactivateSession(db, sessionKey);
}
