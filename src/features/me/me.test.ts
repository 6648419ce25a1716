// GET /api/me (the caller's own account, roles and merged scopes) and POST /api/me/update (a user
// changing their own name, password and SSO id). How tokens are accepted and refused, and the
// guest, are the guard's (src/auth/guard.test.ts).
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { loginFailures, users } from "../../db/schema.ts";
import { getAs, login, postJson } from "../../../test/support/auth.ts";
import {
  createUnitFixture,
  insertRole,
  insertUser,
  readEnvelope,
  TEST_ADMIN_PASSWORD,
  type UnitFixture,
} from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let carolId: number;
beforeAll(async () => {
  fixture = await createUnitFixture();
  // Holds the name "dave" that a rename below must find taken.
  await fixture.db
    .insert(users)
    .values({ username: "dave", passwordHash: await hashStaticHash(await staticHash("dave pw")), roleIds: [] });
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
// Every request here comes from one address; wrong passwords on purpose must not lock later tests out.
beforeEach(async () => {
  await fixture.db.delete(loginFailures);
});

const authed = (token: string) => ({ Authorization: token });
const adminLogin = async () => (await login(fixture, { username: "admin", password: TEST_ADMIN_PASSWORD })).data!.token;

describe("GET /api/me", () => {
  it("describes the admin, with an empty password and no secrets", async () => {
    const body = await getAs(fixture, "/api/me", await adminLogin());
    expect(body).toEqual({
      code: 200,
      message: "success",
      data: {
        id: 2,
        username: "admin",
        password: "",
        base_path: "/",
        role: [2],
        role_names: ["admin"],
        disabled: false,
        permission: 65535,
        permissions: [{ path: "/", permission: 65535 }],
        sso_id: "",
        otp: false,
      },
    });
  });

  it("merges the permission scopes of several roles by cleaned path, in the user's role order", async () => {
    const token = (await login(fixture, { username: "carol", password: "carol pw" })).data!.token;
    const { data } = await getAs(fixture, "/api/me", token);
    expect(data.role_names).toEqual(["viewers", "editors"]);
    expect(data.permissions).toEqual([
      { path: "/media", permission: 256 | 8 },
      { path: "/", permission: 1 },
      { path: "/docs", permission: 1 },
    ]);
    expect(data).toMatchObject({ id: carolId, base_path: "/media", permission: 264, otp: false });
  });
});

describe("POST /api/me/update", () => {
  it("changes the password: old tokens die, the new password works, the old one does not", async () => {
    await fixture.db
      .insert(users)
      .values({ username: "erin", passwordHash: await hashStaticHash(await staticHash("old pw")), roleIds: [] });
    const token = (await login(fixture, { username: "erin", password: "old pw" }, { "Client-Id": "a" })).data!.token;
    const other = (await login(fixture, { username: "erin", password: "old pw" }, { "Client-Id": "b" })).data!.token;
    expect(
      await readEnvelope(
        await postJson(fixture, "/api/me/update", { username: "erin", password: "new pw" }, authed(token)),
      ),
    ).toEqual({ code: 200, message: "success", data: null });
    for (const dead of [token, other])
      expect(await getAs(fixture, "/api/me", dead)).toEqual({
        code: 401,
        message: "Password has been changed, login please",
        data: null,
      });
    expect((await login(fixture, { username: "erin", password: "old pw" })).code).toBe(400);
    expect((await login(fixture, { username: "erin", password: "new pw" })).code).toBe(200);
  });

  it("renames, refuses a taken name, and leaves the password alone when it is empty", async () => {
    await fixture.db
      .insert(users)
      .values({ username: "frank", passwordHash: await hashStaticHash(await staticHash("frank pw")), roleIds: [] });
    const token = (await login(fixture, { username: "frank", password: "frank pw" })).data!.token;
    expect(
      await readEnvelope(await postJson(fixture, "/api/me/update", { username: "dave", password: "" }, authed(token))),
    ).toEqual({ code: 400, message: "username dave is already taken", data: null });
    expect(
      (
        await readEnvelope(
          await postJson(fixture, "/api/me/update", { username: "francis", password: "" }, authed(token)),
        )
      ).code,
    ).toBe(200);
    expect((await login(fixture, { username: "francis", password: "frank pw" })).code).toBe(200);
  });

  it("ends the user's tokens for good when renaming: naming oneself back does not revive them", async () => {
    await fixture.db
      .insert(users)
      .values({ username: "gina", passwordHash: await hashStaticHash(await staticHash("gina pw")), roleIds: [] });
    const token = (await login(fixture, { username: "gina", password: "gina pw" }, { "Client-Id": "a" })).data!.token;
    const other = (await login(fixture, { username: "gina", password: "gina pw" }, { "Client-Id": "b" })).data!.token;
    // Sending back one's own name changes nothing.
    expect(
      (await readEnvelope(await postJson(fixture, "/api/me/update", { username: "gina", sso_id: "" }, authed(token))))
        .code,
    ).toBe(200);
    expect((await getAs(fixture, "/api/me", other)).code).toBe(200);

    expect(
      (await readEnvelope(await postJson(fixture, "/api/me/update", { username: "gina2" }, authed(token)))).code,
    ).toBe(200);
    const renamedBack = (await login(fixture, { username: "gina2", password: "gina pw" }, { "Client-Id": "c" })).data!
      .token;
    expect(
      (await readEnvelope(await postJson(fixture, "/api/me/update", { username: "gina" }, authed(renamedBack)))).code,
    ).toBe(200);
    for (const dead of [token, other])
      expect(await getAs(fixture, "/api/me", dead)).toEqual({ code: 401, message: "session inactive", data: null });
    expect((await getAs(fixture, "/api/me", renamedBack)).code).toBe(401);
    expect((await login(fixture, { username: "gina", password: "gina pw" })).code).toBe(200);
  });

  it("ends the old token even when the password changes within the same second as the last change", async () => {
    const now = new Date("2030-01-01T00:00:10Z");
    vi.useFakeTimers({ now, toFake: ["Date"] });
    try {
      const second = Math.floor(now.getTime() / 1000);
      await fixture.db.insert(users).values({
        username: "hugo",
        passwordHash: await hashStaticHash(await staticHash("hugo pw")),
        passwordChangedAt: second,
        roleIds: [],
      });
      const token = (await login(fixture, { username: "hugo", password: "hugo pw" })).data!.token;
      expect(
        (await readEnvelope(await postJson(fixture, "/api/me/update", { password: "hugo new pw" }, authed(token))))
          .code,
      ).toBe(200);
      expect(await getAs(fixture, "/api/me", token)).toEqual({
        code: 401,
        message: "Password has been changed, login please",
        data: null,
      });
      const [row] = await fixture.db.select().from(users).where(eq(users.username, "hugo"));
      expect(row!.passwordChangedAt).toBe(second + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers bad input with 400 naming the field", async () => {
    const token = (await login(fixture, { username: "francis", password: "frank pw" })).data!.token;
    const body = await readEnvelope(await postJson(fixture, "/api/me/update", { username: 12 }, authed(token)));
    expect(body.code).toBe(400);
    expect(body.message).toMatch(/^username: /);
  });
});
