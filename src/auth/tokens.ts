// Login tokens: HS256 JWTs (jose). Besides AList's claims (username, pwd_ts) a token names its
// device session (`sid`) and carries an id (`jti`); the guard accepts it only while that session
// is active and still holds that id, so logout and eviction end it at once (docs/decisions.md D4.1).
import { jwtVerify, SignJWT } from "jose";
import {
  JOSEAlgNotAllowed,
  JWSInvalid,
  JWSSignatureVerificationFailed,
  JWTClaimValidationFailed,
  JWTExpired,
  JWTInvalid,
} from "jose/errors";
import { TOKEN_INVALIDATED } from "./messages.ts";

export interface TokenClaims {
  username: string;
  /** The user's password timestamp at login; a later password change kills the token. */
  pwd_ts: number;
  /** Device session key. */
  sid: string;
  /** Token id, stored on the session row. */
  jti: string;
}

/** A token that cannot be used, with AList's wording for why; the HTTP layer answers it with 401. */
export class TokenError extends Error {
  override name = "TokenError";
}

/**
 * The HMAC key of a secret, imported once per isolate and secret (jose would import raw bytes on
 * every sign and verify: the guard runs on every request). Kept by the secret's bytes, which
 * env.ts encodes once.
 */
const hmacKeys = new WeakMap<Uint8Array, CryptoKey>();
async function hmacKey(secret: Uint8Array): Promise<CryptoKey> {
  const kept = hmacKeys.get(secret);
  if (kept) return kept;
  // Keys, not promises, are shared: a request never awaits work another request started.
  const key = await crypto.subtle.importKey("raw", secret as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
  hmacKeys.set(secret, key);
  return key;
}

export async function signToken(
  secret: Uint8Array,
  claims: TokenClaims,
  ttlSeconds: number,
  now: number,
): Promise<string> {
  const key = await hmacKey(secret);
  return new SignJWT({ username: claims.username, pwd_ts: claims.pwd_ts, sid: claims.sid })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setJti(claims.jti)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(key);
}

/** A token whose signature and claims were checked, with the times it is good between. */
interface Verified {
  claims: TokenClaims;
  nbf: number;
  exp: number;
}

/**
 * Tokens this isolate verified, by secret and token: a client sends the same token on every
 * request, and the signature and claims of a token never change. Only the times are checked
 * again, as jose checks them; whether the session still holds the token is read from the
 * database on every request as before (docs/decisions.md D26.2). Bounded: emptied when full.
 */
const verifiedTokens = new WeakMap<Uint8Array, Map<string, Verified>>();
const VERIFIED_TOKENS_KEPT = 1000;

/** Verifies signature, algorithm and times; any failure is a TokenError. */
export async function verifyToken(secret: Uint8Array, token: string): Promise<TokenClaims> {
  let kept = verifiedTokens.get(secret);
  const verified = kept?.get(token);
  if (verified) {
    // jose's checks, without clock tolerance, in its order and with its messages.
    const now = Math.floor(Date.now() / 1000);
    if (verified.nbf > now) throw new TokenError("token not active yet");
    if (verified.exp <= now) {
      kept?.delete(token);
      throw new TokenError("token is expired");
    }
    return verified.claims;
  }
  const fresh = await verifyWithJose(secret, token);
  if (!kept) {
    kept = new Map();
    verifiedTokens.set(secret, kept);
  }
  if (kept.size >= VERIFIED_TOKENS_KEPT) kept.clear();
  kept.set(token, fresh);
  return fresh.claims;
}

async function verifyWithJose(secret: Uint8Array, token: string): Promise<Verified> {
  try {
    const { payload } = await jwtVerify(token, await hmacKey(secret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp", "nbf", "jti"],
    });
    const { username, pwd_ts, sid, jti, nbf, exp } = payload;
    if (
      typeof username !== "string" ||
      typeof pwd_ts !== "number" ||
      typeof sid !== "string" ||
      typeof jti !== "string" ||
      typeof nbf !== "number" ||
      typeof exp !== "number"
    ) {
      throw new TokenError("couldn't handle this token");
    }
    // Frozen: the same claims answer every later request with this token.
    return { claims: Object.freeze({ username, pwd_ts, sid, jti }), nbf, exp };
  } catch (error) {
    if (error instanceof TokenError) throw error;
    throw new TokenError(tokenErrorMessage(error));
  }
}

function tokenErrorMessage(error: unknown): string {
  if (error instanceof JWTExpired) return "token is expired";
  if (error instanceof JWTClaimValidationFailed && error.claim === "nbf") return "token not active yet";
  // A wrong key or a refused algorithm (alg: none) means someone else made this token.
  if (error instanceof JWSSignatureVerificationFailed || error instanceof JOSEAlgNotAllowed) return TOKEN_INVALIDATED;
  if (error instanceof JWSInvalid || error instanceof JWTInvalid) return "that's not even a token";
  return "couldn't handle this token";
}

/** The token in an Authorization header: AList sends it raw; `Bearer <token>` is accepted too. */
export function tokenFromHeader(header: string | undefined): string {
  const value = (header ?? "").trim();
  return /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, "").trim() : value;
}
