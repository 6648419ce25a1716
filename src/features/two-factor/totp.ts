// TOTP as AList uses it (AList v3.58.0 server/handles/auth.go:222, the pquerna/otp defaults): SHA1,
// 6 digits, 30 s, one step of skew either way, a 20-byte secret in unpadded base32. Unlike AList a
// code is accepted once: the caller stores the time step it was valid for and refuses that step or
// any earlier one afterwards.
import { hmac } from "@noble/hashes/hmac.js";
import { sha1 } from "@noble/hashes/legacy.js";
import { Secret, TOTP } from "otpauth/bare";
import { correction, generate } from "lean-qr";

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
  const code = generate(totp(secret, username).toString(), { minCorrectionLevel: correction.L });
  // lean-qr's full build, not its nano one: for ASCII (the URI is percent-encoded) it writes no
  // ECI header, which some scanners do not read. Each row's dark runs are rectangles of one path,
  // two modules of quiet zone around.
  let path = "";
  for (let y = 0; y < code.size; y++) {
    for (let x = 0; x < code.size; x++) {
      if (!code.get(x, y)) continue;
      let run = 1;
      while (code.get(x + run, y)) run++;
      path += `M${x + 2} ${y + 2}h${run}v1h-${run}z`;
      x += run;
    }
  }
  const side = code.size + 4;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" width="256" height="256" shape-rendering="crispEdges"><rect width="${side}" height="${side}" fill="#fff"/><path d="${path}"/></svg>`;
  return `data:image/svg+xml;base64,${btoa(svg)}`;
}
