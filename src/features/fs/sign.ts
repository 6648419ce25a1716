// Download signs, AList's format exactly (AList v3.58.0 pkg/sign/hmac.go:17-26): base64url (with
// padding) of HMAC-SHA256(token, "<path>:<expiry>"), then ":<expiry>". The key is the permanent
// token, read with the request, so reset_token and set_token re-key from the next request on
// (docs/decisions.md D8.4).
import { hmac, type _HMAC } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { constantTimeEqual } from "../../auth/password.ts";
import { SIGN_EXPIRE_INVALID, SIGN_EXPIRE_MISSING, SIGN_EXPIRED, SIGN_INVALID } from "./messages.ts";

const encoder = new TextEncoder();

/** A token's HMAC state with its padded key blocks hashed in; each sign continues a copy of it. */
type HmacKey = _HMAC<ReturnType<typeof sha256.create>>;

/**
 * The HMAC key of the current token, hashed once per isolate: a listing signs every file in it.
 * A different token (after reset_token or set_token) gets its own. The HMAC is @noble/hashes',
 * synchronous: WebCrypto's was a native call and a promise per file (docs/decisions.md D26.9).
 * The signs it made are kept with it, by path and expiry: a folder signs the same files each time
 * it is listed, and a sign that never expires (expiry 0, the default) never changes (D26.12).
 * Bounded: at most SIGNS_KEPT, each of a path under KEPT_PATH_CHARS (a download's sign is checked
 * the same way, and anyone may present one for any path: at most about 4 MiB kept), emptied when
 * full; a new token starts with none.
 */
let signingKey: { token: string; key: HmacKey; scratch?: HmacKey; signs: Map<string, string> } | undefined;
const SIGNS_KEPT = 4096;
const KEPT_PATH_CHARS = 512;
/** Where each sign's HMAC is written: signs are made one at a time (synchronously). */
const digest = new Uint8Array(sha256.outputLen);

function mac(token: string, path: string, expiry: number): string {
  // WebCrypto refuses an empty HMAC key; so does this: no sign is ever made without a token.
  if (token === "") throw new DOMException("A sign needs a token: the HMAC key is empty", "DataError");
  if (signingKey?.token !== token)
    signingKey = { token, key: hmac.create(sha256, encoder.encode(token)), signs: new Map() };
  const message = `${path}:${expiry}`;
  const kept = signingKey.signs.get(message);
  if (kept !== undefined) return kept;
  // The key's state copied into the same scratch HMAC every time (the library's documented reuse
  // of a destination), and the digest into one buffer: a sign allocates no hash state, which
  // halved its cost (3.3 µs instead of 6.5 in Node).
  signingKey.scratch = signingKey.key._cloneInto(signingKey.scratch);
  signingKey.scratch.update(encoder.encode(message)).digestInto(digest);
  // Base64url with its padding (Go's base64.URLEncoding), as btoa pads it.
  const sign = btoa(String.fromCharCode(...digest))
    .replace(/\+/g, "-")
    .replace(/\//g, "_");
  if (message.length > KEPT_PATH_CHARS) return sign;
  if (signingKey.signs.size >= SIGNS_KEPT) signingKey.signs.clear();
  signingKey.signs.set(message, sign);
  return sign;
}

/** The sign of a full path; `expirationHours` 0 makes one that never expires. */
export async function signPath(
  token: string,
  path: string,
  expirationHours: number,
  now = Date.now(),
): Promise<string> {
  const expiry = expirationHours > 0 ? Math.floor(now / 1000 + expirationHours * 3600) : 0;
  return `${mac(token, path, expiry)}:${expiry}`;
}

/** Null when `sign` is good for `path`; otherwise AList's message for what is wrong with it. */
export async function signProblem(token: string, path: string, sign: string, now = Date.now()): Promise<string | null> {
  const presented = sign.endsWith("/") ? sign.slice(0, -1) : sign;
  const expiryText = presented.slice(presented.lastIndexOf(":") + 1);
  if (expiryText === "") return SIGN_EXPIRE_MISSING;
  if (!/^-?\d{1,19}$/.test(expiryText)) return SIGN_EXPIRE_INVALID;
  const expiry = Number(expiryText);
  if (expiry !== 0 && expiry < now / 1000) return SIGN_EXPIRED;
  const expected = `${mac(token, path, expiry)}:${expiry}`;
  return constantTimeEqual(encoder.encode(presented), encoder.encode(expected)) ? null : SIGN_INVALID;
}
