import { eq } from "drizzle-orm";
import { SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceSessions, settings, users } from "../db/schema.ts";
import { getAs, login } from "../../test/support/auth.ts";
import {
  createUnitFixture,
  insertRole,
  insertUser,
  TEST_ADMIN_PASSWORD,
  testEnv,
  type UnitFixture,
} from "../../test/support/unit.ts";

let fixture: UnitFixture;
let carolId: number;
beforeAll(async () => {
  fixture = await createUnitFixture();
  const editors = await insertRole(fixture, "editors", [
    { path: "/media", permission: 8 },
    { path: "/docs/", permission: 1 },
  ]);
  const viewers = await insertRole(fixture, "viewers", [
    { path: "media", permission: 256 },
    { path: "/", permission: 1 },
  ]);
  carolId = await insertUser(fixture, "carol", "carol pw", {
    roleIds: [viewers, editors],
    basePath: "/media",
    permission: 264,
  });
});
afterAll(() => fixture.close());

const adminLogin = async (headers: Record<string, string> = {}) =>
  (await login(fixture, { username: "admin", password: TEST_ADMIN_PASSWORD }, headers)).data!.token;
const secretKey = new TextEncoder().encode(testEnv.JWT_SECRET);

async function forge(claims: Record<string, unknown>, options: { key?: Uint8Array; exp?: number; nbf?: number } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setJti(String(claims.jti ?? "x"))
    .setIssuedAt(now)
    .setNotBefore(options.nbf ?? now)
    .setExpirationTime(options.exp ?? now + 60)
    .sign(options.key ?? secretKey);
}

describe("the Authorization header", () => {
  it("accepts the token with a Bearer prefix too", async () => {
    expect((await getAs(fixture, "/api/me", `Bearer ${await adminLogin()}`)).code).toBe(200);
  });
});

describe("tokens that must not work", () => {
  it.each([
    [
      "a token signed with another key",
      async () =>
        forge(
          { username: "admin", pwd_ts: 0, sid: "s" },
          { key: new TextEncoder().encode("another-key-another-key-another-key!!") },
        ),
      "token is invalidated",
    ],
    [
      "an unsigned token (alg: none)",
      async () =>
        new UnsecuredJWT({ username: "admin", pwd_ts: 0, sid: "s", jti: "x" }).setExpirationTime("1h").encode(),
      "token is invalidated",
    ],
    [
      "an expired token",
      async () => forge({ username: "admin", pwd_ts: 0, sid: "s" }, { exp: Math.floor(Date.now() / 1000) - 10 }),
      "token is expired",
    ],
    [
      "a token not valid yet",
      async () => forge({ username: "admin", pwd_ts: 0, sid: "s" }, { nbf: Math.floor(Date.now() / 1000) + 3600 }),
      "token not active yet",
    ],
    ["three dots of garbage", async () => "abc.def.ghi", "that's not even a token"],
    ["a random string", async () => "let-me-in", "token is invalidated"],
    [
      "a validly signed token for a session that does not exist",
      async () => forge({ username: "admin", pwd_ts: 0, sid: "nope" }),
      "failed find user: record not found",
    ],
  ])("refuses %s with code 401", async (_, make, message) => {
    expect(await getAs(fixture, "/api/me", await make())).toEqual({ code: 401, message, data: null });
  });

  it("refuses a token whose payload was edited", async () => {
    const [header, payload, signature] = (await adminLogin()).split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString());
    const edited = Buffer.from(JSON.stringify({ ...claims, username: "carol" })).toString("base64url");
    expect(await getAs(fixture, "/api/me", `${header}.${edited}.${signature}`)).toEqual({
      code: 401,
      message: "token is invalidated",
      data: null,
    });
  });
});

describe("revocation", () => {
  it("ends a token at logout, and only that device's token", async () => {
    const laptop = await adminLogin({ "Client-Id": "laptop" });
    const phone = await adminLogin({ "Client-Id": "phone" });
    expect(await getAs(fixture, "/api/auth/logout", laptop)).toEqual({ code: 200, message: "success", data: null });
    expect(await getAs(fixture, "/api/me", laptop)).toEqual({ code: 401, message: "session inactive", data: null });
    expect((await getAs(fixture, "/api/me", phone)).code).toBe(200);
  });

  it("ends every token of a user whose password changed", async () => {
    const token = (await login(fixture, { username: "carol", password: "carol pw" })).data!.token;
    await fixture.db
      .update(users)
      .set({ passwordChangedAt: Math.floor(Date.now() / 1000) })
      .where(eq(users.id, carolId));
    expect(await getAs(fixture, "/api/me", token)).toEqual({
      code: 401,
      message: "Password has been changed, login please",
      data: null,
    });
    await fixture.db.update(users).set({ passwordChangedAt: 0 }).where(eq(users.id, carolId));
  });

  it("ends the tokens of a disabled user", async () => {
    const token = (await login(fixture, { username: "carol", password: "carol pw" })).data!.token;
    await fixture.db.update(users).set({ disabled: true }).where(eq(users.id, carolId));
    const body = await getAs(fixture, "/api/me", token);
    await fixture.db.update(users).set({ disabled: false }).where(eq(users.id, carolId));
    expect(body).toEqual({ code: 401, message: "Current user is disabled, replace please", data: null });
  });

  it("moves last_active with use", async () => {
    const token = await adminLogin({ "Client-Id": "ticker" });
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    await fixture.db
      .update(deviceSessions)
      .set({ lastActive: 1000, ip: "", userAgent: "" })
      .where(eq(deviceSessions.deviceKey, claims.sid));
    await getAs(fixture, "/api/me", token, {
      "User-Agent": "curl/8",
      "CF-Connecting-IP": "2001:db8:85a3::8a2e:370:7334",
    });
    const [session] = await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.deviceKey, claims.sid));
    expect(session!.lastActive).toBeGreaterThan(Date.now() / 1000 - 5);
    expect(session).toMatchObject({ userAgent: "curl/8", ip: "2001:*:*::*:*:7334" });
  });
});

describe("the permanent token", () => {
  it("authenticates as the admin without creating a device session, and survives logout", async () => {
    const [{ value }] = (await fixture.db
      .select({ value: settings.value })
      .from(settings)
      .where(eq(settings.key, "token"))) as [{ value: string }];
    const sessionsBefore = (await fixture.db.select().from(deviceSessions)).length;
    const me = await getAs(fixture, "/api/me", value);
    expect(me.data).toMatchObject({ id: 2, username: "admin", role_names: ["admin"] });
    expect((await getAs(fixture, "/api/auth/logout", value)).code).toBe(200);
    expect((await getAs(fixture, "/api/me", value)).code).toBe(200);
    expect(await fixture.db.select().from(deviceSessions)).toHaveLength(sessionsBefore);
  });

  it("stops working once the setting changes", async () => {
    const [{ value }] = (await fixture.db
      .select({ value: settings.value })
      .from(settings)
      .where(eq(settings.key, "token"))) as [{ value: string }];
    await fixture.db.update(settings).set({ value: "alist-rotated" }).where(eq(settings.key, "token"));
    expect((await getAs(fixture, "/api/me", value)).code).toBe(401);
    expect((await getAs(fixture, "/api/me", "alist-rotated")).code).toBe(200);
    await fixture.db.update(settings).set({ value }).where(eq(settings.key, "token"));
  });
});

describe("the guest", () => {
  it("is refused while disabled, AList's default", async () => {
    expect(await getAs(fixture, "/api/me", "")).toEqual({
      code: 401,
      message: "Guest user is disabled, login please",
      data: null,
    });
    expect((await fixture.request("/api/me")).status).toBe(200);
  });

  it("gets its own profile once enabled, without a device session, and cannot change it", async () => {
    await fixture.db.update(users).set({ disabled: false }).where(eq(users.username, "guest"));
    const sessionsBefore = (await fixture.db.select().from(deviceSessions)).length;
    const me = await getAs(fixture, "/api/me", "");
    const update = (await (
      await fixture.request("/api/me/update", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: '{"password":"x"}',
      })
    ).json()) as { code: number; message: string };
    const twoFactor = (await (await fixture.request("/api/auth/2fa/generate", { method: "POST" })).json()) as {
      code: number;
      message: string;
    };
    await fixture.db.update(users).set({ disabled: true }).where(eq(users.username, "guest"));
    expect(me.data).toMatchObject({
      username: "guest",
      role: [1],
      role_names: ["guest"],
      permissions: [{ path: "/", permission: 0 }],
    });
    expect(update).toMatchObject({ code: 403, message: "Guest user can not update profile" });
    expect(twoFactor).toMatchObject({ code: 403, message: "Guest user can not generate 2FA code" });
    expect(await fixture.db.select().from(deviceSessions)).toHaveLength(sessionsBefore);
  });
});
