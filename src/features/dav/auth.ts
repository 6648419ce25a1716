// Who a WebDAV request comes from (docs/decisions.md D8.9). WebDAV clients send HTTP Basic on every
// request, so the check must be cheap and must never let two-factor be skipped:
//   Basic user:access-key    → the user cut to the key's folder and rights, while the key is good
//                              and has WebDAV use (an app password is one; one SHA-256, no PBKDF2;
//                              docs/decisions.md D16)
//   Basic user:password      → the user, unless two-factor is on (then only app passwords work)
//   Bearer <permanent token> → the admin (as AList)
// Failures count toward the sign-in lockout of /api/auth/login. A password that passed PBKDF2 is
// remembered in the isolate against the stored hash it matched, so the next requests skip the
// derivation; the stored hash is read on every request, so a changed password or a disabled user
// stops WebDAV on the next request whatever the isolate remembers.
import type { Context } from "hono";
import type { BatchItem } from "drizzle-orm/batch";
import type { Caller } from "../../auth/caller.ts";
import { clientIp } from "../../auth/client.ts";
import { sha256Hex } from "../../auth/encoding.ts";
import { isLockedOut } from "../../auth/lockout.ts";
import { LOCKED_OUT_MESSAGE, TOKEN_INVALIDATED, USER_DISABLED } from "../../auth/messages.ts";
import { checkStaticHash, constantTimeEqual, staticHash } from "../../auth/password.ts";
import { readPermanentTokenAdmin } from "../../auth/store.ts";
import { GUEST_ROLE_ID } from "../../auth/roles.ts";
import type { AppEnv } from "../../http/context.ts";
import { isAccessKeySecret, keyCaller, keyRefusal, keyTouchDue } from "../../auth/access-keys.ts";
import { SIGN_IN_FAILED } from "../auth/messages.ts";
import { SIGN_IN_NEEDED, TWO_FACTOR_NEEDS_APP_PASSWORD } from "./messages.ts";
import { DavError } from "./rules.ts";
import { clearFailures, readBasicCaller, recordFailure } from "./store.ts";

/** Passwords that passed PBKDF2 in this isolate: credential digest → the stored hash it matched. */
const verified = new Map<string, { storedHash: string; until: number }>();
const VERIFIED_MAX = 1000;
const VERIFIED_TTL_MS = 10 * 60 * 1000;

function remember(key: string, storedHash: string) {
  if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
  verified.set(key, { storedHash, until: Date.now() + VERIFIED_TTL_MS });
}

/**
 * Verifications under way, by credential digest. A client opening several connections at once
 * (rclone does) sends its first requests together: they wait for the first one's PBKDF2 instead of
 * each counting an attempt, which could reach the lockout threshold with a right password. They
 * poll on their own timers: a promise settled by another request's handler is not theirs to await.
 */
const verifying = new Set<string>();
const VERIFY_WAIT_MS = 3000;

function remembered(key: string): string | null {
  const entry = verified.get(key);
  if (!entry || entry.until < Date.now()) return null;
  return entry.storedHash;
}

type Credentials =
  | { kind: "basic"; username: string; password: string }
  | { kind: "bearer"; token: string }
  | { kind: "none" };

export function credentialsOf(header: string | undefined): Credentials {
  const value = (header ?? "").trim();
  const basic = /^Basic\s+(\S+)$/i.exec(value);
  if (basic) {
    let decoded: string;
    try {
      decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
        Uint8Array.from(atob(basic[1]!), (ch) => ch.charCodeAt(0)),
      );
    } catch {
      return { kind: "none" };
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) return { kind: "none" };
    return { kind: "basic", username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(value);
  if (bearer) return { kind: "bearer", token: bearer[1]! };
  return { kind: "none" };
}

/**
 * The caller of a WebDAV request and the results of `extra`, read in one batch (a second round
 * trip only for a password's first use in this isolate, to clear its reserved attempt, and for a
 * failure that was not reserved). Throws the refusal (DavError: 401, 403 or 429).
 */
export async function davCaller(
  c: Context<AppEnv>,
  extra: readonly BatchItem<"sqlite">[],
): Promise<{ caller: Caller; reads: unknown[] }> {
  const credentials = credentialsOf(c.req.header("Authorization"));
  if (credentials.kind === "none") throw new DavError(401, SIGN_IN_NEEDED);
  if (credentials.kind === "bearer") {
    const { token, admin, roles, extra: reads } = await readPermanentTokenAdmin(c.var.db, extra);
    const encoder = new TextEncoder();
    if (token === "" || !admin || !constantTimeEqual(encoder.encode(credentials.token), encoder.encode(token)))
      throw new DavError(401, TOKEN_INVALIDATED);
    return { caller: { user: admin, roles, via: "permanent_token", deviceKey: null }, reads };
  }
  return basicCaller(c, credentials.username, credentials.password, extra);
}

async function basicCaller(
  c: Context<AppEnv>,
  username: string,
  password: string,
  extra: readonly BatchItem<"sqlite">[],
): Promise<{ caller: Caller; reads: unknown[] }> {
  const now = Math.floor(Date.now() / 1000);
  const ip = clientIp(c);
  const isAppPassword = isAccessKeySecret(password);
  // An app password is looked up by its hash; an account password is remembered by a digest of both.
  const digest = isAppPassword ? await sha256Hex(password) : null;
  const credentialKey = isAppPassword ? "" : await sha256Hex(`${username}\u0000${password}`);
  let knownHash = isAppPassword ? null : remembered(credentialKey);
  if (!isAppPassword && knownHash === null && verifying.has(credentialKey)) {
    for (const started = Date.now(); verifying.has(credentialKey) && Date.now() - started < VERIFY_WAIT_MS; )
      await new Promise((resolve) => setTimeout(resolve, 10));
    knownHash = remembered(credentialKey);
  }
  // A PBKDF2 check follows unless this isolate already verified the password: count it first.
  const reserve = !isAppPassword && knownHash === null;
  if (!reserve)
    return checkBasic(c, { username, password, isAppPassword, digest, credentialKey, knownHash, ip, now }, extra);
  verifying.add(credentialKey);
  try {
    return await checkBasic(c, { username, password, isAppPassword, digest, credentialKey, knownHash, ip, now }, extra);
  } finally {
    verifying.delete(credentialKey);
  }
}

interface BasicAttempt {
  username: string;
  password: string;
  isAppPassword: boolean;
  digest: string | null;
  credentialKey: string;
  knownHash: string | null;
  ip: string;
  now: number;
}

async function checkBasic(
  c: Context<AppEnv>,
  attempt: BasicAttempt,
  extra: readonly BatchItem<"sqlite">[],
): Promise<{ caller: Caller; reads: unknown[] }> {
  const { username, password, isAppPassword, digest, credentialKey, knownHash, ip, now } = attempt;
  const db = c.var.db;
  const reserve = !isAppPassword && knownHash === null;
  const touch = digest !== null && keyTouchDue(digest, now);
  const state = await readBasicCaller(db, { username, appPasswordHash: digest, ip, reserve, now, touch }, extra);
  if (isLockedOut(state.failures)) throw new DavError(429, LOCKED_OUT_MESSAGE);

  const user = state.user && !state.user.roleIds.includes(GUEST_ROLE_ID) ? state.user : undefined;
  const refuse = async (counted: boolean): Promise<never> => {
    if (!counted) await recordFailure(db, { ip, username, now });
    throw new DavError(401, SIGN_IN_FAILED);
  };

  if (isAppPassword) {
    if (!user || !state.appPassword) return refuse(false);
  } else if (
    knownHash !== null &&
    user &&
    user.otpSecret === null &&
    constantTimeEqual(new TextEncoder().encode(knownHash), new TextEncoder().encode(user.passwordHash))
  ) {
    // Verified before against the hash still stored: no derivation, nothing to clear.
  } else {
    if (knownHash !== null) {
      // The stored hash changed since (a new password), or two-factor was turned on: check again,
      // counted like any attempt.
      verified.delete(credentialKey);
      return basicCaller(c, username, password, extra);
    }
    const checked = await checkStaticHash(await staticHash(password), user?.passwordHash ?? null);
    if (!user || !checked.ok) return refuse(true);
    if (user.otpSecret !== null) throw new DavError(401, TWO_FACTOR_NEEDS_APP_PASSWORD);
    await clearFailures(
      db,
      { ip, username, userId: user.id },
      checked.upgrade === null ? null : { from: user.passwordHash, to: checked.upgrade },
    );
    remember(credentialKey, checked.upgrade ?? user.passwordHash);
  }
  if (user!.disabled) throw new DavError(403, USER_DISABLED);
  if (isAppPassword) {
    const refusal = keyRefusal(state.appPassword, user, "webdav", now);
    if (refusal) throw new DavError(refusal.code, refusal.message);
    return { caller: keyCaller(user!, state.roles, state.appPassword!, "basic"), reads: state.extra };
  }
  return { caller: { user: user!, roles: state.roles, via: "basic", deviceKey: null }, reads: state.extra };
}
