// The verification itself inside workerd, whose WebCrypto is the one that runs in production:
// credentials made once by the test authenticator (test/support/passkeys.ts, Node's crypto) for
// https://files.example.com, with each key type, verified here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { call, inTrips, signInAs } from "../../../test/support/workerd-client.ts";
import { ApiError } from "../../http/errors.ts";
import { BAD_SIGNATURE, RP_ID_MISMATCH } from "./messages.ts";
import { fromBase64Url, toBase64Url, verifyAssertion, verifyRegistration } from "./webauthn.ts";

const SITE = { origin: "https://files.example.com", rpId: "files.example.com" };
const REGISTRATION_CHALLENGE = "cmVnaXN0cmF0aW9uLWNoYWxsZW5nZQ";
const SIGN_IN_CHALLENGE = "c2lnbi1pbi1jaGFsbGVuZ2U";

const VECTORS = {
  es256: {
    registration: {
      clientDataJSON:
        "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiY21WbmFYTjBjbUYwYVc5dUxXTm9ZV3hzWlc1blpRIiwib3JpZ2luIjoiaHR0cHM6Ly9maWxlcy5leGFtcGxlLmNvbSIsImNyb3NzT3JpZ2luIjpmYWxzZX0",
      attestationObject:
        "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YViUZMUSZD4u9d9joHiFOARKaeoforVnBSec_eeSTLYw3KJFAAAAAAEjRWeJq83vASNFZ4mrze8AEHtkrYWfmGXs_dU-obwOVDmlAQIDJiABIVggrGiNVbeCdmL2qfbN5yGMuCSk125SxsJvrC2g5hDObqkiWCAY95g-Tc0N8h1MwbVrC-Nazgu-T1LK6Wpu9LalGZRBIQ",
      transports: ["internal"],
    },
    id: "e2SthZ-YZez91T6hvA5UOQ",
    assertion: {
      clientDataJSON:
        "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiYzJsbmJpMXBiaTFqYUdGc2JHVnVaMlUiLCJvcmlnaW4iOiJodHRwczovL2ZpbGVzLmV4YW1wbGUuY29tIiwiY3Jvc3NPcmlnaW4iOmZhbHNlfQ",
      authenticatorData: "ZMUSZD4u9d9joHiFOARKaeoforVnBSec_eeSTLYw3KIFAAAABw",
      signature: "MEYCIQCWT4uGLWhV1YGQulbfDE-JgUpPEpnOaN9zmr0CWnSVhAIhALEGl0ojWOwsCPGBD6bKZsOaYSjBURDGjL_OEtxcPSn9",
      userHandle: "AwAAAAAAAAA",
    },
  },
  rs256: {
    registration: {
      clientDataJSON:
        "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiY21WbmFYTjBjbUYwYVc5dUxXTm9ZV3hzWlc1blpRIiwib3JpZ2luIjoiaHR0cHM6Ly9maWxlcy5leGFtcGxlLmNvbSIsImNyb3NzT3JpZ2luIjpmYWxzZX0",
      attestationObject:
        "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVkBV2TFEmQ-LvXfY6B4hTgESmnqH6K1ZwUnnP3nkky2MNyiRQAAAAABI0VniavN7wEjRWeJq83vABAWehprc3GrqAj2L03uhPLwpAEDAzkBACBZAQCtw9BV4waT-xO96GSLFDbIwDNHCmb5uNP5LbAdLK325NSLvoNEwseGG_fuulgmxv5JbORRQpCPerKoJanG3xmwmElYqMJP7UjxTS9dqNsplVj0YnBWe6ygratCIk_1kbeDv4DZjwCMSk2zq_cw8fUfChszBD8Y6pfaRTnj_IbOtK7ZZC8KkN2ADgBxBO1ELDTnJ_-a9JmeCsmFVJmlOnFzVNvE7NxGBDdOD2HPyfMHbEmq4v3iAW7IXbyF6f4bu7f6N83LMXHCDp4hCusiyjdQ6wFizAIsJATMWMuE_7EhLwjDUQUWG6QzTWRqzqyvBOSps8nLxJ4oeLlXZ_Bbd4dTIUMBAAE",
      transports: ["internal"],
    },
    id: "Fnoaa3Nxq6gI9i9N7oTy8A",
    assertion: {
      clientDataJSON:
        "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiYzJsbmJpMXBiaTFqYUdGc2JHVnVaMlUiLCJvcmlnaW4iOiJodHRwczovL2ZpbGVzLmV4YW1wbGUuY29tIiwiY3Jvc3NPcmlnaW4iOmZhbHNlfQ",
      authenticatorData: "ZMUSZD4u9d9joHiFOARKaeoforVnBSec_eeSTLYw3KIFAAAABw",
      signature:
        "OsjWd3qmDmONYFlP0vRmC5jNSL2-yGbly1rK2z6QsFAl1e6YWUMnaFBZI4xqPX_knytYhL9uKyTRh-pro13fpGnfh-dRvcMCCR_9nzPD2w6elXUe8i3Waw7oH3jUQ25Km3JiQSMsd8V4N4haitfvNmRFu7VpwQHmY_WVT7RaO1txEWSLst7pG3xFXObnYBj9-dUi8gnriJob1wsWQ0K-6eZMnUkIUG-t1GL4G5uK2KxaNrUBWVIG82JfTpahR_dUW_Rdmm2cmo1PIJj5iQnenqeCQ9T8tPQ2xP_AabuUElSGnnJVyONyskctfy1cuEOOOpT2Q1tor3P96fQdvQTMzw",
      userHandle: "AwAAAAAAAAA",
    },
  },
  ed25519: {
    registration: {
      clientDataJSON:
        "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiY21WbmFYTjBjbUYwYVc5dUxXTm9ZV3hzWlc1blpRIiwib3JpZ2luIjoiaHR0cHM6Ly9maWxlcy5leGFtcGxlLmNvbSIsImNyb3NzT3JpZ2luIjpmYWxzZX0",
      attestationObject:
        "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVhxZMUSZD4u9d9joHiFOARKaeoforVnBSec_eeSTLYw3KJFAAAAAAEjRWeJq83vASNFZ4mrze8AED1SVuf38DG3DrrGlBCDclakAQEDJyAGIVgghGy7Md2EQ8U8aEBFTIumu77JTa8wys2Dan13qu0_jV8",
      transports: ["internal"],
    },
    id: "PVJW5_fwMbcOusaUEINyVg",
    assertion: {
      clientDataJSON:
        "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiYzJsbmJpMXBiaTFqYUdGc2JHVnVaMlUiLCJvcmlnaW4iOiJodHRwczovL2ZpbGVzLmV4YW1wbGUuY29tIiwiY3Jvc3NPcmlnaW4iOmZhbHNlfQ",
      authenticatorData: "ZMUSZD4u9d9joHiFOARKaeoforVnBSec_eeSTLYw3KIFAAAABw",
      signature: "2FlE8yQK9bLLRXpzf0z4mzsjODRkWSB7q_4QJu_AJEo1RK5pP8akLZZ2rOLS_HObrpA_ishXAFWwqlwE_NMIBw",
      userHandle: "AwAAAAAAAAA",
    },
  },
} as const;

const ALGORITHMS = { es256: -7, rs256: -257, ed25519: -8 } as const;

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return (error as ApiError).message;
}

describe("passkey verification in workerd", () => {
  it.each(Object.keys(VECTORS) as (keyof typeof VECTORS)[])("verifies a %s registration and sign-in", async (kind) => {
    const vector = VECTORS[kind];
    const registered = await verifyRegistration(
      { id: vector.id, ...vector.registration },
      { challenge: REGISTRATION_CHALLENGE, ...SITE },
    );
    expect(registered).toMatchObject({ id: vector.id, alg: ALGORITHMS[kind], signCount: 0, userVerified: true });
    expect(registered.aaguid).toBe("0123456789abcdef0123456789abcdef");

    const expected = { challenge: SIGN_IN_CHALLENGE, ...SITE };
    expect(await verifyAssertion(vector.assertion, expected, registered.publicKey)).toEqual({
      signCount: 7,
      userVerified: true,
    });

    const signature = fromBase64Url(vector.assertion.signature);
    signature[signature.length - 1]! ^= 1;
    const forged = { ...vector.assertion, signature: toBase64Url(signature) };
    expect(await refusal(verifyAssertion(forged, expected, registered.publicKey))).toBe(BAD_SIGNATURE);
    expect(
      await refusal(verifyAssertion(vector.assertion, { ...expected, rpId: "example.com" }, registered.publicKey)),
    ).toBe(RP_ID_MISMATCH);
  });
});

// The routes inside the Worker, with their round trips counted at the database endpoint, and an
// authenticator made of workerd's own WebCrypto (ES256): CBOR and DER written out by hand below.
const ORIGIN = "http://gatehouse.test";

type CborItem = number | string | Uint8Array | Map<number | string, CborItem>;

function cborHead(major: number, value: number): number[] {
  if (value < 24) return [(major << 5) | value];
  if (value < 0x100) return [(major << 5) | 24, value];
  return [(major << 5) | 25, value >> 8, value & 0xff];
}

function cbor(value: CborItem): Uint8Array {
  if (typeof value === "number") return Uint8Array.from(value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value));
  if (typeof value === "string") {
    const text = new TextEncoder().encode(value);
    return Uint8Array.from([...cborHead(3, text.length), ...text]);
  }
  if (value instanceof Uint8Array) return Uint8Array.from([...cborHead(2, value.length), ...value]);
  const parts: number[] = cborHead(5, value.size);
  for (const [key, item] of value) parts.push(...cbor(key), ...cbor(item));
  return Uint8Array.from(parts);
}

/** IEEE P1363 (r ‖ s), what WebCrypto signs, as the DER sequence authenticators send. */
function rawToDer(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const trimmed = [...bytes.subarray(start)];
    if (trimmed[0]! & 0x80) trimmed.unshift(0);
    return [0x02, trimmed.length, ...trimmed];
  };
  const body = [...integer(raw.subarray(0, 32)), ...integer(raw.subarray(32))];
  return Uint8Array.from([0x30, body.length, ...body]);
}

async function digest(data: Uint8Array | string) {
  return new Uint8Array(
    await crypto.subtle.digest("SHA-256", typeof data === "string" ? new TextEncoder().encode(data) : data),
  );
}

async function webCryptoAuthenticator() {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  const credentialId = crypto.getRandomValues(new Uint8Array(16));
  const cose = new Map<number, CborItem>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, fromBase64Url(jwk.x!)],
    [-3, fromBase64Url(jwk.y!)],
  ]);
  let counter = 0;
  const clientData = (type: string, challenge: string) =>
    new TextEncoder().encode(JSON.stringify({ type, challenge, origin: ORIGIN, crossOrigin: false }));
  const authData = async (rpId: string, attested: boolean) => {
    const head = [...(await digest(rpId)), attested ? 0x45 : 0x05, 0, 0, 0, attested ? 0 : ++counter];
    if (!attested) return Uint8Array.from(head);
    return Uint8Array.from([...head, ...new Uint8Array(16), 0, credentialId.length, ...credentialId, ...cbor(cose)]);
  };
  return {
    id: toBase64Url(credentialId),
    async register(options: { challenge: string; rp: { id: string } }) {
      const attestation = cbor(
        new Map<string, CborItem>([
          ["fmt", "none"],
          ["attStmt", new Map()],
          ["authData", await authData(options.rp.id, true)],
        ]),
      );
      return {
        id: toBase64Url(credentialId),
        response: {
          clientDataJSON: toBase64Url(clientData("webauthn.create", options.challenge)),
          attestationObject: toBase64Url(attestation),
        },
      };
    },
    async assert(options: { challenge: string; rpId: string }, userHandle: string) {
      const data = await authData(options.rpId, false);
      const client = clientData("webauthn.get", options.challenge);
      const signed = Uint8Array.from([...data, ...(await digest(client))]);
      const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, signed));
      return {
        id: toBase64Url(credentialId),
        response: {
          clientDataJSON: toBase64Url(client),
          authenticatorData: toBase64Url(data),
          signature: toBase64Url(rawToDer(raw)),
          userHandle,
        },
      };
    },
  };
}

describe("passkey routes in workerd", () => {
  beforeAll(async () => {
    await sql("DELETE FROM login_failures");
    await sql("UPDATE settings SET value = 'true' WHERE key = 'webauthn_login_enabled'");
  });
  afterAll(async () => {
    await sql("UPDATE settings SET value = 'false' WHERE key = 'webauthn_login_enabled'");
    await sql("DELETE FROM passkeys");
  });

  it("registers (2 round trips to begin with the guard, 3 to finish) and signs in (1 to begin, 4 to finish)", async () => {
    const admin = await signInAs("passkeys-workerd");
    const authenticator = await webCryptoAuthenticator();
    const begun = await inTrips(2, () =>
      call("/api/authn/webauthn_begin_registration", { headers: { Authorization: admin.token } }),
    );
    expect(begun.data.options.publicKey.rp.id).toBe("gatehouse.test");
    const registered = await inTrips(3, async () =>
      call("/api/authn/webauthn_finish_registration", {
        method: "POST",
        headers: { Authorization: admin.token, session: begun.data.session, "Content-Type": "application/json" },
        body: JSON.stringify(await authenticator.register(begun.data.options.publicKey)),
      }),
    );
    expect(registered).toEqual({ code: 200, message: "success", data: "Registered Successfully" });

    const login = await inTrips(1, () => call("/api/authn/webauthn_begin_login?username="));
    const signedIn = await inTrips(4, async () =>
      call("/api/authn/webauthn_finish_login?username=", {
        method: "POST",
        headers: { session: login.data.session, "Content-Type": "application/json" },
        body: JSON.stringify(
          await authenticator.assert(login.data.options.publicKey, begun.data.options.publicKey.user.id),
        ),
      }),
    );
    expect(signedIn.code, signedIn.message).toBe(200);
    const me = await call("/api/me", { headers: { Authorization: signedIn.data.token } });
    expect(me.data.username).toBe("admin");
  });
});
