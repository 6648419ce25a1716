import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { deviceSessions, loginFailures, pendingOtpEnrolments, users } from "../../db/schema.ts";
import { aListStaticHash, getAs, login, postJson, totpCode } from "../../../test/support/auth.ts";
import { createUnitFixture, readEnvelope, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let daveId: number;
beforeAll(async () => {
  fixture = await createUnitFixture();
  const [dave] = await fixture.db
    .insert(users)
    .values({ username: "dave", passwordHash: await hashStaticHash(await staticHash("dave pw")), roleIds: [] })
    .returning();
  daveId = dave!.id;
});
afterAll(() => fixture.close());
// Every request here comes from one address; wrong codes on purpose must not lock later tests out.
beforeEach(async () => {
  await fixture.db.delete(loginFailures);
});

const dave = { username: "dave", password: "dave pw" };
const authed = (token: string) => ({ Authorization: token });

async function enrol(token: string): Promise<string> {
  const generated = await readEnvelope(
    await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: authed(token) }),
  );
  const { secret } = generated.data as { secret: string };
  const verified = await readEnvelope(
    await postJson(fixture, "/api/auth/2fa/verify", { code: totpCode(secret), secret }, authed(token)),
  );
  expect(verified).toEqual({ code: 200, message: "success", data: null });
  return secret;
}

describe("POST /api/auth/2fa/generate", () => {
  it("issues a base32 secret and an SVG QR code, and stores the secret sealed, not in plain text", async () => {
    const token = (await login(fixture, dave)).data!.token;
    const body = await readEnvelope(
      await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: authed(token) }),
    );
    expect(body.code).toBe(200);
    const { qr, secret } = body.data as { qr: string; secret: string };
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(qr).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(qr.split(",")[1]!, "base64").toString()).toMatch(/^(<\?xml[^>]*>\s*)?<svg[\s\S]*<\/svg>$/);
    const [pending] = await fixture.db
      .select()
      .from(pendingOtpEnrolments)
      .where(eq(pendingOtpEnrolments.userId, daveId));
    expect(pending!.secret).toMatch(/^v1\./);
    expect(pending!.secret).not.toContain(secret);
  });

  it("needs a signed-in caller", async () => {
    expect((await readEnvelope(await fixture.request("/api/auth/2fa/generate", { method: "POST" }))).code).toBe(401);
  });
});

describe("POST /api/auth/2fa/verify", () => {
  it("refuses a secret this server did not issue to this user", async () => {
    const token = (await login(fixture, dave)).data!.token;
    const made_up = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    const body = await readEnvelope(
      await postJson(fixture, "/api/auth/2fa/verify", { code: totpCode(made_up), secret: made_up }, authed(token)),
    );
    expect(body).toEqual({
      code: 400,
      message: "this 2FA secret was not issued to you or has expired; generate a new one",
      data: null,
    });
  });

  it("refuses an issued secret after 10 minutes", async () => {
    const token = (await login(fixture, dave)).data!.token;
    const { secret } = (
      await readEnvelope(await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: authed(token) }))
    ).data as { secret: string };
    await fixture.db
      .update(pendingOtpEnrolments)
      .set({ createdAt: Math.floor(Date.now() / 1000) - 601 })
      .where(eq(pendingOtpEnrolments.userId, daveId));
    expect(
      (
        await readEnvelope(
          await postJson(fixture, "/api/auth/2fa/verify", { code: totpCode(secret), secret }, authed(token)),
        )
      ).code,
    ).toBe(400);
  });

  it("refuses a wrong code and a missing field", async () => {
    const token = (await login(fixture, dave)).data!.token;
    const { secret } = (
      await readEnvelope(await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: authed(token) }))
    ).data as { secret: string };
    const wrong = String((Number(totpCode(secret)) + 1) % 1_000_000).padStart(6, "0");
    expect(
      await readEnvelope(await postJson(fixture, "/api/auth/2fa/verify", { code: wrong, secret }, authed(token))),
    ).toEqual({ code: 400, message: "Invalid 2FA code", data: null });
    const missing = await readEnvelope(await postJson(fixture, "/api/auth/2fa/verify", { secret }, authed(token)));
    expect(missing.code).toBe(400);
    expect(missing.message).toMatch(/^code: /);
    const [user] = await fixture.db.select().from(users).where(eq(users.id, daveId));
    expect(user!.otpSecret).toBeNull();
  });
});

describe("signing in with two-factor on", () => {
  let secret: string;
  beforeAll(async () => {
    secret = await enrol((await login(fixture, dave)).data!.token);
  });

  it("reports otp true, and keeps the secret sealed at rest", async () => {
    const token = (await login(fixture, { ...dave, otp_code: totpCode(secret, Date.now(), 1) })).data!.token;
    expect((await getAs(fixture, "/api/me", token)).data.otp).toBe(true);
    const [user] = await fixture.db.select().from(users).where(eq(users.id, daveId));
    expect(user!.otpSecret).toMatch(/^v1\./);
    expect(user!.otpSecret).not.toContain(secret);
  });

  it("asks for the code with 402 when it is missing or wrong, on both sign-in endpoints", async () => {
    expect(await login(fixture, dave)).toEqual({ code: 402, message: "Invalid 2FA code", data: null });
    expect(await login(fixture, { ...dave, otp_code: "000000" === totpCode(secret) ? "111111" : "000000" })).toEqual({
      code: 402,
      message: "Invalid 2FA code",
      data: null,
    });
    const hashed = await readEnvelope(
      await postJson(fixture, "/api/auth/login/hash", { username: "dave", password: aListStaticHash("dave pw") }),
    );
    expect(hashed).toEqual({ code: 402, message: "Invalid 2FA code", data: null });
  });

  it("accepts a code once", async () => {
    // Enrolment and the test above used up the current steps; forget them rather than wait 30 s.
    await fixture.db.update(users).set({ otpLastStep: 0 }).where(eq(users.id, daveId));
    const code = totpCode(secret);
    const first = await login(fixture, { ...dave, otp_code: code }, { "Client-Id": "one" });
    const sessionsBefore = await fixture.db.select().from(deviceSessions);
    const replay = await login(fixture, { ...dave, otp_code: code }, { "Client-Id": "two" });
    expect(first.code).toBe(200);
    expect(replay).toEqual({ code: 402, message: "Invalid 2FA code", data: null });
    expect(await fixture.db.select().from(deviceSessions)).toEqual(sessionsBefore);
    // A replay is a failed attempt like a wrong code: it stays counted toward the lockout.
    const failures = await fixture.db
      .select({ count: loginFailures.count })
      .from(loginFailures)
      .where(eq(loginFailures.subject, "dave"));
    expect(failures).toEqual([{ count: 1 }]);
  });
});

describe("secrets never leave the server", () => {
  beforeAll(async () => {
    await fixture.db
      .insert(users)
      .values({ username: "francis", passwordHash: await hashStaticHash(await staticHash("frank pw")), roleIds: [] });
  });

  it("no reply of the auth endpoints carries a password hash, salt or 2FA secret", async () => {
    const token = (await login(fixture, { username: "francis", password: "frank pw" })).data!.token;
    const replies = [
      await (await fixture.request("/api/me", { headers: authed(token) })).text(),
      await (await postJson(fixture, "/api/auth/login", { username: "francis", password: "frank pw" })).text(),
      await (await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: authed(token) })).text(),
    ];
    const stored = await fixture.db.select().from(users);
    for (const reply of replies) {
      expect(reply).not.toMatch(/pbkdf2|password_hash|otp_secret|"salt"/);
      for (const user of stored) {
        expect(reply).not.toContain(user.passwordHash.split("$")[3]);
        if (user.otpSecret) expect(reply).not.toContain(user.otpSecret);
      }
    }
  });
});

describe("rotating keys with two-factor on", () => {
  const OTP_KEY = "otp-encryption-key-otp-encryption-key-0123";
  const NEW_JWT_SECRET = "a-brand-new-jwt-secret-a-brand-new-jwt-0123";
  let secret: string;

  const signInWith = async (env: Record<string, string | undefined>, otp_code?: string) =>
    readEnvelope(
      await fixture.request(
        "/api/auth/login",
        {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ username: "olga", password: "olga pw", otp_code }),
        },
        env,
      ),
    );

  beforeAll(async () => {
    await fixture.db
      .insert(users)
      .values({ username: "olga", passwordHash: await hashStaticHash(await staticHash("olga pw")), roleIds: [] });
    // Enrolled while only JWT_SECRET existed: sealed under it.
    secret = await enrol((await login(fixture, { username: "olga", password: "olga pw" })).data!.token);
  });
  beforeEach(async () => {
    await fixture.db.update(users).set({ otpLastStep: 0 }).where(eq(users.username, "olga"));
  });

  it("still opens secrets sealed under JWT_SECRET once OTP_ENCRYPTION_KEY is set", async () => {
    expect((await signInWith({ OTP_ENCRYPTION_KEY: OTP_KEY }, totpCode(secret))).code).toBe(200);
  });

  it("seals new enrolments under OTP_ENCRYPTION_KEY, so JWT_SECRET can rotate without losing them", async () => {
    const token = ((await signInWith({ OTP_ENCRYPTION_KEY: OTP_KEY }, totpCode(secret))).data as { token: string })
      .token;
    const generated = await readEnvelope(
      await fixture.request(
        "/api/auth/2fa/generate",
        { method: "POST", headers: { Authorization: token } },
        { OTP_ENCRYPTION_KEY: OTP_KEY },
      ),
    );
    const fresh = (generated.data as { secret: string }).secret;
    const verified = await readEnvelope(
      await fixture.request(
        "/api/auth/2fa/verify",
        {
          method: "POST",
          headers: { Authorization: token, "Content-Type": "application/json" },
          body: JSON.stringify({ code: totpCode(fresh), secret: fresh }),
        },
        { OTP_ENCRYPTION_KEY: OTP_KEY },
      ),
    );
    expect(verified.code).toBe(200);
    await fixture.db.update(users).set({ otpLastStep: 0 }).where(eq(users.username, "olga"));

    // JWT_SECRET rotates: the old login token dies, the second factor survives.
    const rotated = { OTP_ENCRYPTION_KEY: OTP_KEY, JWT_SECRET: NEW_JWT_SECRET };
    expect(
      (await readEnvelope(await fixture.request("/api/me", { headers: { Authorization: token } }, rotated))).message,
    ).toBe("token is invalidated");
    expect((await signInWith(rotated, totpCode(fresh))).code).toBe(200);
  });

  it("answers a clear error, not a wrong-code loop, when no key opens the secret", async () => {
    const body = await signInWith({ JWT_SECRET: NEW_JWT_SECRET, OTP_ENCRYPTION_KEY: undefined }, totpCode(secret));
    expect(body.code).toBe(500);
    expect(body.message).toMatch(
      /^the 2FA secret of this user cannot be decrypted \(was OTP_ENCRYPTION_KEY or JWT_SECRET changed\?\)/,
    );
  });

  it("refuses a short OTP_ENCRYPTION_KEY as a configuration error", async () => {
    const body = await signInWith({ OTP_ENCRYPTION_KEY: "short" }, totpCode(secret));
    expect(body).toMatchObject({
      code: 500,
      message: "server misconfigured: OTP_ENCRYPTION_KEY must be at least 32 characters",
    });
  });
});

describe("one code, two sign-ins at once", () => {
  it("lets exactly one of two parallel sign-ins with the same valid code in; the other is a replay", async () => {
    const [rita] = await fixture.db
      .insert(users)
      .values({ username: "rita", passwordHash: await hashStaticHash(await staticHash("rita pw")), roleIds: [] })
      .returning();
    const token = (await login(fixture, { username: "rita", password: "rita pw" })).data!.token;
    const secret = await enrol(token);
    // The enrolment used the current step; the next one is still accepted (window of one step).
    const code = totpCode(secret, Date.now(), 1);
    const replies = await Promise.all(
      ["a", "b"].map((device) =>
        login(fixture, { username: "rita", password: "rita pw", otp_code: code }, { "Client-Id": `race-${device}` }),
      ),
    );
    expect(replies.map((reply) => reply.code).sort()).toEqual([200, 402]);
    expect(replies.find((reply) => reply.code === 402)).toEqual({ code: 402, message: "Invalid 2FA code", data: null });
    const sessions = await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.userId, rita!.id));
    // The enrolling sign-in's session and the winner's, not the loser's.
    expect(sessions).toHaveLength(2);
  });
});
