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
import type { users } from "../../db/schema.ts";
import { jwtSecret, readConfig, type Env } from "../../env.ts";
import { ApiError } from "../../http/errors.ts";
import { INVALID_OTP } from "../two-factor/messages.ts";
import { secondFactorStep } from "../two-factor/sign-in.ts";
import { SIGN_IN_FAILED, TOO_MANY_DEVICES } from "./messages.ts";
import { deactivateSession, grantSession, readSignInState, releaseAttempt, type SignInState } from "./store.ts";
import type { UserRow } from "../users/store.ts";

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

  return completeSignIn(env, db, {
    user,
    state,
    client,
    otpCode: request.otpCode,
    now,
    // An imported AList hash becomes a Gatehouse one with this sign-in's writes.
    passwordUpgrade: password.upgrade === null ? null : { from: user.passwordHash, to: password.upgrade },
  });
}

/** A sign-in whose first factor passed: the account, what readSignInState read, and the request. */
export interface CheckedSignIn {
  user: UserRow;
  state: SignInState;
  client: SignInClient;
  otpCode: string | undefined;
  now: number;
  passwordUpgrade: { from: string; to: string } | null;
}

/**
 * The second factor, then the device session and the token, for every sign-in whose first factor
 * is a secret the user typed (a password here, the directory's in src/features/ldap), so each gets
 * the same two-factor rule, sessions, limits and tokens.
 */
export async function completeSignIn(
  env: Env,
  db: Database,
  { user, state, client, otpCode, now, passwordUpgrade }: CheckedSignIn,
): Promise<{ token: string; device_key: string }> {
  // Whether the code's step was used already is decided once, atomically, by grantSession.
  const otpStep = await secondFactorStep(env, user.otpSecret, otpCode);
  return openSession(env, db, { user, state, client, now, otpStep, passwordUpgrade });
}

/**
 * Signs in `user`, whose proof (not a password) the caller has checked already: a passkey
 * (src/features/passkeys). Opens the device session and makes the token exactly as a password
 * sign-in does, without the lockout (it counts password guesses) or a second factor.
 */
export async function signInVerified(
  env: Env,
  db: Database,
  user: SignInUser,
  client: SignInClient,
): Promise<{ token: string; device_key: string }> {
  jwtSecret(env); // a missing secret fails before any work is done
  const now = Math.floor(Date.now() / 1000);
  // Reserves an attempt as every sign-in does; the granted session clears the counts.
  const state = await readSignInState(db, { username: user.username, ip: client.ip, now });
  return openSession(env, db, { user, state, client, now, otpStep: null, passwordUpgrade: null });
}

type SignInUser = Pick<typeof users.$inferSelect, "id" | "username" | "passwordChangedAt">;

/**
 * The device session (device limit, TOTP step consumed) and the token: the end of every sign-in,
 * once the account is established (by password, the directory, a passkey or single sign-on).
 */
export async function openSession(
  env: Env,
  db: Database,
  step: {
    user: SignInUser;
    state: Pick<Awaited<ReturnType<typeof readSignInState>>, "activeSessionKeys" | "maxDevices" | "evictPolicy">;
    client: SignInClient;
    now: number;
    otpStep: number | null;
    passwordUpgrade: { from: string; to: string } | null;
  },
): Promise<{ token: string; device_key: string }> {
  const { user, state, client, now, otpStep } = step;
  const ip = client.ip;
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
    passwordUpgrade: step.passwordUpgrade,
    maxOtherActive: limited && state.evictPolicy === "deny" ? state.maxDevices : null,
    maxActive: limited && state.evictPolicy === "evict_oldest" ? state.maxDevices : null,
  });
  // Deleted between the read and the write: as if it had never existed.
  if (outcome === "user_gone") throw new ApiError(400, SIGN_IN_FAILED);
  if (outcome === "otp_replayed") throw new ApiError(402, INVALID_OTP);
  if (outcome === "too_many_devices") throw new ApiError(403, TOO_MANY_DEVICES);

  const token = await signToken(
    jwtSecret(env),
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
