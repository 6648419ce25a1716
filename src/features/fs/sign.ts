// Download signs, AList's format exactly (AList v3.58.0 pkg/sign/hmac.go:17-26): base64url (with
// padding) of HMAC-SHA256(token, "<path>:<expiry>"), then ":<expiry>". The key is the permanent
// token, read with the request, so reset_token and set_token re-key from the next request on
// (docs/decisions.md D8.4).
import { constantTimeEqual } from "../../auth/password.ts";
import { SIGN_EXPIRE_INVALID, SIGN_EXPIRE_MISSING, SIGN_EXPIRED, SIGN_INVALID } from "./messages.ts";

const encoder = new TextEncoder();

/**
 * The HMAC key of the current token, imported once per isolate: a listing signs every file in it.
 * A different token (after reset_token or set_token) imports its own.
 */
let signingKey: { token: string; key: Promise<CryptoKey> } | undefined;
function keyOf(token: string): Promise<CryptoKey> {
  if (signingKey?.token !== token) {
    signingKey = {
      token,
      key: crypto.subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
    };
  }
  return signingKey.key;
}

async function mac(token: string, path: string, expiry: number): Promise<string> {
  const key = await keyOf(token);
  const digest = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${path}:${expiry}`)));
  // Base64url with its padding (Go's base64.URLEncoding), as btoa pads it.
  return btoa(String.fromCharCode(...digest))
    .replace(/\+/g, "-")
    .replace(/\//g, "_");
}

/** The sign of a full path; `expirationHours` 0 makes one that never expires. */
export async function signPath(
  token: string,
  path: string,
  expirationHours: number,
  now = Date.now(),
): Promise<string> {
  const expiry = expirationHours > 0 ? Math.floor(now / 1000 + expirationHours * 3600) : 0;
  return `${await mac(token, path, expiry)}:${expiry}`;
}

/** Null when `sign` is good for `path`; otherwise AList's message for what is wrong with it. */
export async function signProblem(token: string, path: string, sign: string, now = Date.now()): Promise<string | null> {
  const presented = sign.endsWith("/") ? sign.slice(0, -1) : sign;
  const expiryText = presented.slice(presented.lastIndexOf(":") + 1);
  if (expiryText === "") return SIGN_EXPIRE_MISSING;
  if (!/^-?\d{1,19}$/.test(expiryText)) return SIGN_EXPIRE_INVALID;
  const expiry = Number(expiryText);
  if (expiry !== 0 && expiry < now / 1000) return SIGN_EXPIRED;
  const expected = `${await mac(token, path, expiry)}:${expiry}`;
  return constantTimeEqual(encoder.encode(presented), encoder.encode(expected)) ? null : SIGN_INVALID;
}
