// The served web UI's roles (roles.ts, docs/decisions.md D17): requests marked by the page get
// OpenList's role numbers where they carry roles, and the user form's number is read as "unchanged";
// every other client keeps AList's arrays of role ids, byte for byte the same replies as before.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tasks, users } from "../../db/schema.ts";
import { getAs, postJson, signInAdmin } from "../../../test/support/auth.ts";
import { createUnitFixture, insertRole, insertUser, type UnitFixture } from "../../../test/support/unit.ts";
import { WEB_UI_HEADER, WEB_UI_MARK } from "./roles.ts";

const UI = { [WEB_UI_HEADER]: WEB_UI_MARK };

let fixture: UnitFixture;
let admin: string;
let editorsId: number;
let carolId: number;
let carol: string;
beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
  editorsId = await insertRole(fixture, "editors", [{ path: "/", permission: 8 }]);
  carolId = await insertUser(fixture, "carol", "carol pw", { roleIds: [editorsId] });
  const login = await postJson(fixture, "/api/auth/login", { username: "carol", password: "carol pw" });
  carol = ((await login.json()) as { data: { token: string } }).data.token;
});
afterAll(() => fixture.close());

const rolesOf = async (id: number) =>
  (await fixture.db.select({ roleIds: users.roleIds }).from(users).where(eq(users.id, id)))[0]!.roleIds;

describe("GET /api/me", () => {
  it("gives the served UI the admin's and a custom-role user's role as OpenList's number", async () => {
    expect((await getAs(fixture, "/api/me", admin, UI)).data).toMatchObject({ username: "admin", role: 2 });
    expect((await getAs(fixture, "/api/me", carol, UI)).data).toMatchObject({ username: "carol", role: 0 });
  });

  it("keeps AList's array of role ids for every other client, and for another value of the header", async () => {
    expect((await getAs(fixture, "/api/me", admin)).data).toMatchObject({ role: [2], role_names: ["admin"] });
    expect((await getAs(fixture, "/api/me", carol)).data).toMatchObject({ role: [editorsId] });
    expect((await getAs(fixture, "/api/me", carol, { [WEB_UI_HEADER]: "alist" })).data.role).toEqual([editorsId]);
  });

  it("leaves the rest of the reply as it was", async () => {
    const plain = await getAs(fixture, "/api/me", carol);
    const marked = await getAs(fixture, "/api/me", carol, UI);
    expect(marked).toEqual({ ...plain, data: { ...plain.data, role: 0 } });
  });

  it("passes a refusal through untouched", async () => {
    expect(await getAs(fixture, "/api/me", "not a token", UI)).toMatchObject({ code: 401, data: null });
  });
});

describe("the users page", () => {
  it("lists users of every role with OpenList's numbers: admin 2, guest 1, a custom role 0", async () => {
    const listed = await getAs(fixture, "/api/admin/user/list", admin, UI);
    expect(listed.code).toBe(200);
    const byName = Object.fromEntries(
      (listed.data.content as { username: string; role: unknown }[]).map((u) => [u.username, u.role]),
    );
    expect(byName).toEqual({ admin: 2, guest: 1, carol: 0 });
    // An API client still reads the ids.
    const plain = await getAs(fixture, "/api/admin/user/list", admin);
    expect(
      Object.fromEntries(
        (plain.data.content as { username: string; role: unknown }[]).map((u) => [u.username, u.role]),
      ),
    ).toEqual({ admin: [2], guest: [1], carol: [editorsId] });
    expect((await getAs(fixture, `/api/admin/user/get?id=${carolId}`, admin, UI)).data.role).toBe(0);
  });

  it("saves the edit form, which posts back the number it read, without touching the user's roles", async () => {
    const read = (await getAs(fixture, `/api/admin/user/get?id=${carolId}`, admin, UI)).data;
    const saved = await postJson(
      fixture,
      "/api/admin/user/update",
      { ...read, base_path: "/carol" },
      {
        Authorization: admin,
        ...UI,
      },
    );
    expect(await saved.json()).toMatchObject({ code: 200, data: { username: "carol", base_path: "/carol", role: 0 } });
    expect(await rolesOf(carolId)).toEqual([editorsId]);
  });

  it("creates a user from the add form's role 0 with the default role, as a body without role does", async () => {
    const form = { id: 0, username: "dora", password: "dora pw", base_path: "/", role: 0, permission: 0 };
    const created = await postJson(fixture, "/api/admin/user/create", form, { Authorization: admin, ...UI });
    const reply = (await created.json()) as { code: number; data: { id: number; role: unknown } };
    expect(reply.code).toBe(200);
    expect(reply.data.role).toBe(0);
    const withoutRole = await postJson(
      fixture,
      "/api/admin/user/create",
      { username: "eve", password: "eve pw" },
      { Authorization: admin },
    );
    const plain = (await withoutRole.json()) as { data: { id: number } };
    expect(await rolesOf(reply.data.id)).toEqual(await rolesOf(plain.data.id));
  });

  it("still refuses a number from an API client: the AList wire takes role ids only", async () => {
    const created = await postJson(
      fixture,
      "/api/admin/user/create",
      { username: "fred", password: "fred pw", role: 0 },
      { Authorization: admin },
    );
    expect(await created.json()).toMatchObject({ code: 400 });
  });

  it("answers a malformed body from the page as it answers anyone", async () => {
    const plain = await postJson(fixture, "/api/admin/user/update", "{not json", { Authorization: admin });
    const marked = await postJson(fixture, "/api/admin/user/update", "{not json", { Authorization: admin, ...UI });
    expect(await marked.json()).toEqual(await plain.json());
  });
});

describe("task lists", () => {
  it("give the creator's role as OpenList's number to the page, as ids to others", async () => {
    await fixture.db.insert(tasks).values({
      id: "task-of-carol",
      kind: "copy",
      name: "copy [/a](/x) to [/b](/)",
      creatorId: carolId,
      creator: "carol",
      creatorRoles: [editorsId],
      state: 2,
      payload: {},
      createdAtMs: Date.now(),
    });
    const marked = await getAs(fixture, "/api/admin/task/copy/done", admin, UI);
    expect(marked.data).toEqual([expect.objectContaining({ id: "task-of-carol", creator_role: 0 })]);
    const plain = await getAs(fixture, "/api/admin/task/copy/done", admin);
    expect(plain.data).toEqual([expect.objectContaining({ id: "task-of-carol", creator_role: [editorsId] })]);
  });
});
