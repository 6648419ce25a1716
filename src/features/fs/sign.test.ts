// Download signs against Node's HMAC-SHA256 as AList's format spells them: the kept key state
// (@noble/hashes, cloned per sign) and the signs kept with it must give the same sign on every
// call, for any token and path.
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SIGN_INVALID } from "./messages.ts";
import { signPath, signProblem } from "./sign.ts";

const nodeSign = (token: string, path: string, expiry: number) =>
  `${createHmac("sha256", token).update(`${path}:${expiry}`).digest("base64url").padEnd(44, "=")}:${expiry}`;

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

  it("match Node's for random tokens and paths, the same on every call, tokens alternating", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 200, unit: "grapheme" }),
        fc.string({ minLength: 1, maxLength: 200, unit: "grapheme" }),
        fc.string({ maxLength: 2000, unit: "grapheme" }),
        async (token, other, path) => {
          expect(await signPath(token, path, 0)).toBe(nodeSign(token, path, 0));
          expect(await signPath(other, path, 0)).toBe(nodeSign(other, path, 0));
          expect(await signPath(token, path, 0)).toBe(nodeSign(token, path, 0));
          expect(await signPath(token, `${path}/`, 0)).toBe(nodeSign(token, `${path}/`, 0));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("kept by path and expiry: another expiry is signed anew, and past the bound every sign still matches", async () => {
    const token = "kept-signs-token";
    const now = Date.UTC(2026, 11, 7, 12);
    const first = await signPath(token, "/a/b.txt", 4, now);
    const hourLater = await signPath(token, "/a/b.txt", 4, now + 3600_000);
    expect(first).not.toBe(hourLater);
    expect(hourLater).toBe(nodeSign(token, "/a/b.txt", Math.floor(now / 1000) + 5 * 3600));
    // More paths than the isolate keeps signs for (4,096): the bound empties the kept ones.
    const paths = Array.from({ length: 5000 }, (_, i) => `/folder/${i}.bin`);
    for (const path of paths) await signPath(token, path, 0);
    for (const path of [0, 4095, 4096, 4999].map((i) => `/folder/${i}.bin`))
      expect(await signPath(token, path, 0)).toBe(nodeSign(token, path, 0));
    expect(await signProblem(token, "/a/b.txt", first, now)).toBeNull();
    // A path too long to be kept is signed each time, the same way.
    const long = `/${"x".repeat(600)}.bin`;
    expect(await signPath(token, long, 0)).toBe(nodeSign(token, long, 0));
    expect(await signPath(token, long, 0)).toBe(nodeSign(token, long, 0));
  });

  it("are never made without a token, as WebCrypto refused an empty key", async () => {
    await expect(signPath("", "/a", 0)).rejects.toThrow(/empty/);
  });
});
