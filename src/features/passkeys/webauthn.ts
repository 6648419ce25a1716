// WebAuthn Level 2's verification steps (section 7.1 registration, 7.2 authentication) with WebCrypto,
// for what the server decided beforehand (challenge, origin, RP ID: rules.ts). No library: a CBOR
// reader and four key types are all it takes (docs/decisions.md D19.1). Attestation statements are
// not checked: Gatehouse asks for none and trusts no authenticator model (D19.2).
import { ApiError } from "../../http/errors.ts";
import { CborError, type CborValue, decodeCbor } from "./cbor.ts";
import {
  BAD_SIGNATURE,
  CHALLENGE_MISMATCH,
  CREDENTIAL_MALFORMED,
  ORIGIN_MISMATCH,
  RP_ID_MISMATCH,
  UNSUPPORTED_KEY,
  USER_NOT_PRESENT,
  WRONG_CEREMONY,
} from "./messages.ts";

/** What the server expects the client data and authenticator data to say. */
export interface Expected {
  /** base64url, as handed out in the options. */
  challenge: string;
  /** `scheme://host[:port]` of the site. */
  origin: string;
  rpId: string;
}

/** COSE algorithms offered at registration, in order of preference (RFC 9053; -257 from RFC 8812). */
export const COSE_ALGORITHMS = [-7, -8, -257] as const;

export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Strict: anything but base64url (or standard base64, which some clients send) is malformed. */
export function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9\-_+/]*={0,2}$/.test(text)) throw malformed();
  const normal = text.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  let binary: string;
  try {
    binary = atob(normal + "=".repeat((4 - (normal.length % 4)) % 4));
  } catch {
    throw malformed();
  }
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

const malformed = () => new ApiError(400, CREDENTIAL_MALFORMED);

async function sha256(bytes: Uint8Array | string): Promise<Uint8Array> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** WebAuthn sections 7.1 steps 5-12 and 7.2 steps 10-16: the client data names this ceremony, challenge and origin. */
function checkClientData(clientDataJSON: Uint8Array, type: "webauthn.create" | "webauthn.get", expected: Expected) {
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(clientDataJSON));
  } catch {
    throw malformed();
  }
  if (typeof data !== "object" || data === null) throw malformed();
  const fields = data as Record<string, unknown>;
  if (fields.type !== type) throw new ApiError(400, WRONG_CEREMONY);
  if (typeof fields.challenge !== "string" || fields.challenge.replace(/=+$/, "") !== expected.challenge)
    throw new ApiError(400, CHALLENGE_MISMATCH);
  // A credential made in a frame of another site says crossOrigin: it is that site's, not ours.
  if (fields.origin !== expected.origin || fields.crossOrigin === true) throw new ApiError(400, ORIGIN_MISMATCH);
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

interface AuthenticatorData {
  rpIdHash: Uint8Array;
  userPresent: boolean;
  userVerified: boolean;
  signCount: number;
  attested?: { aaguid: Uint8Array; credentialId: Uint8Array; publicKey: Uint8Array };
}

/** WebAuthn section 6.1: rpIdHash (32), flags (1), signCount (4), then attested credential data when AT is set. */
function parseAuthenticatorData(bytes: Uint8Array): AuthenticatorData {
  if (bytes.length < 37) throw malformed();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const flags = bytes[32]!;
  const data: AuthenticatorData = {
    rpIdHash: bytes.slice(0, 32),
    userPresent: (flags & FLAG_UP) !== 0,
    userVerified: (flags & FLAG_UV) !== 0,
    signCount: view.getUint32(33),
  };
  if (flags & FLAG_AT) {
    if (bytes.length < 55) throw malformed();
    const idLength = view.getUint16(53);
    if (idLength > 1023 || 55 + idLength > bytes.length) throw malformed();
    const keyStart = 55 + idLength;
    const { end } = decodeCborOrRefuse(bytes, keyStart);
    data.attested = {
      aaguid: bytes.slice(37, 53),
      credentialId: bytes.slice(55, keyStart),
      publicKey: bytes.slice(keyStart, end),
    };
  }
  return data;
}

function decodeCborOrRefuse(bytes: Uint8Array, offset = 0) {
  try {
    return decodeCbor(bytes, offset);
  } catch (error) {
    if (error instanceof CborError) throw malformed();
    throw error;
  }
}

async function checkAuthenticatorData(data: AuthenticatorData, expected: Expected) {
  if (!equalBytes(data.rpIdHash, await sha256(expected.rpId))) throw new ApiError(400, RP_ID_MISMATCH);
  if (!data.userPresent) throw new ApiError(400, USER_NOT_PRESENT);
}

/** A COSE key (RFC 9052 §7) as a WebCrypto key and the parameters its signatures verify with. */
async function importCoseKey(
  cose: Uint8Array,
): Promise<{ key: CryptoKey; algorithm: { name: string; hash?: string }; alg: number }> {
  const { value } = decodeCborOrRefuse(cose);
  if (!(value instanceof Map)) throw malformed();
  const field = (label: number): CborValue => value.get(label);
  const bytesOf = (label: number): Uint8Array => {
    const item = field(label);
    if (!(item instanceof Uint8Array)) throw new ApiError(400, UNSUPPORTED_KEY);
    return item;
  };
  const kty = field(1);
  const alg = field(3);
  try {
    if (kty === 2 && alg === -7 && field(-1) === 1) {
      const x = bytesOf(-2);
      const y = bytesOf(-3);
      if (x.length !== 32 || y.length !== 32) throw new ApiError(400, UNSUPPORTED_KEY);
      const point = new Uint8Array(65);
      point[0] = 4;
      point.set(x, 1);
      point.set(y, 33);
      const key = await crypto.subtle.importKey("raw", point, { name: "ECDSA", namedCurve: "P-256" }, false, [
        "verify",
      ]);
      return { key, algorithm: { name: "ECDSA", hash: "SHA-256" }, alg };
    }
    if (kty === 3 && alg === -257) {
      const jwk = { kty: "RSA", n: toBase64Url(bytesOf(-1)), e: toBase64Url(bytesOf(-2)), alg: "RS256", ext: true };
      const key = await crypto.subtle.importKey("jwk", jwk, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, [
        "verify",
      ]);
      return { key, algorithm: { name: "RSASSA-PKCS1-v1_5" }, alg };
    }
    if (kty === 1 && alg === -8 && field(-1) === 6) {
      const key = await crypto.subtle.importKey("raw", bytesOf(-2), { name: "Ed25519" }, false, ["verify"]);
      return { key, algorithm: { name: "Ed25519" }, alg };
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(400, UNSUPPORTED_KEY); // WebCrypto refused the key material
  }
  throw new ApiError(400, UNSUPPORTED_KEY);
}

/** ECDSA signatures come DER-encoded (WebAuthn section 6.5.6); WebCrypto takes r ‖ s, each 32 bytes. */
function derToRaw(der: Uint8Array): Uint8Array {
  const fail = () => new ApiError(400, BAD_SIGNATURE);
  let at = 0;
  const read = () => {
    if (at >= der.length) throw fail();
    return der[at++]!;
  };
  if (read() !== 0x30) throw fail();
  const total = read();
  if (total & 0x80 || at + total !== der.length) throw fail();
  const integer = () => {
    if (read() !== 0x02) throw fail();
    const length = read();
    if (length === 0 || length > 33 || at + length > der.length) throw fail();
    let value = der.subarray(at, at + length);
    at += length;
    while (value.length > 32 && value[0] === 0) value = value.subarray(1);
    if (value.length > 32) throw fail();
    const padded = new Uint8Array(32);
    padded.set(value, 32 - value.length);
    return padded;
  };
  const raw = new Uint8Array(64);
  raw.set(integer(), 0);
  raw.set(integer(), 32);
  if (at !== der.length) throw fail();
  return raw;
}

export interface RegisteredCredential {
  /** base64url of the credential id, as the browser's `PublicKeyCredential.id`. */
  id: string;
  /** The COSE key, as the authenticator gave it. */
  publicKey: Uint8Array;
  alg: number;
  signCount: number;
  /** The authenticator model's AAGUID in hex (zeros when it keeps it private): the UI's fingerprint. */
  aaguid: string;
  userVerified: boolean;
}

/** WebAuthn section 7.1: a new credential's attestation object answers the registration that was begun. */
export async function verifyRegistration(
  response: { id: string; clientDataJSON: string; attestationObject: string },
  expected: Expected,
): Promise<RegisteredCredential> {
  checkClientData(fromBase64Url(response.clientDataJSON), "webauthn.create", expected);
  const { value: attestation } = decodeCborOrRefuse(fromBase64Url(response.attestationObject));
  if (!(attestation instanceof Map)) throw malformed();
  const authData = attestation.get("authData");
  if (!(authData instanceof Uint8Array) || typeof attestation.get("fmt") !== "string") throw malformed();
  const data = parseAuthenticatorData(authData);
  await checkAuthenticatorData(data, expected);
  if (!data.attested) throw malformed();
  const id = toBase64Url(data.attested.credentialId);
  if (id !== response.id.replace(/=+$/, "")) throw malformed();
  const { alg } = await importCoseKey(data.attested.publicKey); // a key we could never verify is refused now
  return {
    id,
    publicKey: data.attested.publicKey,
    alg,
    signCount: data.signCount,
    aaguid: [...data.attested.aaguid].map((byte) => byte.toString(16).padStart(2, "0")).join(""),
    userVerified: data.userVerified,
  };
}

/** WebAuthn section 7.2: an assertion answers the sign-in that was begun and is signed by the stored key. */
export async function verifyAssertion(
  response: { clientDataJSON: string; authenticatorData: string; signature: string },
  expected: Expected,
  publicKey: Uint8Array,
): Promise<{ signCount: number; userVerified: boolean }> {
  const clientData = fromBase64Url(response.clientDataJSON);
  checkClientData(clientData, "webauthn.get", expected);
  const authData = fromBase64Url(response.authenticatorData);
  const data = parseAuthenticatorData(authData);
  await checkAuthenticatorData(data, expected);
  const { key, algorithm, alg } = await importCoseKey(publicKey);
  const signed = new Uint8Array(authData.length + 32);
  signed.set(authData, 0);
  signed.set(await sha256(clientData), authData.length);
  const raw = fromBase64Url(response.signature);
  const signature = alg === -7 ? derToRaw(raw) : raw;
  if (!(await crypto.subtle.verify(algorithm, key, signature, signed))) throw new ApiError(400, BAD_SIGNATURE);
  return { signCount: data.signCount, userVerified: data.userVerified };
}

/** The user handle in the options: the user id as 8 bytes, little-endian (OpenList's choice, internal/model/user.go). */
export function userHandle(userId: number): string {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(userId), true);
  return toBase64Url(bytes);
}

/** The user id a user handle names, or null when it is not one of ours. */
export function userIdOfHandle(handle: string): number | null {
  const bytes = fromBase64Url(handle);
  if (bytes.length !== 8) return null;
  const id = new DataView(bytes.buffer).getBigUint64(0, true);
  return id > 0n && id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : null;
}
