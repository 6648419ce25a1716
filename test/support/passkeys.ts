// A software WebAuthn authenticator for tests, written from the WebAuthn Level 2 and CTAP2 texts
// rather than from src/: Node's crypto makes the keys and signatures, a small CBOR encoder the
// attestation object and COSE key. Every field can be made wrong, to test each refusal.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor>;

function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value]);
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value]);
  if (value < 0x10000) {
    const out = Buffer.alloc(3);
    out[0] = (major << 5) | 25;
    out.writeUInt16BE(value, 1);
    return out;
  }
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(value, 1);
  return out;
}

function encodeCbor(value: Cbor): Buffer {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") {
    const text = Buffer.from(value, "utf8");
    return Buffer.concat([head(3, text.length), text]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(encodeCbor)]);
  const parts = [head(5, value.size)];
  for (const [key, item] of value) parts.push(encodeCbor(key), encodeCbor(item));
  return Buffer.concat(parts);
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export type KeyKind = "es256" | "rs256" | "ed25519";

/** What a test may change in what the authenticator and browser produce. */
export interface Tamper {
  origin?: string;
  rpId?: string;
  challenge?: string;
  type?: string;
  crossOrigin?: boolean;
  flags?: number;
  /** The counter to sign with (default: one more than the last). */
  counter?: number;
  /** The userHandle to return; null leaves it out. */
  userHandle?: string | null;
  /** Flip a bit of the authenticator data after signing. */
  corrupt?: boolean;
}

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  readonly aaguid = Buffer.from("0123456789abcdef0123456789abcdef", "hex");
  counter = 0;
  userHandle: string | null = null;
  private readonly privateKey: KeyObject;
  private readonly cose: Map<number, Cbor>;

  constructor(readonly kind: KeyKind = "es256") {
    if (kind === "es256") {
      const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const jwk = pair.publicKey.export({ format: "jwk" });
      this.privateKey = pair.privateKey;
      this.cose = new Map<number, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, "base64url")],
        [-3, Buffer.from(jwk.y!, "base64url")],
      ]);
    } else if (kind === "rs256") {
      const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const jwk = pair.publicKey.export({ format: "jwk" });
      this.privateKey = pair.privateKey;
      this.cose = new Map<number, Cbor>([
        [1, 3],
        [3, -257],
        [-1, Buffer.from(jwk.n!, "base64url")],
        [-2, Buffer.from(jwk.e!, "base64url")],
      ]);
    } else {
      const pair = generateKeyPairSync("ed25519");
      const jwk = pair.publicKey.export({ format: "jwk" });
      this.privateKey = pair.privateKey;
      this.cose = new Map<number, Cbor>([
        [1, 1],
        [3, -8],
        [-1, 6],
        [-2, Buffer.from(jwk.x!, "base64url")],
      ]);
    }
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  private clientData(type: string, challenge: string, origin: string, tamper: Tamper): Buffer {
    return Buffer.from(
      JSON.stringify({
        type: tamper.type ?? type,
        challenge: tamper.challenge ?? challenge,
        origin: tamper.origin ?? origin,
        crossOrigin: tamper.crossOrigin ?? false,
      }),
    );
  }

  private authData(rpId: string, flags: number, counter: number, attested: boolean): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    const parts = [sha256(rpId), Buffer.from([flags | (attested ? FLAG_AT : 0)]), count];
    if (attested) {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(this.credentialId.length);
      parts.push(this.aaguid, length, this.credentialId, encodeCbor(this.cose));
    }
    return Buffer.concat(parts);
  }

  /** `navigator.credentials.create()` then `toJSON()`, for creation options as the server sent them. */
  register(
    options: { challenge: string; rp: { id: string }; user: { id: string } },
    origin: string,
    tamper: Tamper = {},
  ) {
    this.userHandle = options.user.id;
    const authData = this.authData(
      tamper.rpId ?? options.rp.id,
      tamper.flags ?? FLAG_UP | FLAG_UV,
      tamper.counter ?? this.counter,
      true,
    );
    const attestationObject = encodeCbor(
      new Map<string, Cbor>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(this.clientData("webauthn.create", options.challenge, origin, tamper)),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
      authenticatorAttachment: "platform",
      clientExtensionResults: {},
    };
  }

  /** `navigator.credentials.get()` then `toJSON()`, for request options as the server sent them. */
  assert(options: { challenge: string; rpId: string }, origin: string, tamper: Tamper = {}) {
    const counter = tamper.counter ?? this.counter + 1;
    this.counter = Math.max(this.counter, counter);
    const authData = this.authData(tamper.rpId ?? options.rpId, tamper.flags ?? FLAG_UP | FLAG_UV, counter, false);
    const clientData = this.clientData("webauthn.get", options.challenge, origin, tamper);
    const signed = Buffer.concat([authData, sha256(clientData)]);
    const signature =
      this.kind === "es256"
        ? sign("sha256", signed, { key: this.privateKey, dsaEncoding: "der" })
        : sign(this.kind === "rs256" ? "sha256" : null, signed, this.privateKey);
    if (tamper.corrupt) authData[authData.length - 1]! ^= 1;
    const userHandle = tamper.userHandle === undefined ? this.userHandle : tamper.userHandle;
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(userHandle === null ? {} : { userHandle }),
      },
      clientExtensionResults: {},
    };
  }
}
