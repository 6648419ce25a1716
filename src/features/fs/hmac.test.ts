// The signs' own HMAC-SHA256 (hmac.ts) against Node's, on keys and messages of every length around
// SHA-256's 64-byte blocks (the padding takes one block or two), and through signPath and
// signProblem as AList's format spells a sign.
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hmacKey, hmacSha256 } from "./hmac.ts";
import { signPath, signProblem } from "./sign.ts";
import { SIGN_INVALID } from "./messages.ts";

const nodeHmac = (key: Uint8Array, message: Uint8Array) => createHmac("sha256", key).update(message).digest("hex");
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("hmacSha256", () => {
  it("matches Node's HMAC-SHA256 for every length of key and message up to three blocks", () => {
    for (let keyLength = 1; keyLength <= 130; keyLength += 3) {
      const key = Uint8Array.from({ length: keyLength }, (_, i) => (i * 31 + keyLength) & 0xff);
      const prepared = hmacKey(key);
      for (let length = 0; length <= 192; length++) {
        const message = Uint8Array.from({ length }, (_, i) => (i * 7 + length) & 0xff);
        expect(hex(hmacSha256(prepared, message))).toBe(nodeHmac(key, message));
      }
    }
  });

  it("matches Node's HMAC-SHA256 on random keys and messages, long ones too", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.uint8Array({ maxLength: 5000 }),
        (key, message) => hex(hmacSha256(hmacKey(key), message)) === nodeHmac(key, message),
      ),
      { numRuns: 300 },
    );
  });
});

describe("signs", () => {
  it("are AList's: base64url with padding of HMAC-SHA256(token, path:expiry), then :expiry", async () => {
    const token = "alist-token-0123456789";
    const path = "/bench/0/a file ü.txt";
    const expected = createHmac("sha256", token).update(`${path}:0`).digest("base64url");
    expect(await signPath(token, path, 0)).toBe(`${expected}=:0`);
    const now = Date.UTC(2026, 11, 7);
    const expiry = Math.floor(now / 1000 + 4 * 3600);
    const timed = createHmac("sha256", token).update(`${path}:${expiry}`).digest("base64url");
    expect(await signPath(token, path, 4, now)).toBe(`${timed}=:${expiry}`);
    expect(await signProblem(token, path, `${timed}=:${expiry}`, now)).toBeNull();
    expect(await signProblem("another-token-0123456789", path, `${timed}=:${expiry}`, now)).toBe(SIGN_INVALID);
  });

  it("are never made without a token, as WebCrypto refused an empty key", async () => {
    await expect(signPath("", "/a", 0)).rejects.toThrow(/empty/);
  });
});
