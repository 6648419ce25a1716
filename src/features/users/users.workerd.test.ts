// The admin user API in workerd over Hrana/HTTP, with round trips counted at the database endpoint:
// the guard is one, each endpoint's own work one more (del_cache has none). (Roles:
// src/features/roles/roles.workerd.test.ts.)
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { apiAs, call, inTrips, signIn } from "../../../test/support/workerd-client.ts";

const get = (path: string, token = admin) => call(path, { headers: { Authorization: token } });
const { post } = apiAs(() => admin);

let admin: string;
beforeAll(async () => {
  await sql("DELETE FROM login_failures");
  admin = await signIn("users");
});
beforeEach(async () => {
  await sql("DELETE FROM login_failures");
});

describe("users in workerd", () => {
  it("the life cycle: two round trips per change, one per read, tokens dying on password change and on disable", async () => {
    const role = (
      await post("/api/admin/role/create", { name: "wk-viewers", permission_scopes: [{ path: "/", permission: 1 }] })
    ).data;

    const created = await inTrips(2, () =>
      post("/api/admin/user/create", { username: "wk-user", password: "wk pw", role: [role.id], base_path: "wk//" }),
    );
    expect(created.data).toEqual({
      id: expect.any(Number),
      username: "wk-user",
      password: "",
      base_path: "/wk",
      role: [role.id],
      disabled: false,
      permission: 0,
      otp: false,
      sso_id: "",
      allow_ldap: false,
    });
    const id = created.data.id;

    const listed = await inTrips(1, () => get("/api/admin/user/list"));
    expect(listed.data.total).toBe(listed.data.content.length);
    expect(listed.data.content.map((u: { username: string }) => u.username)).toContain("wk-user");
    expect((await inTrips(1, () => get(`/api/admin/user/get?id=${id}`))).data.username).toBe("wk-user");

    // A new password: the user's token dies on its next request.
    let token = await signIn("wk-device", "wk-user", "wk pw");
    expect((await inTrips(2, () => post("/api/admin/user/update", { id, password: "wk new pw" }))).code).toBe(200);
    expect(await get("/api/me", token)).toEqual({
      code: 401,
      message: "Password has been changed, login please",
      data: null,
    });

    // Disabling: the token dies and the device sessions end in the same round trip.
    token = await signIn("wk-device", "wk-user", "wk new pw");
    expect((await inTrips(2, () => post("/api/admin/user/update", { id, disabled: true }))).data.disabled).toBe(true);
    expect(await get("/api/me", token)).toEqual({
      code: 401,
      message: "Current user is disabled, replace please",
      data: null,
    });
    expect(await sql("SELECT DISTINCT status FROM device_sessions WHERE user_id = ?", [id])).toEqual([[1]]);

    expect(await inTrips(2, () => post(`/api/admin/user/cancel_2fa?id=${id}`))).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await inTrips(1, () => post("/api/admin/user/del_cache?username=wk-user"))).toEqual({
      code: 200,
      message: "success",
      data: null,
    });

    // Deleting takes the sessions and SSH keys with the user, in one round trip.
    await sql(
      "INSERT INTO ssh_public_keys (user_id, title, fingerprint, key_str, added_time, last_used_time) VALUES (?, 'k', 'SHA256:x', 'ssh-ed25519 AAAA', 0, 0)",
      [id],
    );
    expect(await inTrips(2, () => post(`/api/admin/user/delete?id=${id}`))).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(
      await sql(
        "SELECT (SELECT count(*) FROM users WHERE id = ?1), (SELECT count(*) FROM device_sessions WHERE user_id = ?1), (SELECT count(*) FROM ssh_public_keys WHERE user_id = ?1)",
        [id],
      ),
    ).toEqual([[0, 0, 0]]);

    await post(`/api/admin/role/delete?id=${role.id}`);
  });

  it("refuses a duplicate username over Hrana with a 400 naming it, and saves nothing", async () => {
    const before = await sql("SELECT count(*) FROM users");
    expect(await inTrips(2, () => post("/api/admin/user/create", { username: "admin", password: "x" }))).toEqual({
      code: 400,
      message: "username admin is already taken",
      data: null,
    });
    expect(await sql("SELECT count(*) FROM users")).toEqual(before);
  });

  it("refuses the admin's and guest's protected changes in one round trip, and changes nothing", async () => {
    const before = await sql("SELECT * FROM users WHERE id IN (1, 2) ORDER BY id");
    expect(await inTrips(2, () => post("/api/admin/user/delete?id=2"))).toEqual({
      code: 400,
      message: "admin or guest user can not be deleted",
      data: null,
    });
    expect(await inTrips(2, () => post("/api/admin/user/update", { id: 2, disabled: true }))).toEqual({
      code: 400,
      message: "admin user can not be disabled",
      data: null,
    });
    expect(await inTrips(2, () => post("/api/admin/user/update", { id: 1, role: [2] }))).toEqual({
      code: 400,
      message: "cannot change role of guest user",
      data: null,
    });
    expect(await sql("SELECT * FROM users WHERE id IN (1, 2) ORDER BY id")).toEqual(before);
  });

  it("answers a missing user with 404 and a bad id with 400", async () => {
    expect(await inTrips(1, () => get("/api/admin/user/get?id=99999"))).toEqual({
      code: 404,
      message: "user not found",
      data: null,
    });
    expect((await get("/api/admin/user/get?id=abc")).code).toBe(400);
  });
});
