// OpenSSH public keys as they appear in authorized_keys: `[options] <type> <base64 blob> [comment]`.
// The blob is decoded field by field (RFC 4253 §6.6, RFC 5656, RFC 8709, OpenSSH PROTOCOL.u2f), so a
// key whose declared type disagrees with its body, a truncated key or trailing bytes are refused.
// The fingerprint is OpenSSH's: `SHA256:` + unpadded base64 of the blob's SHA-256.

export const MAX_KEY_TEXT = 16_384;

export class InvalidKeyError extends Error {}

export interface PublicKey {
  type: string;
  fingerprint: string;
}

const ECDSA_CURVES: Record<string, { curve: string; webCrypto: string; pointBytes: number }> = {
  nistp256: { curve: "nistp256", webCrypto: "P-256", pointBytes: 65 },
  nistp384: { curve: "nistp384", webCrypto: "P-384", pointBytes: 97 },
  nistp521: { curve: "nistp521", webCrypto: "P-521", pointBytes: 133 },
};

/** The key types accepted, and how each one's blob is laid out after the type string. */
const KEY_TYPES: Record<string, (blob: BlobReader) => Promise<void>> = {
  "ssh-ed25519": async (blob) => ed25519Key(blob),
  "sk-ssh-ed25519@openssh.com": async (blob) => {
    ed25519Key(blob);
    blob.string("application");
  },
  "ssh-rsa": async (blob) => {
    const exponent = blob.mpint("exponent");
    const modulus = blob.mpint("modulus");
    if (exponent.length === 0 || (exponent.length === 1 && exponent[0]! < 3))
      throw new InvalidKeyError("the RSA exponent is invalid");
    const bits = bitLength(modulus);
    if (bits < 1024) throw new InvalidKeyError(`the RSA key has ${bits} bits; at least 1024 are required`);
    if (bits > 16384) throw new InvalidKeyError(`the RSA key has ${bits} bits; at most 16384 are accepted`);
  },
  "ecdsa-sha2-nistp256": (blob) => ecdsaKey(blob, "nistp256"),
  "ecdsa-sha2-nistp384": (blob) => ecdsaKey(blob, "nistp384"),
  "ecdsa-sha2-nistp521": (blob) => ecdsaKey(blob, "nistp521"),
  "sk-ecdsa-sha2-nistp256@openssh.com": async (blob) => {
    await ecdsaKey(blob, "nistp256");
    blob.string("application");
  },
};

const ACCEPTED_KEY_TYPES = Object.keys(KEY_TYPES);

export async function parsePublicKey(text: string): Promise<PublicKey> {
  const line = text.trim();
  if (line.length > MAX_KEY_TEXT) throw new InvalidKeyError(`the key is longer than ${MAX_KEY_TEXT} characters`);
  if (line === "" || line.includes("\n"))
    throw new InvalidKeyError("expected one public key line: <type> <base64> [comment]");
  const [type, encoded] = splitKeyLine(line);
  const layout = KEY_TYPES[type];
  if (!layout) {
    throw new InvalidKeyError(
      type.includes("-cert-v01@openssh.com")
        ? "certificates are not accepted, only plain public keys"
        : `unsupported key type ${type}; accepted: ${ACCEPTED_KEY_TYPES.join(", ")}`,
    );
  }
  const bytes = decodeBase64(encoded);
  const blob = new BlobReader(bytes);
  const declared = new TextDecoder().decode(blob.string("key type"));
  if (declared !== type) throw new InvalidKeyError(`the key says ${type} but its data is a ${declared} key`);
  await layout(blob);
  if (!blob.done()) throw new InvalidKeyError("the key data has trailing bytes");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return { type, fingerprint: `SHA256:${btoa(String.fromCharCode(...digest)).replace(/=+$/, "")}` };
}

/** Skips authorized_keys options (which may quote spaces) to the key type and its base64. */
function splitKeyLine(line: string): [string, string] {
  let rest = line;
  // Every blob starts with the uint32 length of its type name, which base64 writes as "AAAA":
  // if the second word looks like that, there are no options in front of the type.
  if (!/^\S+\s+AAAA/.test(rest)) {
    let quoted = false;
    let i = 0;
    for (; i < rest.length; i++) {
      if (rest[i] === '"' && rest[i - 1] !== "\\") quoted = !quoted;
      else if (!quoted && /\s/.test(rest[i]!)) break;
    }
    rest = rest.slice(i).trimStart();
  }
  const [type, encoded] = rest.split(/\s+/);
  if (!type || !encoded) throw new InvalidKeyError("expected one public key line: <type> <base64> [comment]");
  return [type, encoded];
}

function decodeBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0)
    throw new InvalidKeyError("the key data is not valid base64");
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function ed25519Key(blob: BlobReader): void {
  if (blob.string("public key").length !== 32) throw new InvalidKeyError("an Ed25519 public key must be 32 bytes");
}

async function ecdsaKey(blob: BlobReader, expected: string): Promise<void> {
  const { curve, webCrypto, pointBytes } = ECDSA_CURVES[expected]!;
  const named = new TextDecoder().decode(blob.string("curve name"));
  if (named !== curve) throw new InvalidKeyError(`the key names curve ${named} but its type needs ${curve}`);
  const point = blob.string("public point");
  if (point.length !== pointBytes || point[0] !== 0x04)
    throw new InvalidKeyError(`the ${curve} public point is malformed`);
  try {
    // WebCrypto refuses a point that is not on the curve.
    await crypto.subtle.importKey("raw", point as BufferSource, { name: "ECDSA", namedCurve: webCrypto }, false, [
      "verify",
    ]);
  } catch {
    throw new InvalidKeyError(`the ${curve} public point is not on the curve`);
  }
}

function bitLength(unsigned: Uint8Array): number {
  let i = 0;
  while (i < unsigned.length && unsigned[i] === 0) i++;
  if (i === unsigned.length) return 0;
  return (unsigned.length - i - 1) * 8 + (32 - Math.clz32(unsigned[i]!));
}

/** Reads SSH wire-format fields: uint32 length-prefixed strings and mpints. */
class BlobReader {
  #offset = 0;
  constructor(private readonly bytes: Uint8Array) {}

  string(field: string): Uint8Array {
    if (this.#offset + 4 > this.bytes.length) throw new InvalidKeyError(`the key data ends before its ${field}`);
    const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.#offset, 4);
    const length = view.getUint32(0);
    const start = this.#offset + 4;
    if (start + length > this.bytes.length) throw new InvalidKeyError(`the key data ends inside its ${field}`);
    this.#offset = start + length;
    return this.bytes.subarray(start, start + length);
  }

  /** A positive multiple-precision integer, without its sign byte. */
  mpint(field: string): Uint8Array {
    const value = this.string(field);
    if (value.length > 0 && value[0]! & 0x80) throw new InvalidKeyError(`the ${field} is negative`);
    return value;
  }

  done(): boolean {
    return this.#offset === this.bytes.length;
  }
}
