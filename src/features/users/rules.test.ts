// What the admin API may do to an account (rules.ts), through app.request(): the admin and the guest
// are fixed points (never deleted, the admin never disabled or demoted, nobody else given their
// roles), and a user created without roles gets the role flagged default.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { settings, users } from "../../db/schema.ts";
import { readEnvelope, type UnitFixture } from "../../../test/support/unit.ts";
import { forgetFailedSignIns, setUpUsers, usersAs } from "./unit-fixture.ts";

let fixture: UnitFixture;
let adminToken: string;
beforeAll(async () => {
  ({ fixture, adminToken } = await setUpUsers());
});
afterAll(() => fixture.close());
beforeEach(() => forgetFailedSignIns(fixture));

const { post, get, createUser, userRow, userCount } = usersAs(
  () => fixture,
  () => adminToken,
);

describe("the admin and guest accounts", () => {
  it("cannot be deleted", async () => {
    for (const id of [1, 2]) {
      expect(await post(`/api/admin/user/delete?id=${id}`)).toEqual({
        code: 400,
        message: "admin or guest user can not be deleted",
        data: null,
      });
    }
    expect(
      (await fixture.db.select().from(users).where(eq(users.id, 1))).length +
        (await fixture.db.select().from(users).where(eq(users.id, 2))).length,
    ).toBe(2);
  });

  it("the admin cannot be disabled or lose the admin role, and nothing else of that update is saved", async () => {
    const before = await userRow(2);
    expect(await post("/api/admin/user/update", { id: 2, disabled: true, sso_id: "changed" })).toEqual({
      code: 400,
      message: "admin user can not be disabled",
      data: null,
    });
    for (const role of [[], [3], [2, 3], [1]]) {
      expect(await post("/api/admin/user/update", { id: 2, role, sso_id: "changed" })).toEqual({
        code: 400,
        message: "cannot change role of admin user",
        data: null,
      });
    }
    expect(await userRow(2)).toEqual(before);
    expect((await get("/api/me")).code).toBe(200);
  });

  it("the admin keeps base path / and every permission whatever is sent", async () => {
    const body = await post("/api/admin/user/update", {
      id: 2,
      username: "admin",
      role: [2],
      disabled: false,
      base_path: "/media",
      permission: 3,
      sso_id: "admin-sso",
    });
    expect(body.data).toEqual({
      id: 2,
      username: "admin",
      password: "",
      base_path: "/",
      role: [2],
      disabled: false,
      permission: 65535,
      otp: false,
      sso_id: "admin-sso",
      allow_ldap: false,
    });
    expect(await userRow(2)).toMatchObject({ basePath: "/", permission: 65535, ssoId: "admin-sso" });
  });

  it("the guest can be enabled, given a base path and permissions, and disabled again; its role stays", async () => {
    const body = await post("/api/admin/user/update", {
      id: 1,
      disabled: false,
      base_path: "/public",
      permission: 1 | 256,
    });
    expect(body.data).toEqual({
      id: 1,
      username: "guest",
      password: "",
      base_path: "/public",
      role: [1],
      disabled: false,
      permission: 257,
      otp: false,
      sso_id: "",
      allow_ldap: false,
    });
    const anonymous = await readEnvelope(await fixture.request("/api/me"));
    expect(anonymous.data).toMatchObject({ username: "guest", base_path: "/public", permission: 257 });
    // An enabled guest is signed in, but not an admin.
    expect(await readEnvelope(await fixture.request("/api/admin/user/list"))).toEqual({
      code: 403,
      message: "You are not an admin",
      data: null,
    });
    expect(await post("/api/admin/user/update", { id: 1, role: [3] })).toEqual({
      code: 400,
      message: "cannot change role of guest user",
      data: null,
    });
    expect((await post("/api/admin/user/update", { id: 1, disabled: true })).data.disabled).toBe(true);
    expect(await readEnvelope(await fixture.request("/api/me"))).toEqual({
      code: 401,
      message: "Guest user is disabled, login please",
      data: null,
    });
  });

  it("nobody else can be given the admin or guest role", async () => {
    const count = await userCount();
    for (const role of [[2], [1], [3, 2]]) {
      expect(await post("/api/admin/user/create", { username: "mallory", password: "pw", role })).toEqual({
        code: 400,
        message: "admin or guest role can not be assigned",
        data: null,
      });
    }
    expect(await userCount()).toBe(count);
    const { id } = await createUser({ username: "henry" });
    expect(await post("/api/admin/user/update", { id, role: [2] })).toEqual({
      code: 400,
      message: "admin or guest role can not be assigned",
      data: null,
    });
    expect((await userRow(id))!.roleIds).toEqual([]);
  });
});

describe("the default role", () => {
  it("a user created without roles gets the role flagged default, never guest or admin", async () => {
    expect((await createUser({ username: "olga" })).role).toEqual([]); // default_role is guest on a fresh install
    const staff = await post("/api/admin/role/create", { name: "staff", default: true });
    expect((await createUser({ username: "paul" })).role).toEqual([staff.data.id]);
    expect((await createUser({ username: "quinn", role: [] })).role).toEqual([staff.data.id]);
    await fixture.db.update(settings).set({ value: "2" }).where(eq(settings.key, "default_role"));
    expect((await createUser({ username: "rita" })).role).toEqual([]);
  });
});
