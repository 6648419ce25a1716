// The verification itself inside workerd, whose WebCrypto is the one that runs in production:
// credentials made once by the test authenticator (test/support/passkeys.ts, Node's crypto) for
// https://files.example.com, with each key type, verified here.
import { describe, expect, it } from "vitest";
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
