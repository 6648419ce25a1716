// Linking an account to an identity (docs/decisions.md D20.4). The get_sso_id callback hands the
// profile page a short-lived proof of the identity, signed here, rather than the identity itself;
// /api/me/update stores an sso_id only from such a proof, so no one can claim an identity they did
// not sign in with at the provider (it would let its owner into their account).
import { jwtVerify, SignJWT } from "jose";
import { jwtSecret, type Env } from "../../env.ts";
import { ApiError } from "../../http/errors.ts";
import { LINK_PROOF_REFUSED } from "./messages.ts";

/** As long as a begun sign-in: the profile page saves it at once. */
const PROOF_TTL_SECONDS = 600;
const PURPOSE = "sso_link";

/** A key of its own, derived from JWT_SECRET: a proof is never a login token, nor the reverse. */
async function proofKey(env: Env): Promise<Uint8Array> {
  const label = new TextEncoder().encode("gatehouse sso link proof\0");
  const secret = jwtSecret(env);
  const material = new Uint8Array(label.length + secret.length);
  material.set(label);
  material.set(secret, label.length);
  return new Uint8Array(await crypto.subtle.digest("SHA-256", material));
}

export async function signLinkProof(env: Env, ssoId: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ purpose: PURPOSE, sso_id: ssoId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + PROOF_TTL_SECONDS)
    .sign(await proofKey(env));
}

/** The identity a proof names, or null; `anyTime`: an expired proof counts too. */
async function proven(env: Env, sent: string, anyTime: boolean): Promise<string | null> {
  try {
    const { payload } = await jwtVerify(sent, await proofKey(env), {
      algorithms: ["HS256"],
      ...(anyTime ? { currentDate: new Date(0) } : {}),
    });
    return payload.purpose === PURPOSE && typeof payload.sso_id === "string" && payload.sso_id !== ""
      ? payload.sso_id
      : null;
  } catch {
    return null; // not a proof, or an expired one
  }
}

/**
 * The sso_id /api/me/update stores: unchanged when absent or the current one, none when empty,
 * else the identity a valid proof names. The profile page keeps the proof it saved and sends it
 * back with later edits: an expired proof of the identity already linked changes nothing.
 */
export async function ownSsoId(env: Env, sent: string | undefined, current: string): Promise<string | undefined> {
  if (sent === undefined || sent === "" || sent === current) return sent;
  const identity = await proven(env, sent, false);
  if (identity !== null) return identity;
  if (current !== "" && (await proven(env, sent, true)) === current) return current;
  throw new ApiError(400, LINK_PROOF_REFUSED);
}
