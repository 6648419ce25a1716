// Verified tokens are kept per isolate (docs/decisions.md D26.2): a kept token is still refused
// once it expires, before it is valid, and under another secret, with jose's messages.
import { afterEach, describe, expect, it, vi } from "vitest";
import { signToken, verifyToken } from "./tokens.ts";

const secret = new TextEncoder().encode("tokens-test-secret-tokens-test-secret-0123");
const claims = { username: "alice", pwd_ts: 1, sid: "device", jti: "token-id" };

afterEach(() => {
  vi.useRealTimers();
});

describe("verifyToken", () => {
  it("refuses a token it verified before once it expires", async () => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    const token = await signToken(secret, claims, 60, 1_700_000_000);
    expect(await verifyToken(secret, token)).toEqual(claims);
    expect(await verifyToken(secret, token)).toEqual(claims);
    vi.setSystemTime(1_700_000_059_999);
    expect(await verifyToken(secret, token)).toEqual(claims);
    vi.setSystemTime(1_700_000_060_000);
    await expect(verifyToken(secret, token)).rejects.toThrow("token is expired");
    await expect(verifyToken(secret, token)).rejects.toThrow("token is expired");
  });

  it("refuses a kept token before its not-before time, and accepts it from then", async () => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    const token = await signToken(secret, { ...claims, jti: "later" }, 600, 1_700_000_000);
    expect(await verifyToken(secret, token)).toEqual({ ...claims, jti: "later" });
    vi.setSystemTime(1_699_999_999_000);
    await expect(verifyToken(secret, token)).rejects.toThrow("token not active yet");
    vi.setSystemTime(1_700_000_000_000);
    expect(await verifyToken(secret, token)).toEqual({ ...claims, jti: "later" });
  });

  it("keeps a token for its secret only, and never keeps a refused one", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await signToken(secret, claims, 60, now);
    await verifyToken(secret, token);
    const other = new TextEncoder().encode("another-secret-another-secret-another-0123");
    await expect(verifyToken(other, token)).rejects.toThrow("token is invalidated");
    const tampered = `${token.slice(0, -2)}${token.endsWith("A") ? "B" : "A"}A`;
    await expect(verifyToken(secret, tampered)).rejects.toThrow();
    await expect(verifyToken(secret, tampered)).rejects.toThrow();
  });
});
