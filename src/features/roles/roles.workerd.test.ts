// The admin role API in workerd over Hrana/HTTP, with round trips counted at the database endpoint:
// the guard is one, each endpoint's own work one more.
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { apiAs, call, inTrips, signIn } from "../../../test/support/workerd-client.ts";

const get = (path: string, token = admin) => call(path, { headers: { Authorization: token } });
const { post } = apiAs(() => admin);

let admin: string;
beforeAll(async () => {
  await sql("DELETE FROM login_failures");
  admin = await signIn("roles");
});
beforeEach(async () => {
  await sql("DELETE FROM login_failures");
});

describe("roles in workerd", () => {
  it("create, update and delete: two round trips each; list and get: one (their reads travel in the guard's batch)", async () => {
    const created = await inTrips(2, () =>
      post("/api/admin/role/create", {
        name: "wk-editors",
        default: true,
        permission_scopes: [{ path: "media/", permission: 8 }],
      }),
    );
    expect(created.data).toEqual({
      id: expect.any(Number),
      name: "wk-editors",
      description: "",
      default: true,
      permission_scopes: [{ path: "/media", permission: 8 }],
    });
    const id = created.data.id;
    expect(await sql("SELECT value FROM settings WHERE key = 'default_role'")).toEqual([[String(id)]]);

    const listed = await inTrips(1, () => get("/api/admin/role/list"));
    expect(listed.data.content.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(["guest", "admin", "wk-editors"]),
    );
    expect((await inTrips(1, () => get(`/api/admin/role/get?id=${id}`))).data.name).toBe("wk-editors");

    const updated = await inTrips(2, () => post("/api/admin/role/update", { id, description: "edit", default: false }));
    expect(updated.data).toMatchObject({ description: "edit", default: false });
    expect(await sql("SELECT value FROM settings WHERE key = 'default_role'")).toEqual([["1"]]);

    expect(await inTrips(2, () => post(`/api/admin/role/delete?id=${id}`))).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await sql("SELECT count(*) FROM roles WHERE id = ?", [id])).toEqual([[0]]);
  });

  it("refuses a duplicate name over Hrana with a 400 naming it, and saves nothing", async () => {
    const first = await post("/api/admin/role/create", { name: "wk-dup" });
    const before = await sql("SELECT count(*) FROM roles");
    expect(await inTrips(2, () => post("/api/admin/role/create", { name: "wk-dup", default: true }))).toEqual({
      code: 400,
      message: "role name wk-dup is already taken",
      data: null,
    });
    expect(await sql("SELECT count(*) FROM roles")).toEqual(before);
    expect(await sql("SELECT value FROM settings WHERE key = 'default_role'")).toEqual([["1"]]);
    await post(`/api/admin/role/delete?id=${first.data.id}`);
  });

  it("refuses to modify the admin role without touching the database", async () => {
    expect(await inTrips(1, () => post("/api/admin/role/update", { id: 2, description: "x" }))).toEqual({
      code: 400,
      message: "cannot modify admin role",
      data: null,
    });
  });
});
