// Password storage (docs/decisions.md D4.3). Clients send, or we compute, AList's static hash
// sha256("<password>-https://github.com/alist-org/alist"); we store PBKDF2-SHA256 of that hash
// with a per-user salt, parameters in the string so they can be raised later without a migration.
// Passwords imported from AList keep AList's salted SHA-256 until their first sign-in upgrades them.
import { fromBase64Url, sha256Hex, toBase64Url } from "./encoding.ts";

const STATIC_HASH_SUFFIX = "https://github.com/alist-org/alist";
/** Cloudflare's production runtime refuses more than 100,000 PBKDF2 iterations. */
const ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;
const SCHEME = "pbkdf2-sha256";

const encoder = new TextEncoder();

export async function staticHash(password: string): Promise<string> {
  return sha256Hex(`${password}-${STATIC_HASH_SUFFIX}`);
}

/** Stored form: `pbkdf2-sha256$<iterations>$<salt base64url>$<hash base64url>`. */
export async function hashStaticHash(hash: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const derived = await pbkdf2(hash, salt, ITERATIONS);
  return [SCHEME, ITERATIONS, toBase64Url(salt), toBase64Url(derived)].join("$");
}

/**
 * Checks a submitted static hash against a stored password. Pass `null` for an unknown user:
 * the same PBKDF2 work is done against a throwaway salt, so timing does not reveal which
 * usernames exist.
 */
export async function verifyStaticHash(hash: string, stored: string | null): Promise<boolean> {
  return (await checkStaticHash(hash, stored)).ok;
}

/** Stored form of a password imported from AList (AList v3.58.0 internal/model/user.go:80): `alist-sha256$<salt>$<pwd_hash hex>`. */
const ALIST_SCHEME = "alist-sha256";

export function alistStoredHash(salt: string, pwdHash: string): string {
  return [ALIST_SCHEME, salt, pwdHash.toLowerCase()].join("$");
}

/**
 * verifyStaticHash, plus the Gatehouse hash to store instead when the stored one is an imported
 * AList hash and the password matched. AList's check is one SHA-256, so for it the PBKDF2 run is
 * the new hash itself: a known imported user costs the same one PBKDF2 as anyone else, and the
 * work the timing equaliser demands is the upgrade.
 */
export async function checkStaticHash(
  hash: string,
  stored: string | null,
): Promise<{ ok: boolean; upgrade: string | null }> {
  const legacy = stored === null ? null : parseAList(stored);
  if (legacy !== null) {
    const [upgrade, computed] = await Promise.all([hashStaticHash(hash), sha256Hex(`${hash}-${legacy.salt}`)]);
    const ok = hash !== "" && constantTimeEqual(encoder.encode(computed), encoder.encode(legacy.hash));
    return { ok, upgrade: ok ? upgrade : null };
  }
  const parsed = stored === null ? null : parseStored(stored);
  const salt = parsed?.salt ?? new Uint8Array(SALT_BYTES);
  const iterations = parsed?.iterations ?? ITERATIONS;
  const derived = await pbkdf2(hash, salt, iterations);
  return { ok: parsed !== null && hash !== "" && constantTimeEqual(derived, parsed.hash), upgrade: null };
}

function parseAList(stored: string): { salt: string; hash: string } | null {
  const [scheme, salt, hash, extra] = stored.split("$");
  if (scheme !== ALIST_SCHEME || salt === undefined || !hash || extra !== undefined || !/^[0-9a-f]{64}$/.test(hash))
    return null;
  return { salt, hash };
}

function parseStored(stored: string): { iterations: number; salt: Uint8Array; hash: Uint8Array } | null {
  const [scheme, iterations, salt, hash] = stored.split("$");
  const rounds = Number(iterations);
  if (scheme !== SCHEME || !Number.isInteger(rounds) || rounds < 1 || rounds > ITERATIONS || !salt || !hash) {
    return null;
  }
  return { iterations: rounds, salt: fromBase64Url(salt), hash: fromBase64Url(hash) };
}

async function pbkdf2(secret: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations },
    key,
    HASH_BITS,
  );
  return new Uint8Array(bits);
}

export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}
