import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { deviceSessions, loginFailures, users } from "../../db/schema.ts";
import { grantSession, MAX_SESSIONS_PER_USER } from "./store.ts";
import { aListStaticHash, getAs, login, postJson } from "../../../test/support/auth.ts";
import { createUnitFixture, readEnvelope, TEST_ADMIN_PASSWORD, type UnitFixture } from "../../../test/support/unit.ts";

const LOCKED =
  "Too many unsuccessful sign-in attempts have been made using an incorrect username or password, Try again later.";
let fixture: UnitFixture;
beforeAll(async () => {
  fixture = await createUnitFixture();
  await fixture.db
    .insert(users)
    .values({ username: "bob", passwordHash: await hashStaticHash(await staticHash("bob's password")), roleIds: [] });
});
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(loginFailures);
  await fixture.db.delete(deviceSessions);
});

const admin = { username: "admin", password: TEST_ADMIN_PASSWORD };
const from = (ip: string, extra: Record<string, string> = {}) => ({ "CF-Connecting-IP": ip, ...extra });

describe("POST /api/auth/login", () => {
  it("returns a token and a device key, and opens an active session with the masked address", async () => {
    const body = await login(
      fixture,
      admin,
      from("203.0.113.77", { "Client-Id": "laptop", "User-Agent": "AList-Web/3.58" }),
    );
    expect(body.code).toBe(200);
    expect(body.message).toBe("success");
    expect(body.data!.token.split(".")).toHaveLength(3);
    expect(body.data!.device_key).toMatch(/^[0-9a-f]{32}$/);
    const [session] = await fixture.db
      .select()
      .from(deviceSessions)
      .where(eq(deviceSessions.deviceKey, body.data!.device_key));
    expect(session).toMatchObject({ userId: 2, status: 0, ip: "203.*.*.77", userAgent: "AList-Web/3.58" });
    expect(Math.abs(session!.lastActive - Date.now() / 1000)).toBeLessThan(5);
  });

  it("answers an unknown user and a wrong password with the same message and code", async () => {
    const unknown = await login(fixture, { username: "nobody", password: "x" });
    const wrong = await login(fixture, { username: "admin", password: "not it" });
    expect(unknown).toEqual({ code: 400, message: "username or password is incorrect", data: null });
    expect(wrong).toEqual(unknown);
    expect(await fixture.db.select().from(deviceSessions)).toEqual([]);
  });

  it("does not let anyone sign in as the guest account", async () => {
    expect(await login(fixture, { username: "guest", password: "guest" })).toEqual({
      code: 400,
      message: "username or password is incorrect",
      data: null,
    });
  });

  it("refuses a disabled user with the right password, and does not count it as a failure", async () => {
    await fixture.db.update(users).set({ disabled: true }).where(eq(users.username, "bob"));
    const body = await login(fixture, { username: "bob", password: "bob's password" }, from("198.51.100.40"));
    await fixture.db.update(users).set({ disabled: false }).where(eq(users.username, "bob"));
    expect(body).toEqual({ code: 403, message: "Current user is disabled, replace please", data: null });
    expect((await fixture.db.select().from(loginFailures)).filter((r) => r.count > 0)).toEqual([]);
  });

  it("answers a user deleted while signing in like an unknown one, not with a foreign-key error", async () => {
    const [gone] = await fixture.db
      .insert(users)
      .values({ username: "gone", passwordHash: "x", roleIds: [] })
      .returning();
    await fixture.db.delete(users).where(eq(users.id, gone!.id));
    const grant = {
      userId: gone!.id,
      username: "gone",
      deviceKey: "k".repeat(32),
      tokenId: "t",
      userAgent: "",
      maskedIp: "",
      clientIp: "203.0.113.1",
      now: 1,
      otpStep: null,
      maxOtherActive: null,
      maxActive: null,
    };
    expect(await grantSession(fixture.db, grant)).toBe("user_gone");
    expect(await grantSession(fixture.db, { ...grant, otpStep: 5, maxOtherActive: 2 })).toBe("user_gone");
    expect(await grantSession(fixture.db, { ...grant, maxActive: 1 })).toBe("user_gone");
    expect(await fixture.db.select().from(deviceSessions)).toEqual([]);
  });

  it("sets the token lifetime from TOKEN_EXPIRES_IN_HOURS", async () => {
    const response = await fixture.request(
      "/api/auth/login",
      { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(admin) },
      { TOKEN_EXPIRES_IN_HOURS: "2" },
    );
    const { token } = (await readEnvelope(response)).data as { token: string };
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(claims.exp - claims.iat).toBe(7200);
    expect(claims).toMatchObject({ username: "admin", pwd_ts: 0 });
  });

  it("answers a configuration error, not a token signed with some default key, when JWT_SECRET is missing", async () => {
    const response = await fixture.request(
      "/api/auth/login",
      { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(admin) },
      { JWT_SECRET: undefined },
    );
    const body = await readEnvelope(response);
    expect(body.code).toBe(500);
    expect(body.message).toMatch(/^server misconfigured: JWT_SECRET must be set/);
  });
});

describe("POST /api/auth/login/hash", () => {
  it("accepts AList's static hash of the password, in either case", async () => {
    const hash = aListStaticHash(TEST_ADMIN_PASSWORD);
    for (const password of [hash, hash.toUpperCase()]) {
      const body = (await readEnvelope(
        await postJson(fixture, "/api/auth/login/hash", { username: "admin", password }),
      )) as { code: number };
      expect(body.code).toBe(200);
    }
  });

  it("refuses the plain password there", async () => {
    const body = await readEnvelope(await postJson(fixture, "/api/auth/login/hash", admin));
    expect(body).toEqual({ code: 400, message: "username or password is incorrect", data: null });
  });
});

describe("bad sign-in input", () => {
  it.each([
    ["a missing username", { password: "x" }, /^username: /],
    ["a numeric username", { username: 7, password: "x" }, /^username: .*expected string/],
    ["an empty username", { username: "", password: "x" }, /^username: /],
    ["a missing password", { username: "admin" }, /^password: /],
    ["an object as otp_code", { username: "admin", password: "x", otp_code: {} }, /^otp_code: /],
  ])("answers %s with code 400 naming the field", async (_, body, message) => {
    const envelope = await readEnvelope(await postJson(fixture, "/api/auth/login", body));
    expect(envelope.code).toBe(400);
    expect(envelope.message).toMatch(message);
    expect(envelope.data).toBeNull();
  });

  it.each([
    ["malformed JSON", '{"username": "admin", '],
    ["an empty body", ""],
    ["a JSON array", "[]"],
  ])("answers %s with code 400", async (_, raw) => {
    expect((await readEnvelope(await postJson(fixture, "/api/auth/login", raw))).code).toBe(400);
  });

  it("answers GET on the login path with 405", async () => {
    expect((await readEnvelope(await fixture.request("/api/auth/login"))).code).toBe(405);
  });
});

describe("lockout", () => {
  const failFrom = async (ip: string, username = "admin") => login(fixture, { username, password: "wrong" }, from(ip));

  it("locks an address out after 5 failures, even with the right password, and not another address", async () => {
    for (let i = 0; i < 5; i++) expect((await failFrom("198.51.100.1")).code).toBe(400);
    expect(await login(fixture, admin, from("198.51.100.1"))).toEqual({ code: 429, message: LOCKED, data: null });
    expect((await login(fixture, admin, from("198.51.100.2"))).code).toBe(200);
  });

  it("locks a username out of addresses that failed, never out of a clean one", async () => {
    for (let i = 1; i <= 5; i++) await failFrom(`192.0.2.${i}`);
    expect((await login(fixture, admin, from("192.0.2.1"))).code).toBe(429);
    expect((await login(fixture, admin, from("192.0.2.200"))).code).toBe(200);
    // Success clears the username's count, so the addresses that failed once may try again.
    expect((await login(fixture, admin, from("192.0.2.1"))).code).toBe(200);
  });

  it("ends when the window ends", async () => {
    for (let i = 0; i < 5; i++) await failFrom("198.51.100.9");
    expect((await login(fixture, admin, from("198.51.100.9"))).code).toBe(429);
    await fixture.db.update(loginFailures).set({ expiresAt: Math.floor(Date.now() / 1000) - 1 });
    expect((await login(fixture, admin, from("198.51.100.9"))).code).toBe(200);
    expect(
      await fixture.db
        .select()
        .from(loginFailures)
        .where(and(eq(loginFailures.scope, "ip"), eq(loginFailures.subject, "198.51.100.9"))),
    ).toEqual([]);
  });

  it("locks an address out after 5 failures spread over 5 usernames; 4 are not enough", async () => {
    for (const name of ["u1", "u2", "u3", "u4"]) expect((await failFrom("198.51.100.30", name)).code).toBe(400);
    expect((await login(fixture, admin, from("198.51.100.30"))).code).toBe(200);
    for (const name of ["u1", "u2", "u3", "u4", "u5"]) expect((await failFrom("198.51.100.31", name)).code).toBe(400);
    expect(await login(fixture, admin, from("198.51.100.31"))).toEqual({ code: 429, message: LOCKED, data: null });
  });

  it("checks at most 5 of many parallel guesses from one address; the rest are refused unchecked", async () => {
    const replies = await Promise.all(Array.from({ length: 12 }, () => failFrom("198.51.100.32")));
    expect(replies.filter((r) => r.code === 400)).toHaveLength(5);
    expect(replies.filter((r) => r.code === 429)).toHaveLength(7);
    // Refused attempts neither count further nor keep the window moving.
    const [row] = await fixture.db
      .select()
      .from(loginFailures)
      .where(and(eq(loginFailures.scope, "ip"), eq(loginFailures.subject, "198.51.100.32")));
    expect(row!.count).toBe(6);
  });

  it("counts failures per address in the database", async () => {
    await failFrom("198.51.100.20");
    await failFrom("198.51.100.20", "nobody");
    const rows = await fixture.db.select().from(loginFailures);
    expect(rows.find((r) => r.scope === "ip")).toMatchObject({ subject: "198.51.100.20", count: 2 });
    expect(
      rows
        .filter((r) => r.scope === "user")
        .map((r) => [r.subject, r.count])
        .sort(),
    ).toEqual([
      ["admin", 1],
      ["nobody", 1],
    ]);
  });
});

describe("the caller's address", () => {
  const signInAs = (headers: Record<string, string>, password: string, trust: string | undefined) =>
    fixture
      .request(
        "/api/auth/login",
        {
          method: "POST",
          headers: { "Content-Type": "application/json", ...headers },
          body: JSON.stringify({ username: "admin", password }),
        },
        { TRUST_CF_CONNECTING_IP: trust },
      )
      .then(readEnvelope);

  for (const trust of [undefined, "false", "1"]) {
    it(`ignores CF-Connecting-IP unless TRUST_CF_CONNECTING_IP is "true" (here ${trust}): rotating it buys no guesses`, async () => {
      for (let i = 0; i < 5; i++)
        expect((await signInAs({ "CF-Connecting-IP": `203.0.113.${i}` }, "wrong", trust)).code).toBe(400);
      expect((await signInAs({ "CF-Connecting-IP": "203.0.113.99" }, TEST_ADMIN_PASSWORD, trust)).code).toBe(429);
      expect(
        await fixture.db
          .select({ scope: loginFailures.scope, subject: loginFailures.subject })
          .from(loginFailures)
          .where(eq(loginFailures.scope, "ip")),
      ).toEqual([{ scope: "ip", subject: "local" }]);
    });
  }

  it("never believes X-Forwarded-For or X-Real-IP, which any client sends", async () => {
    for (let i = 0; i < 5; i++) {
      expect(
        (
          await signInAs(
            { "CF-Connecting-IP": "198.51.100.60", "X-Forwarded-For": `10.0.0.${i}`, "X-Real-IP": `10.1.0.${i}` },
            "wrong",
            "true",
          )
        ).code,
      ).toBe(400);
    }
    expect(
      (
        await signInAs(
          { "CF-Connecting-IP": "198.51.100.60", "X-Forwarded-For": "10.9.9.9" },
          TEST_ADMIN_PASSWORD,
          "true",
        )
      ).code,
    ).toBe(429);
    // Untrusted, they do not stand in for the missing address either.
    await fixture.db.delete(loginFailures);
    for (let i = 0; i < 5; i++)
      expect((await signInAs({ "X-Forwarded-For": `10.2.0.${i}` }, "wrong", "false")).code).toBe(400);
    expect((await signInAs({ "X-Forwarded-For": "10.2.0.99" }, TEST_ADMIN_PASSWORD, "false")).code).toBe(429);
  });

  it("cannot lock a victim's address out by naming it while untrusted", async () => {
    for (let i = 0; i < 6; i++) await signInAs({ "CF-Connecting-IP": "192.0.2.77" }, "wrong", "false");
    expect((await signInAs({ "CF-Connecting-IP": "192.0.2.77" }, TEST_ADMIN_PASSWORD, "true")).code).toBe(200);
  });

  it("stores at most 45 characters of a trusted CF-Connecting-IP", async () => {
    const long = `${"1".repeat(5000)}`;
    expect((await signInAs({ "CF-Connecting-IP": long }, "wrong", "true")).code).toBe(400);
    const [row] = await fixture.db.select().from(loginFailures).where(eq(loginFailures.scope, "ip"));
    expect(row!.subject).toBe("1".repeat(45));
    const ok = await signInAs({ "CF-Connecting-IP": long, "Client-Id": "long-ip" }, TEST_ADMIN_PASSWORD, "true");
    const [session] = await fixture.db
      .select()
      .from(deviceSessions)
      .where(eq(deviceSessions.deviceKey, (ok.data as { device_key: string }).device_key));
    expect(session!.ip).toBe("1".repeat(45));
  });
});

describe("device sessions at sign-in", () => {
  it(`keeps at most ${MAX_SESSIONS_PER_USER} sessions per user: the oldest inactive go first, then the oldest active`, async () => {
    const [bob] = await fixture.db.select().from(users).where(eq(users.username, "bob"));
    const row = (i: number, status: number) => ({
      deviceKey: `old-${String(i).padStart(3, "0")}`,
      userId: bob!.id,
      tokenId: "t",
      lastActive: 1000 + i,
      status,
    });
    // 60 inactive and 60 active, interleaved in age; and another user's session, which stays.
    await fixture.db.insert(deviceSessions).values(Array.from({ length: 120 }, (_, i) => row(i, i % 2)));
    const adminSession = (await login(fixture, admin, { "Client-Id": "admin-desk" })).data!.device_key;

    const fresh = (await login(fixture, { username: "bob", password: "bob's password" })).data!;
    const kept = await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.userId, bob!.id));
    expect(kept).toHaveLength(MAX_SESSIONS_PER_USER);
    // The new one, the 60 active, and the 39 newest inactive (odd i is inactive: 41..119).
    const keys = new Set(kept.map((s) => s.deviceKey));
    expect(keys.has(fresh.device_key)).toBe(true);
    for (let i = 0; i < 120; i += 2) expect(keys.has(row(i, 0).deviceKey)).toBe(true);
    for (let i = 1; i < 120; i += 2) expect(keys.has(row(i, 1).deviceKey), String(i)).toBe(i >= 43);
    expect((await getAs(fixture, "/api/me", fresh.token)).code).toBe(200);
    expect(
      await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.deviceKey, adminSession)),
    ).toHaveLength(1);

    // All active and over the cap: the oldest active go, the new one stays.
    await fixture.db.update(deviceSessions).set({ status: 0 }).where(eq(deviceSessions.userId, bob!.id));
    await fixture.db
      .insert(deviceSessions)
      .values(Array.from({ length: 10 }, (_, i) => ({ ...row(200 + i, 0), lastActive: 5000 + i })));
    const last = (await login(fixture, { username: "bob", password: "bob's password" })).data!;
    const after = await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.userId, bob!.id));
    expect(after).toHaveLength(MAX_SESSIONS_PER_USER);
    expect(after.some((s) => s.deviceKey === last.device_key)).toBe(true);
    expect(after.some((s) => s.deviceKey === "old-000")).toBe(false);
    expect(after.some((s) => s.deviceKey === "old-209")).toBe(true);
  });

  it("keeps one session per Client-Id, header or query, and a new one without", async () => {
    const a = await login(fixture, admin, { "Client-Id": "phone" });
    const b = await login(fixture, admin, { "Client-Id": "phone" });
    const viaQuery = (await readEnvelope(await postJson(fixture, "/api/auth/login?client_id=phone", admin))).data as {
      device_key: string;
    };
    const other = await login(fixture, admin, { "Client-Id": "tablet" });
    const anonymous1 = await login(fixture, admin);
    const anonymous2 = await login(fixture, admin);
    expect(b.data!.device_key).toBe(a.data!.device_key);
    expect(viaQuery.device_key).toBe(a.data!.device_key);
    expect(other.data!.device_key).not.toBe(a.data!.device_key);
    expect(anonymous1.data!.device_key).not.toBe(anonymous2.data!.device_key);
    expect(await fixture.db.select().from(deviceSessions)).toHaveLength(4);
  });

  it("gives a device one live token: signing in again on it retires the previous token", async () => {
    const first = await login(fixture, admin, { "Client-Id": "kiosk" });
    const second = await login(fixture, admin, { "Client-Id": "kiosk" });
    expect((await getAs(fixture, "/api/me", first.data!.token)).message).toBe("session inactive");
    expect((await getAs(fixture, "/api/me", second.data!.token)).code).toBe(200);
  });

  it("reactivates a logged-out device session on the next sign-in", async () => {
    const first = await login(fixture, admin, { "Client-Id": "desk" });
    await getAs(fixture, "/api/auth/logout", first.data!.token);
    const again = await login(fixture, admin, { "Client-Id": "desk" });
    expect(again.data!.device_key).toBe(first.data!.device_key);
    expect((await getAs(fixture, "/api/me", again.data!.token)).code).toBe(200);
  });
});
