// TOTP as AList uses it (AList v3.58.0 server/handles/auth.go:222, the pquerna/otp defaults): SHA1,
// 6 digits, 30 s, one step of skew either way, a 20-byte secret in unpadded base32. Unlike AList a
// code is accepted once: the caller stores the time step it was valid for and refuses that step or
// any earlier one afterwards. RFC 6238 on the runtime's HMAC-SHA1 rather than a library: the budget
// (docs/decisions.md D27.1).
import { correction, generate } from "lean-qr";

const ISSUER = "Gatehouse";
const PERIOD = 30;
const DIGITS = 6;
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32 without padding; trailing bits of the last character are zeros. */
export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let value = 0;
  let bits = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(value >>> bits) & 31];
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Uppercase base32 without padding to bytes (bits past the last whole byte dropped), or null. */
export function base32Decode(text: string): Uint8Array | null {
  const out = new Uint8Array(Math.floor((text.length * 5) / 8));
  let value = 0;
  let bits = 0;
  let at = 0;
  for (const char of text) {
    const digit = BASE32.indexOf(char);
    if (digit < 0) return null;
    value = ((value << 5) | digit) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (value >>> bits) & 0xff;
    }
  }
  return out;
}

export function newTotpSecret(): string {
  return base32Encode(crypto.getRandomValues(new Uint8Array(20)));
}

/** Uppercase, no spaces or padding: how two spellings of one secret compare equal. */
export function normaliseSecret(secret: string): string {
  return secret.replace(/[\s=]/g, "").toUpperCase();
}

/** RFC 4226's code for `counter` under `key` (HMAC-SHA1, dynamic truncation, `digits` decimal digits). */
export async function hotp(key: CryptoKey, counter: number, digits = DIGITS): Promise<string> {
  const message = new Uint8Array(8);
  const view = new DataView(message.buffer);
  view.setUint32(0, Math.floor(counter / 2 ** 32));
  view.setUint32(4, counter >>> 0);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  const offset = (mac[19] ?? 0) & 0xf;
  const binary = new DataView(mac.buffer).getUint32(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** An HMAC-SHA1 key for a base32 secret, or null when it is not base32 or empty. */
export async function totpKey(secret: string): Promise<CryptoKey | null> {
  const bytes = base32Decode(normaliseSecret(secret));
  if (bytes === null || bytes.length === 0) return null;
  return crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-1" }, false, ["sign"]);
}

/** Compares two equal-length codes without stopping at the first difference. */
function sameCode(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The time step a code is valid for, or null: the current step first, then one before and one
 * after. `nowMs` is injectable for tests.
 */
export async function matchTotpStep(secret: string, code: string, nowMs = Date.now()): Promise<number | null> {
  const token = code.trim();
  if (!/^\d{6}$/.test(token)) return null;
  const key = await totpKey(secret);
  if (key === null) return null;
  const step = Math.floor(nowMs / 1000 / PERIOD);
  for (const candidate of [step, step - 1, step + 1]) {
    if (sameCode(token, await hotp(key, candidate))) return candidate;
  }
  return null;
}

/** The `otpauth://` key URI authenticator apps read, with the issuer in the label and as a parameter. */
export function keyUri(secret: string, username: string): string {
  const e = encodeURIComponent;
  const bytes = base32Decode(normaliseSecret(secret)) ?? new Uint8Array();
  return `otpauth://totp/${e(ISSUER)}:${e(username)}?issuer=${e(ISSUER)}&secret=${base32Encode(bytes)}&algorithm=SHA1&digits=${DIGITS}&period=${PERIOD}`;
}

/**
 * The enrolment a person scans: `otpauth://` URI rendered as an SVG QR code in a data URL. Error
 * correction L holds 2,953 bytes, enough for the longest username (255 characters, each up to 9
 * once percent-encoded); M holds 2,331, which 255 CJK characters exceed.
 */
export function enrolmentQr(secret: string, username: string): string {
  const code = generate(keyUri(secret, username), { minCorrectionLevel: correction.L });
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
