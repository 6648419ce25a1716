// TOTP on the runtime's HMAC (totp.ts) against RFC 6238's published SHA-1 vectors, and the key URI
// against otpauth's, the library it replaced (a devDependency for the tests only).
import { Secret, TOTP } from "otpauth";
import { describe, expect, it } from "vitest";
import { base32Decode, base32Encode, hotp, keyUri, matchTotpStep, newTotpSecret, totpKey } from "./totp.ts";

// RFC 6238 appendix B: the SHA-1 seed is the 20 ASCII bytes "12345678901234567890", 8 digits.
const RFC_SECRET = base32Encode(new TextEncoder().encode("12345678901234567890"));
const RFC_VECTORS: [number, string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

describe("RFC 6238 vectors", () => {
  it("encodes the seed as the base32 every authenticator app reads", () => {
    expect(RFC_SECRET).toBe("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
  });

  it.each(RFC_VECTORS)("at %i s gives %s in 8 digits", async (seconds, code) => {
    const key = await totpKey(RFC_SECRET);
    expect(await hotp(key!, Math.floor(seconds / 30), 8)).toBe(code);
  });

  it.each(RFC_VECTORS)("at %i s accepts the 6-digit code of %s for that step", async (seconds, code) => {
    const step = Math.floor(seconds / 30);
    expect(await matchTotpStep(RFC_SECRET, code.slice(2), seconds * 1000)).toBe(step);
    // Leading and trailing blanks are trimmed, as before; lowercase secrets are the same secret.
    expect(await matchTotpStep(RFC_SECRET.toLowerCase(), ` ${code.slice(2)} `, seconds * 1000)).toBe(step);
  });
});

describe("matchTotpStep", () => {
  const now = 1_700_000_000_000;
  const step = Math.floor(now / 30_000);
  const codeAt = async (counter: number) => hotp((await totpKey(RFC_SECRET))!, counter);

  it("accepts one step either side and returns the step the code belongs to", async () => {
    expect(await matchTotpStep(RFC_SECRET, await codeAt(step - 1), now)).toBe(step - 1);
    expect(await matchTotpStep(RFC_SECRET, await codeAt(step + 1), now)).toBe(step + 1);
  });

  it("refuses two steps away, other lengths, non-digits and secrets that are not base32", async () => {
    expect(await matchTotpStep(RFC_SECRET, await codeAt(step - 2), now)).toBeNull();
    expect(await matchTotpStep(RFC_SECRET, await codeAt(step + 2), now)).toBeNull();
    const code = await codeAt(step);
    expect(await matchTotpStep(RFC_SECRET, code.slice(1), now)).toBeNull();
    expect(await matchTotpStep(RFC_SECRET, `${code}0`, now)).toBeNull();
    expect(await matchTotpStep(RFC_SECRET, "12345a", now)).toBeNull();
    expect(await matchTotpStep("not base32!", code, now)).toBeNull();
    expect(await matchTotpStep("", code, now)).toBeNull();
  });

  it("agrees with otpauth on codes for a fresh secret", async () => {
    const secret = newTotpSecret();
    const reference = new TOTP({ secret: Secret.fromBase32(secret) });
    for (const offset of [-1, 0, 1]) {
      const at = now + offset * 30_000;
      expect(await matchTotpStep(secret, reference.generate({ timestamp: at }), now)).toBe(step + offset);
    }
  });
});

describe("secrets and the key URI", () => {
  it("gives out 20 random bytes as 32 base32 characters without padding", () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(secret)).toHaveLength(20);
    expect(newTotpSecret()).not.toBe(secret);
  });

  it("round-trips every length, as RFC 4648 spells it", () => {
    // RFC 4648 section 10, padding dropped.
    const rfc = ["", "MY", "MZXQ", "MZXW6", "MZXW6YQ", "MZXW6YTB", "MZXW6YTBOI"];
    for (let n = 0; n <= 6; n++) {
      const bytes = new TextEncoder().encode("foobar".slice(0, n));
      expect(base32Encode(bytes)).toBe(rfc[n]);
      expect(base32Decode(rfc[n]!)).toEqual(bytes);
    }
    expect(base32Decode("MZXW1")).toBeNull();
  });

  it("writes the URI otpauth wrote, issuer in the label and as a parameter, the name percent-encoded", () => {
    const secret = newTotpSecret();
    for (const username of ["dave", "dé vé/ü?&=:", "名前".repeat(100)]) {
      const reference = new TOTP({
        issuer: "Gatehouse",
        label: username,
        algorithm: "SHA1",
        digits: 6,
        period: 30,
        secret: Secret.fromBase32(secret),
      });
      expect(keyUri(secret.toLowerCase(), username)).toBe(reference.toString());
    }
    expect(keyUri(secret, "dave")).toBe(
      `otpauth://totp/Gatehouse:dave?issuer=Gatehouse&secret=${secret}&algorithm=SHA1&digits=6&period=30`,
    );
  });
});
