import { createHash } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { alistStoredHash, checkStaticHash, hashStaticHash, staticHash, verifyStaticHash } from "./password.ts";
import { newPermanentToken, randomAlphanumeric } from "./random.ts";

describe("AList static hash", () => {
  it("is the hex SHA-256 of `<password>-https://github.com/alist-org/alist`", async () => {
    const expected = createHash("sha256").update("pässword-https://github.com/alist-org/alist").digest("hex");
    expect(await staticHash("pässword")).toBe(expected);
  });
});

describe("stored passwords", () => {
  it("verifies the right static hash and refuses a wrong or empty one", async () => {
    const hash = await staticHash("s3cret");
    const stored = await hashStaticHash(hash);
    expect(stored).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyStaticHash(hash, stored)).toBe(true);
    expect(await verifyStaticHash(await staticHash("s3cret "), stored)).toBe(false);
    expect(await verifyStaticHash("", stored)).toBe(false);
  });

  it("salts every hash differently", async () => {
    const hash = await staticHash("same");
    expect(await hashStaticHash(hash)).not.toBe(await hashStaticHash(hash));
  });

  it("refuses an unknown user and a damaged or over-costly stored string", async () => {
    const hash = await staticHash("x");
    const stored = await hashStaticHash(hash);
    expect(await verifyStaticHash(hash, null)).toBe(false);
    expect(await verifyStaticHash(hash, stored.replace("pbkdf2-sha256", "md5"))).toBe(false);
    expect(await verifyStaticHash(hash, stored.replace("$100000$", "$100001$"))).toBe(false);
    expect(await verifyStaticHash(hash, "garbage")).toBe(false);
  });
});

describe("passwords imported from AList", () => {
  // What AList stores (AList v3.58.0 internal/model/user.go:177): sha256(static hash + "-" + salt),
  // computed here independently.
  const aList = (password: string, salt: string) => {
    const staticHex = createHash("sha256").update(`${password}-https://github.com/alist-org/alist`).digest("hex");
    return alistStoredHash(salt, createHash("sha256").update(`${staticHex}-${salt}`).digest("hex"));
  };

  it("verifies AList's salted hash and hands back a Gatehouse hash of the same password", async () => {
    const stored = aList("from alist", "Ab3dEf6hIj9lMn0p");
    expect(stored).toMatch(/^alist-sha256\$Ab3dEf6hIj9lMn0p\$[0-9a-f]{64}$/);
    const right = await checkStaticHash(await staticHash("from alist"), stored);
    expect(right.ok).toBe(true);
    expect(await verifyStaticHash(await staticHash("from alist"), right.upgrade)).toBe(true);
    expect(await checkStaticHash(await staticHash("from alist!"), stored)).toEqual({ ok: false, upgrade: null });
    expect(await checkStaticHash("", aList("", ""))).toEqual({ ok: false, upgrade: null });
    expect(await verifyStaticHash(await staticHash("from alist"), stored.replace("alist-sha256", "alist-md5"))).toBe(
      false,
    );
    expect(
      (await checkStaticHash(await staticHash("x"), await hashStaticHash(await staticHash("x")))).upgrade,
    ).toBeNull();
  });

  it("costs one PBKDF2 run, like a Gatehouse hash and an unknown user, right password or wrong", async () => {
    const deriveBits = vi.spyOn(crypto.subtle, "deriveBits");
    const runs = async (stored: string | null, password: string) => {
      deriveBits.mockClear();
      await checkStaticHash(await staticHash(password), stored);
      return deriveBits.mock.calls.map(([params]) => (params as { iterations: number }).iterations);
    };
    const legacy = aList("pw", "SaltSaltSaltSalt");
    const modern = await hashStaticHash(await staticHash("pw"));
    expect(await runs(legacy, "pw")).toEqual([100_000]);
    expect(await runs(legacy, "wrong")).toEqual([100_000]);
    expect(await runs(modern, "wrong")).toEqual([100_000]);
    expect(await runs(null, "pw")).toEqual([100_000]);
    deriveBits.mockRestore();
  });
});

describe("random values", () => {
  it("draws alphanumerics of the requested length", () => {
    const value = randomAlphanumeric(500);
    expect(value).toMatch(/^[A-Za-z0-9]{500}$/);
    expect(new Set(value).size).toBeGreaterThan(50);
  });

  it("makes permanent tokens in AList's format, each different", () => {
    const token = newPermanentToken();
    expect(token).toMatch(/^alist-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}[A-Za-z0-9]{64}$/);
    expect(newPermanentToken()).not.toBe(token);
  });
});
