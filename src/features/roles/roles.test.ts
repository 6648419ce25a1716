// /api/admin/role/*: what an admin sees through the API and what it leaves in the database.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { roles, settings, users } from "../../db/schema.ts";
import { getAs, login, send } from "../../../test/support/auth.ts";
import {
  api,
  createUnitFixture,
  type Envelope,
  readEnvelope,
  TEST_ADMIN_PASSWORD,
  type UnitFixture,
} from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let adminToken: string;
beforeAll(async () => {
  fixture = await createUnitFixture();
  adminToken = (await login(fixture, { username: "admin", password: TEST_ADMIN_PASSWORD })).data!.token;
});
afterAll(() => fixture.close());

const get = (path: string, token = adminToken): Promise<Envelope> => getAs(fixture, path, token);
const { post } = api(
  () => fixture,
  () => adminToken,
);

async function createRole(fields: Record<string, unknown>): Promise<any> {
  const body = await post("/api/admin/role/create", fields);
  expect(body, `create role ${String(fields.name)}`).toMatchObject({ code: 200, message: "success" });
  return body.data;
}

const roleRow = async (id: number) => (await fixture.db.select().from(roles).where(eq(roles.id, id)))[0];
const roleCount = async () => (await fixture.db.select().from(roles)).length;
const defaultRoleSetting = async () =>
  (await fixture.db.select().from(settings).where(eq(settings.key, "default_role")))[0]!.value;
const flaggedDefault = async () =>
  (await fixture.db.select({ id: roles.id }).from(roles).where(eq(roles.isDefault, true))).map((r) => r.id);

/** Users created straight in the table: these tests are about roles, not the user API. */
async function insertUsers(names: string[], roleIds: number[]) {
  const passwordHash = await hashStaticHash(await staticHash("pw"));
  await fixture.db.insert(users).values(names.map((username) => ({ username, passwordHash, roleIds })));
}

describe("the role life cycle", () => {
  let id: number;

  it("lists the seeded guest and admin roles", async () => {
    expect(await get("/api/admin/role/list")).toEqual({
      code: 200,
      message: "success",
      data: {
        content: [
          {
            id: 1,
            name: "guest",
            description: "Guest",
            default: false,
            permission_scopes: [{ path: "/", permission: 0 }],
          },
          {
            id: 2,
            name: "admin",
            description: "Administrator",
            default: false,
            permission_scopes: [{ path: "/", permission: 65535 }],
          },
        ],
        total: 2,
      },
    });
  });

  it("creates a role with its scope paths normalised", async () => {
    const body = await post("/api/admin/role/create", {
      name: "editors",
      description: "Edit the media",
      default: false,
      permission_scopes: [
        { path: "media/", permission: 8 | 16 },
        { path: "\\docs\\..\\shared//", permission: 1 },
        { path: "", permission: 256 },
      ],
    });
    expect(body).toEqual({
      code: 200,
      message: "success",
      data: {
        id: expect.any(Number),
        name: "editors",
        description: "Edit the media",
        default: false,
        permission_scopes: [
          { path: "/media", permission: 24 },
          { path: "/shared", permission: 1 },
          { path: "/", permission: 256 },
        ],
      },
    });
    id = body.data.id;
    expect(await roleRow(id)).toMatchObject({ name: "editors", permissionScopes: body.data.permission_scopes });
  });

  it("gets, pages and lists it", async () => {
    expect((await get(`/api/admin/role/get?id=${id}`)).data).toMatchObject({ id, name: "editors" });
    expect((await get("/api/admin/role/list?page=3&per_page=1")).data).toEqual({
      content: [expect.objectContaining({ id })],
      total: 3,
    });
  });

  it("updates only the fields sent", async () => {
    const body = await post("/api/admin/role/update", {
      id,
      name: "writers",
      permission_scopes: [{ path: "/media/", permission: 8 }],
    });
    expect(body.data).toEqual({
      id,
      name: "writers",
      description: "Edit the media",
      default: false,
      permission_scopes: [{ path: "/media", permission: 8 }],
    });
    expect((await post("/api/admin/role/update", { id, description: "Write", permission_scopes: null })).data).toEqual({
      id,
      name: "writers",
      description: "Write",
      default: false,
      permission_scopes: [],
    });
  });

  it("deletes a role nobody holds", async () => {
    expect(await post(`/api/admin/role/delete?id=${id}`)).toEqual({ code: 200, message: "success", data: null });
    expect(await roleRow(id)).toBeUndefined();
    expect(await get(`/api/admin/role/get?id=${id}`)).toEqual({ code: 404, message: "role not found", data: null });
  });
});

describe("the default role", () => {
  it("default: true flags one role only and points the default_role setting at it", async () => {
    const first = await createRole({ name: "members", default: true });
    expect(first.default).toBe(true);
    expect(await defaultRoleSetting()).toBe(String(first.id));
    const second = await createRole({ name: "staff", default: true });
    expect(await flaggedDefault()).toEqual([second.id]);
    expect(await defaultRoleSetting()).toBe(String(second.id));
    expect((await post("/api/admin/role/update", { id: first.id, default: true })).data.default).toBe(true);
    expect(await flaggedDefault()).toEqual([first.id]);
    expect(await defaultRoleSetting()).toBe(String(first.id));
  });

  it("unflagging or deleting the default role hands default_role back to guest", async () => {
    const role = await createRole({ name: "temps", default: true });
    expect((await post("/api/admin/role/update", { id: role.id, default: false })).data.default).toBe(false);
    expect(await flaggedDefault()).toEqual([]);
    expect(await defaultRoleSetting()).toBe("1");
    await post("/api/admin/role/update", { id: role.id, default: true });
    expect(await post(`/api/admin/role/delete?id=${role.id}`)).toMatchObject({ code: 200 });
    expect(await defaultRoleSetting()).toBe("1");
  });

  it("unflagging a role that is not the default leaves default_role alone", async () => {
    const current = await createRole({ name: "current", default: true });
    const other = await createRole({ name: "other" });
    await post("/api/admin/role/update", { id: other.id, default: false });
    expect(await defaultRoleSetting()).toBe(String(current.id));
  });
});

describe("the admin and guest roles", () => {
  it("the admin role cannot be modified", async () => {
    const before = await roleRow(2);
    for (const change of [{ description: "x" }, { permission_scopes: [] }, { name: "root" }, {}]) {
      expect(await post("/api/admin/role/update", { id: 2, ...change })).toEqual({
        code: 400,
        message: "cannot modify admin role",
        data: null,
      });
    }
    expect(await roleRow(2)).toEqual(before);
  });

  it("the guest role cannot become the default role, as on the settings page", async () => {
    expect(await post("/api/admin/role/update", { id: 1, default: true })).toEqual({
      code: 400,
      message: "cannot set admin or guest as default role",
      data: null,
    });
    expect((await roleRow(1))!.isDefault).toBe(false);
  });

  it("the guest role keeps its name; its scopes and description can change", async () => {
    const before = await roleRow(1);
    expect(await post("/api/admin/role/update", { id: 1, name: "anonymous", description: "changed" })).toEqual({
      code: 400,
      message: "cannot rename guest role",
      data: null,
    });
    expect(await roleRow(1)).toEqual(before);
    const body = await post("/api/admin/role/update", {
      id: 1,
      name: "guest",
      permission_scopes: [{ path: "/public", permission: 1 }],
    });
    expect(body.data).toEqual({
      id: 1,
      name: "guest",
      description: "Guest",
      default: false,
      permission_scopes: [{ path: "/public", permission: 1 }],
    });
  });

  it("neither can be deleted", async () => {
    for (const id of [1, 2]) {
      expect(await post(`/api/admin/role/delete?id=${id}`)).toEqual({
        code: 400,
        message: "admin or guest role can not be deleted",
        data: null,
      });
    }
    expect(await roleRow(1)).toBeDefined();
    expect(await roleRow(2)).toBeDefined();
  });
});

describe("bad input", () => {
  it("a taken name is a 400 naming it, on create and on update, and nothing is saved", async () => {
    await createRole({ name: "auditors" });
    const count = await roleCount();
    expect(await post("/api/admin/role/create", { name: "auditors", default: true })).toEqual({
      code: 400,
      message: "role name auditors is already taken",
      data: null,
    });
    expect(await roleCount()).toBe(count);
    const setting = await defaultRoleSetting();
    const flagged = await flaggedDefault();
    const other = await createRole({ name: "reviewers", description: "r" });
    expect(
      await post("/api/admin/role/update", { id: other.id, name: "auditors", description: "changed", default: true }),
    ).toEqual({
      code: 400,
      message: "role name auditors is already taken",
      data: null,
    });
    expect(await roleRow(other.id)).toMatchObject({ name: "reviewers", description: "r", isDefault: false });
    expect(await defaultRoleSetting()).toBe(setting);
    expect(await flaggedDefault()).toEqual(flagged);
  });

  it("a role held by users is not deleted; the refusal names up to five of them", async () => {
    const role = await createRole({ name: "crowd" });
    await insertUsers(["u1", "u2", "u3", "u4", "u5", "u6", "u7"], [role.id]);
    expect(await post(`/api/admin/role/delete?id=${role.id}`)).toEqual({
      code: 400,
      message: "role crowd is still assigned to u1, u2, u3, u4, u5 and 2 more; remove it from them first",
      data: null,
    });
    expect(await roleRow(role.id)).toBeDefined();

    const few = await createRole({ name: "few" });
    await insertUsers(["v1"], [role.id, few.id]);
    expect((await post(`/api/admin/role/delete?id=${few.id}`)).message).toBe(
      "role few is still assigned to v1; remove it from them first",
    );
  });

  it("a scope permission outside the bits of AList v3.58 is a 400", async () => {
    for (const permission of [65536, -1, 0.5, "1"]) {
      const body = await post("/api/admin/role/create", {
        name: "wide",
        permission_scopes: [{ path: "/", permission }],
      });
      expect(body.code).toBe(400);
      expect(body.message).toMatch(/^permission_scopes\.0\.permission: /);
    }
    expect(await fixture.db.select().from(roles).where(eq(roles.name, "wide"))).toEqual([]);
  });

  it("wrong types, missing fields and malformed JSON get a 400 naming the problem", async () => {
    expect((await post("/api/admin/role/create", {})).message).toMatch(/^name: /);
    expect((await post("/api/admin/role/create", { name: "" })).message).toMatch(/^name: /);
    expect((await post("/api/admin/role/create", { name: "x", default: "true" })).message).toMatch(/^default: /);
    expect(
      (await post("/api/admin/role/create", { name: "x", permission_scopes: [{ permission: 1 }] })).message,
    ).toMatch(/^permission_scopes\.0\.path: /);
    expect((await post("/api/admin/role/update", { name: "x" })).message).toMatch(/^id: /);
    expect((await post("/api/admin/role/update", { id: -3 })).message).toMatch(/^id: /);
    expect((await post("/api/admin/role/create", "[")).message).toMatch(/^malformed JSON body/);
  });

  it("a bad id in the query is a 400; an unknown one a 404", async () => {
    for (const path of ["/api/admin/role/get", "/api/admin/role/delete"]) {
      const call = (query: string) => (path.endsWith("/get") ? get(path + query) : post(path + query));
      for (const query of ["", "?id=", "?id=0", "?id=-2", "?id=abc"]) {
        const body = await call(query);
        expect(body.code, path + query).toBe(400);
        expect(body.message).toMatch(/^id: /);
      }
      expect(await call("?id=999")).toEqual({ code: 404, message: "role not found", data: null });
    }
    const setting = await defaultRoleSetting();
    expect(await post("/api/admin/role/update", { id: 999, name: "ghost", default: true })).toEqual({
      code: 404,
      message: "role not found",
      data: null,
    });
    expect(await defaultRoleSetting()).toBe(setting);
  });
});

describe("access", () => {
  const routes: [method: "GET" | "POST", path: string, body?: unknown][] = [
    ["GET", "/api/admin/role/list"],
    ["GET", "/api/admin/role/get?id=1"],
    ["POST", "/api/admin/role/create", { name: "sneaky" }],
    ["POST", "/api/admin/role/update", { id: 1, description: "sneaky" }],
    ["POST", "/api/admin/role/delete?id=3"],
  ];
  it("a signed-in user who is not an admin gets 403, and nothing changes", async () => {
    await insertUsers(["walt"], []);
    const token = (await login(fixture, { username: "walt", password: "pw" })).data!.token;
    const before = await fixture.db.select().from(roles);
    for (const [method, path, body] of routes) {
      expect(await readEnvelope(await send(fixture, method, path, body, { Authorization: token })), path).toEqual({
        code: 403,
        message: "You are not an admin",
        data: null,
      });
    }
    expect(await fixture.db.select().from(roles)).toEqual(before);
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
});
