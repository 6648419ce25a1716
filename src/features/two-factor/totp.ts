// TOTP as AList uses it (AList v3.58.0 server/handles/auth.go:222, the pquerna/otp defaults): SHA1,
// 6 digits, 30 s, one step of skew either way, a 20-byte secret in unpadded base32. Unlike AList a
// code is accepted once: the caller stores the time step it was valid for and refuses that step or
// any earlier one afterwards.
import { hmac } from "@noble/hashes/hmac.js";
import { sha1 } from "@noble/hashes/legacy.js";
import { Secret, TOTP } from "otpauth/bare";
import QRCode from "qrcode-svg";

const ISSUER = "Gatehouse";
const PERIOD = 30;

// otpauth's default build bundles every hash it supports (SHA-2, SHA-3: about 8 KiB gzip); its bare
// build takes the one HMAC TOTP needs from the same library it would have bundled.
const hmacSha1 = (_algorithm: string, key: Uint8Array, message: Uint8Array) => hmac(sha1, key, message);

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32.replace(/=+$/, "");
}

/** Uppercase, no spaces or padding: how two spellings of one secret compare equal. */
export function normaliseSecret(secret: string): string {
  return secret.replace(/[\s=]/g, "").toUpperCase();
}

function totp(secret: string, username: string): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label: username,
    algorithm: "SHA1",
    digits: 6,
    period: PERIOD,
    secret: Secret.fromBase32(normaliseSecret(secret)),
    hmac: hmacSha1,
  });
}

/** The time step a code is valid for, or null. `nowMs` is injectable for tests. */
export function matchTotpStep(secret: string, code: string, nowMs = Date.now()): number | null {
  const token = code.trim();
  if (!/^\d{6}$/.test(token)) return null;
  let delta: number | null;
  try {
    delta = totp(secret, "").validate({ token, timestamp: nowMs, window: 1 });
  } catch {
    return null; // not base32
  }
  return delta === null ? null : Math.floor(nowMs / 1000 / PERIOD) + delta;
}

/**
 * The enrolment a person scans: `otpauth://` URI rendered as an SVG QR code in a data URL. Error
 * correction L holds 2,953 bytes, enough for the longest username (255 characters, each up to 9
 * once percent-encoded); M holds 2,331, which 255 CJK characters exceed.
 */
export function enrolmentQr(secret: string, username: string): string {
  const uri = totp(secret, username).toString();
  const svg = new QRCode({ content: uri, ecl: "L", width: 256, height: 256, padding: 2, join: true }).svg({
    container: "svg-viewbox",
  });
  return `data:image/svg+xml;base64,${btoa(svg)}`;
}
