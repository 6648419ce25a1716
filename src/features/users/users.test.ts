// /api/admin/user/*: what an admin sees through the API and what it leaves in the database;
// rules.test.ts holds what the API may do to the admin and guest accounts, and the default role.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deviceSessions, pendingOtpEnrolments, settings, sshPublicKeys, users } from "../../db/schema.ts";
import { login, send, totpCode } from "../../../test/support/auth.ts";
import { readEnvelope, TEST_ADMIN_PASSWORD, type UnitFixture } from "../../../test/support/unit.ts";
import { forgetFailedSignIns, setUpUsers, usersAs } from "./unit-fixture.ts";

let fixture: UnitFixture;
let adminToken: string;
beforeAll(async () => {
  ({ fixture, adminToken } = await setUpUsers());
});
afterAll(() => fixture.close());
beforeEach(() => forgetFailedSignIns(fixture));

const { post, get, signIn, createUser, userRow, userCount } = usersAs(
  () => fixture,
  () => adminToken,
);

describe("the user life cycle", () => {
  let id: number;
  let token: string;

  it("creates a user, hashing the password and normalising the base path", async () => {
    const body = await post("/api/admin/user/create", {
      username: "erin",
      password: "erin pw",
      base_path: "media//films/../series/",
      role: [],
      disabled: false,
      permission: 8 | 256,
      sso_id: "erin-sso",
    });
    expect(body).toEqual({
      code: 200,
      message: "success",
      data: {
        id: expect.any(Number),
        username: "erin",
        password: "",
        base_path: "/media/series",
        role: [],
        disabled: false,
        permission: 264,
        otp: false,
        sso_id: "erin-sso",
        allow_ldap: false,
      },
    });
    id = body.data.id;
    const row = await userRow(id);
    expect(row!.passwordHash).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(row!.passwordHash).not.toContain("erin pw");
    expect(row!.passwordChangedAt).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it("lets the new user sign in with that password", async () => {
    token = (await signIn("erin", "erin pw")).token;
    expect((await get("/api/me", token)).data).toMatchObject({
      id,
      username: "erin",
      base_path: "/media/series",
      permission: 264,
    });
  });

  it("lists users by id as {content, total}, without any secret", async () => {
    const body = await get("/api/admin/user/list");
    expect(body.code).toBe(200);
    expect(body.data.total).toBe(await userCount());
    expect(body.data.content.map((u: { username: string }) => u.username)).toEqual(["guest", "admin", "erin"]);
    for (const user of body.data.content) {
      expect(Object.keys(user).sort()).toEqual([
        "allow_ldap",
        "base_path",
        "disabled",
        "id",
        "otp",
        "password",
        "permission",
        "role",
        "sso_id",
        "username",
      ]);
      expect(user.password).toBe("");
    }
    expect(body.data.content[1]).toEqual({
      id: 2,
      username: "admin",
      password: "",
      base_path: "/",
      role: [2],
      disabled: false,
      permission: 65535,
      otp: false,
      sso_id: "",
      allow_ldap: false,
    });
  });

  it("pages the list with page and per_page", async () => {
    const second = await get("/api/admin/user/list?page=2&per_page=1");
    expect(second.data).toEqual({
      content: [expect.objectContaining({ username: "admin" })],
      total: await userCount(),
    });
    expect((await get("/api/admin/user/list?page=9&per_page=1")).data.content).toEqual([]);
    expect((await get("/api/admin/user/list?per_page=0")).data.content).toHaveLength(await userCount());
  });

  it("gets one user by id", async () => {
    expect(await get(`/api/admin/user/get?id=${id}`)).toEqual({
      code: 200,
      message: "success",
      data: {
        id,
        username: "erin",
        password: "",
        base_path: "/media/series",
        role: [],
        disabled: false,
        permission: 264,
        otp: false,
        sso_id: "erin-sso",
        allow_ldap: false,
      },
    });
  });

  it("keeps allow_ldap off unless the admin sets it, on create or update", async () => {
    const plain = await createUser({ username: "lena" });
    expect(plain.allow_ldap).toBe(false);
    const allowed = await createUser({ username: "lars", allow_ldap: true });
    expect(allowed.allow_ldap).toBe(true);
    expect((await post("/api/admin/user/update", { id: plain.id, allow_ldap: true })).data.allow_ldap).toBe(true);
    expect((await post("/api/admin/user/update", { id: allowed.id, permission: 1 })).data.allow_ldap).toBe(true);
    expect(await userRow(plain.id)).toMatchObject({ allowLdap: true });
    expect((await post("/api/admin/user/update", { id: allowed.id, allow_ldap: "yes" })).code).toBe(400);
    for (const user of [plain, allowed]) await post(`/api/admin/user/delete?id=${user.id}`);
  });

  it("updates only the fields sent; an empty password leaves the password and the tokens alone", async () => {
    const before = await userRow(id);
    const body = await post("/api/admin/user/update", {
      id,
      username: "erin2",
      password: "",
      base_path: "\\docs\\",
      permission: 1,
    });
    expect(body).toEqual({
      code: 200,
      message: "success",
      data: {
        id,
        username: "erin2",
        password: "",
        base_path: "/docs",
        role: [],
        disabled: false,
        permission: 1,
        otp: false,
        sso_id: "erin-sso",
        allow_ldap: false,
      },
    });
    const after = await userRow(id);
    expect(after!.passwordHash).toBe(before!.passwordHash);
    expect(after!.passwordChangedAt).toBe(before!.passwordChangedAt);
    // The token names the old username: AList's guard looks the user up by it.
    expect(await get("/api/me", token)).toEqual({
      code: 401,
      message: "failed find user: record not found",
      data: null,
    });
    // Renaming back does not revive it: the rename ended the user's sessions for good.
    await post("/api/admin/user/update", { id, username: "erin" });
    expect(await get("/api/me", token)).toEqual({ code: 401, message: "session inactive", data: null });
    expect(
      (await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.userId, id))).every(
        (s) => s.status === 1,
      ),
    ).toBe(true);
    token = (await signIn("erin", "erin pw")).token;
  });

  it("leaves the tokens alone when the username sent is the current one, as the web UI sends it back", async () => {
    expect((await post("/api/admin/user/update", { id, username: "erin", permission: 1 })).code).toBe(200);
    expect((await get("/api/me", token)).data.username).toBe("erin");
  });

  it("ends nothing when a rename is refused", async () => {
    const other = await createUser({ username: "erin-neighbour" });
    expect((await post("/api/admin/user/update", { id, username: "erin-neighbour" })).code).toBe(400);
    expect((await post("/api/admin/user/update", { id, username: "erin3", role: [999] })).code).not.toBe(200);
    expect((await get("/api/me", token)).data.username).toBe("erin");
    await post(`/api/admin/user/delete?id=${other.id}`);
  });

  it("disables a user: their token dies at once and their device sessions end", async () => {
    expect((await post("/api/admin/user/update", { id, disabled: true })).data.disabled).toBe(true);
    expect(await get("/api/me", token)).toEqual({
      code: 401,
      message: "Current user is disabled, replace please",
      data: null,
    });
    const sessions = await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.userId, id));
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.every((s) => s.status === 1)).toBe(true);
    expect((await login(fixture, { username: "erin", password: "erin pw" })).code).toBe(403);
  });

  it("re-enables a user, who must sign in again", async () => {
    expect((await post("/api/admin/user/update", { id, disabled: false })).data.disabled).toBe(false);
    expect(await get("/api/me", token)).toEqual({ code: 401, message: "session inactive", data: null });
    token = (await signIn("erin", "erin pw")).token;
    expect((await get("/api/me", token)).code).toBe(200);
  });

  it("deletes a user with their device sessions, SSH keys and pending 2FA enrolment", async () => {
    await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: { Authorization: token } });
    const now = Math.floor(Date.now() / 1000);
    await fixture.db.insert(sshPublicKeys).values({
      userId: id,
      title: "laptop",
      fingerprint: "SHA256:x",
      keyText: "ssh-ed25519 AAAA",
      addedAt: now,
      lastUsedAt: now,
    });
    expect(
      await fixture.db.select().from(pendingOtpEnrolments).where(eq(pendingOtpEnrolments.userId, id)),
    ).toHaveLength(1);

    // As on a connection without foreign key enforcement: the delete itself must remove the rows.
    await fixture.db.run(sql`PRAGMA foreign_keys = OFF`);
    try {
      expect(await post(`/api/admin/user/delete?id=${id}`)).toEqual({ code: 200, message: "success", data: null });
    } finally {
      await fixture.db.run(sql`PRAGMA foreign_keys = ON`);
    }
    expect(await userRow(id)).toBeUndefined();
    expect(await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.userId, id))).toEqual([]);
    expect(await fixture.db.select().from(sshPublicKeys).where(eq(sshPublicKeys.userId, id))).toEqual([]);
    expect(await fixture.db.select().from(pendingOtpEnrolments).where(eq(pendingOtpEnrolments.userId, id))).toEqual([]);
    expect(await get("/api/me", token)).toEqual({
      code: 401,
      message: "failed find user: record not found",
      data: null,
    });
    expect(await get(`/api/admin/user/get?id=${id}`)).toEqual({ code: 404, message: "user not found", data: null });
    expect(await post(`/api/admin/user/delete?id=${id}`)).toEqual({ code: 404, message: "user not found", data: null });
  });
});

describe("passwords", () => {
  it("a new password kills the user's tokens at once, even within the same second", async () => {
    const { id } = await createUser({ username: "frank", password: "frank pw" });
    const token = (await signIn("frank", "frank pw")).token;
    const before = (await userRow(id))!.passwordChangedAt;
    expect((await post("/api/admin/user/update", { id, password: "frank new pw" })).code).toBe(200);
    expect((await userRow(id))!.passwordChangedAt).toBe(Math.max(Math.floor(Date.now() / 1000), before + 1));
    expect(await get("/api/me", token)).toEqual({
      code: 401,
      message: "Password has been changed, login please",
      data: null,
    });
    expect((await login(fixture, { username: "frank", password: "frank pw" })).code).toBe(400);
    expect((await get("/api/me", (await signIn("frank", "frank new pw")).token)).data.username).toBe("frank");
  });

  it("a create without a password is refused", async () => {
    expect((await post("/api/admin/user/create", { username: "nopass" })).message).toMatch(/^password: /);
    expect((await post("/api/admin/user/create", { username: "nopass", password: "" })).message).toMatch(/^password: /);
    expect(await fixture.db.select().from(users).where(eq(users.username, "nopass"))).toEqual([]);
  });
});

describe("permissions from two roles created through the API", () => {
  it("/api/me merges the scopes of both roles by path, in the user's role order", async () => {
    const viewers = await post("/api/admin/role/create", {
      name: "viewers",
      permission_scopes: [
        { path: "/media", permission: 256 },
        { path: "/", permission: 1 },
      ],
    });
    const uploaders = await post("/api/admin/role/create", {
      name: "uploaders",
      permission_scopes: [
        { path: "media/", permission: 8 },
        { path: "/inbox", permission: 8 | 16 },
      ],
    });
    const { id } = await createUser({
      username: "gwen",
      password: "gwen pw",
      role: [viewers.data.id, uploaders.data.id],
      base_path: "/media",
    });
    const me = await get("/api/me", (await signIn("gwen", "gwen pw")).token);
    expect(me.data).toMatchObject({
      id,
      role: [viewers.data.id, uploaders.data.id],
      role_names: ["viewers", "uploaders"],
      permissions: [
        { path: "/media", permission: 256 | 8 },
        { path: "/", permission: 1 },
        { path: "/inbox", permission: 24 },
      ],
    });
  });
});

describe("bad input", () => {
  it("a taken username is a 400 naming it, on create and on update, and nothing is saved", async () => {
    await createUser({ username: "ivy" });
    const count = await userCount();
    expect(await post("/api/admin/user/create", { username: "ivy", password: "other" })).toEqual({
      code: 400,
      message: "username ivy is already taken",
      data: null,
    });
    expect(await userCount()).toBe(count);
    const { id } = await createUser({ username: "jack", sso_id: "j" });
    expect(await post("/api/admin/user/update", { id, username: "ivy", sso_id: "changed" })).toEqual({
      code: 400,
      message: "username ivy is already taken",
      data: null,
    });
    expect(await userRow(id)).toMatchObject({ username: "jack", ssoId: "j" });
  });

  it("an unknown role is a 400 naming it, and nothing is saved", async () => {
    const count = await userCount();
    expect(await post("/api/admin/user/create", { username: "kate", password: "pw", role: [999] })).toEqual({
      code: 400,
      message: "role 999 not found",
      data: null,
    });
    expect(await userCount()).toBe(count);
    const { id } = await createUser({ username: "leo" });
    expect(await post("/api/admin/user/update", { id, role: [998, 999], permission: 1 })).toEqual({
      code: 400,
      message: "roles 998, 999 not found",
      data: null,
    });
    expect(await userRow(id)).toMatchObject({ roleIds: [], permission: 0 });
  });

  it("a permission outside the bits of AList v3.58 is a 400", async () => {
    for (const permission of [65536, -1, 1.5, "8", 2 ** 40]) {
      const body = await post("/api/admin/user/create", { username: "mia", password: "pw", permission });
      expect(body.code, JSON.stringify(permission)).toBe(400);
      expect(body.message).toMatch(/^permission: /);
    }
    expect(await fixture.db.select().from(users).where(eq(users.username, "mia"))).toEqual([]);
    expect((await createUser({ username: "mia", permission: 65535 })).permission).toBe(65535);
  });

  it("wrong types, missing fields and malformed JSON get a 400 naming the problem", async () => {
    expect((await post("/api/admin/user/create", { password: "pw" })).message).toMatch(/^username: /);
    expect((await post("/api/admin/user/create", { username: "   ", password: "pw" })).message).toMatch(/^username: /);
    expect((await post("/api/admin/user/create", { username: "nick", password: "pw", role: "3" })).message).toMatch(
      /^role: /,
    );
    expect(
      (await post("/api/admin/user/create", { username: "nick", password: "pw", disabled: "yes" })).message,
    ).toMatch(/^disabled: /);
    expect((await post("/api/admin/user/update", { username: "nick" })).message).toMatch(/^id: /);
    expect((await post("/api/admin/user/update", { id: 0 })).message).toMatch(/^id: /);
    expect((await post("/api/admin/user/create", "{not json")).message).toMatch(/^malformed JSON body/);
  });

  it("a bad id in the query is a 400; an unknown one a 404", async () => {
    for (const path of ["/api/admin/user/get", "/api/admin/user/delete", "/api/admin/user/cancel_2fa"]) {
      const call = (query: string) => (path.endsWith("/get") ? get(path + query) : post(path + query));
      for (const query of ["", "?id=", "?id=0", "?id=-1", "?id=abc", "?id=1.5"]) {
        const body = await call(query);
        expect(body.code, path + query).toBe(400);
        expect(body.message).toMatch(/^id: /);
      }
      expect(await call("?id=999")).toEqual({ code: 404, message: "user not found", data: null });
    }
    expect(await post("/api/admin/user/update", { id: 999, sso_id: "x" })).toEqual({
      code: 404,
      message: "user not found",
      data: null,
    });
  });
});

describe("two-factor and the user cache", () => {
  it("cancel_2fa turns a user's 2FA off: /api/me shows otp false and sign-in needs no code", async () => {
    const { id } = await createUser({ username: "sam", password: "sam pw" });
    const token = (await signIn("sam", "sam pw")).token;
    const generated = await readEnvelope(
      await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: { Authorization: token } }),
    );
    const { secret } = generated.data as { secret: string };
    expect((await post("/api/auth/2fa/verify", { code: totpCode(secret), secret }, token)).code).toBe(200);
    expect((await get(`/api/admin/user/get?id=${id}`)).data.otp).toBe(true);
    expect((await login(fixture, { username: "sam", password: "sam pw" })).code).toBe(402);

    await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: { Authorization: token } });
    expect(await post(`/api/admin/user/cancel_2fa?id=${id}`)).toEqual({ code: 200, message: "success", data: null });
    expect((await get("/api/me", token)).data.otp).toBe(false);
    expect(await fixture.db.select().from(pendingOtpEnrolments).where(eq(pendingOtpEnrolments.userId, id))).toEqual([]);
    expect((await userRow(id))!.otpSecret).toBeNull();
    expect((await login(fixture, { username: "sam", password: "sam pw" })).code).toBe(200);
  });

  it("del_cache answers success: there is no user cache to drop", async () => {
    expect(await post("/api/admin/user/del_cache?username=sam")).toEqual({ code: 200, message: "success", data: null });
  });
});

describe("access", () => {
  const routes: [method: "GET" | "POST", path: string, body?: unknown][] = [
    ["GET", "/api/admin/user/list"],
    ["GET", "/api/admin/user/get?id=2"],
    ["POST", "/api/admin/user/create", { username: "eve", password: "pw" }],
    ["POST", "/api/admin/user/update", { id: 2, disabled: true }],
    ["POST", "/api/admin/user/delete?id=3"],
    ["POST", "/api/admin/user/cancel_2fa?id=2"],
    ["POST", "/api/admin/user/del_cache?username=admin"],
  ];
  it("a signed-in user who is not an admin gets 403, and nothing changes", async () => {
    await createUser({ username: "tom", password: "tom pw" });
    const token = (await signIn("tom", "tom pw")).token;
    const count = await userCount();
    for (const [method, path, body] of routes) {
      expect(await readEnvelope(await send(fixture, method, path, body, { Authorization: token })), path).toEqual({
        code: 403,
        message: "You are not an admin",
        data: null,
      });
    }
    expect(await userCount()).toBe(count);
  });

  it("no token while the guest is disabled gets 401", async () => {
    for (const [method, path, body] of routes) {
      expect(await readEnvelope(await send(fixture, method, path, body, {})), path).toEqual({
        code: 401,
        message: "Guest user is disabled, login please",
        data: null,
      });
    }
  });

  it("the permanent token works like the admin", async () => {
    const [{ value }] = (await fixture.db
      .select({ value: settings.value })
      .from(settings)
      .where(eq(settings.key, "token"))) as [{ value: string }];
    expect((await get("/api/admin/user/get?id=2", value)).data.username).toBe("admin");
  });
});

// Last: it changes the admin's password, which ends adminToken.
describe("resetting the admin's password", () => {
  it("works through the API and ends the admin's own tokens", async () => {
    const other = (await signIn("admin", TEST_ADMIN_PASSWORD, { "Client-Id": "other-device" })).token;
    expect((await post("/api/admin/user/update", { id: 2, password: "new admin pw" })).code).toBe(200);
    expect(await get("/api/me", other)).toEqual({
      code: 401,
      message: "Password has been changed, login please",
      data: null,
    });
    expect((await get("/api/me", (await signIn("admin", "new admin pw")).token)).data.username).toBe("admin");
  });
});
