// Encryption at rest for TOTP secrets (docs/decisions.md D4.5): AES-256-GCM under a key derived
// with HKDF from a Worker secret (env.ts `otpSealingKeys`), so a copy of the database alone does
// not yield anyone's second factor. Stored form: `v1.<iv base64url>.<ciphertext base64url>`. Access
// keys' S3 secrets are sealed the same way under a key of their own purpose (docs/decisions.md D16.4).
import { fromBase64Url, toBase64Url } from "../../auth/encoding.ts";

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

/** What a sealed value is: each purpose derives its own key from the same Worker secret. */
export type SealPurpose = "otp-secret-v1" | "s3-secret-v1";

function keyFor(secret: Uint8Array, purpose: SealPurpose): Promise<CryptoKey> {
  const id = `${purpose}.${toBase64Url(secret)}`;
  let key = keys.get(id);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", secret as BufferSource, "HKDF", false, ["deriveKey"])
      .then((material) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: encoder.encode("gatehouse"), info: encoder.encode(purpose) },
          material,
          { name: "AES-GCM", length: 256 },
          false,
          ["encrypt", "decrypt"],
        ),
      );
    keys.set(id, key);
  }
  return key;
}

/** Seals under the first of `secrets`. */
export async function seal(
  secrets: Uint8Array[],
  plaintext: string,
  purpose: SealPurpose = "otp-secret-v1",
): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await keyFor(secrets[0]!, purpose),
    encoder.encode(plaintext),
  );
  return `v1.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(ciphertext))}`;
}

/** The plaintext, trying each of `secrets` in turn; null when none of them sealed it or it is damaged. */
export async function open(
  secrets: Uint8Array[],
  sealed: string,
  purpose: SealPurpose = "otp-secret-v1",
): Promise<string | null> {
  const [version, iv, ciphertext] = sealed.split(".");
  if (version !== "v1" || !iv || !ciphertext) return null;
  for (const secret of secrets) {
    try {
      const plaintext = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: fromBase64Url(iv) as BufferSource },
        await keyFor(secret, purpose),
        fromBase64Url(ciphertext) as BufferSource,
      );
      return new TextDecoder().decode(plaintext);
    } catch {
      // sealed under another key: try the next one
    }
  }
  return null;
}
