// The setting group in workerd over Hrana/HTTP, with the round trips each endpoint costs counted
// at the database endpoint. Every count includes the guard's one round trip (the permanent token,
// like a login token, costs one). With a login token a save writes in the guard's batch: see the last group.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { call, type Envelope, signIn } from "../../../test/support/workerd-client.ts";
import { ADMIN_ROLE_ID } from "../../auth/roles.ts";

let token: string;
const as = (authorization: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { Authorization: authorization, ...init.headers },
});
const postJson = (path: string, body: unknown) =>
  call(
    path,
    as(token, {
      method: "POST",
      headers: { "Content-Type": "application/json;charset=UTF-8" },
      body: JSON.stringify(body),
    }),
  );

/** The endpoint's reply and the round trips it took. */
async function counted(request: () => Promise<Envelope>): Promise<{ reply: Envelope; trips: number }> {
  const trips = await roundTrips();
  const reply = await request();
  return { reply, trips: await trips.count() };
}

let original: unknown[][];
beforeAll(async () => {
  original = await sql("SELECT key, value FROM settings");
  token = (await sql("SELECT value FROM settings WHERE key = 'token'"))[0]![0] as string;
});
afterAll(async () => {
  for (const [key, value] of original)
    await sql("UPDATE settings SET value = ? WHERE key = ?", [value as string, key as string]);
  await sql("DELETE FROM settings WHERE key = 'retired_feature'");
  await sql("DELETE FROM users WHERE username IN ('deputy', 'member')");
  await sql("DELETE FROM roles WHERE name = 'visitors'");
});

describe("setting endpoints in workerd", () => {
  it("the guard alone costs one round trip with the permanent token", async () => {
    expect(await counted(() => call("/api/me", as(token)))).toMatchObject({ reply: { code: 200 }, trips: 1 });
  });

  it("list: one round trip (the guard, the settings and the role names in one batch)", async () => {
    const { reply, trips } = await counted(() => call("/api/admin/setting/list?groups=5,0", as(token)));
    expect(reply.data.map((i: { key: string }) => i.key)).toContain("token");
    expect(trips).toBe(1);
  });

  it("get: one round trip for `key` and for `keys`, the guard's included", async () => {
    expect(await counted(() => call("/api/admin/setting/get?key=default_role", as(token)))).toMatchObject({
      reply: { code: 200, data: { key: "default_role", value: "guest" } },
      trips: 1,
    });
    const many = await counted(() => call("/api/admin/setting/get?keys=site_title,version", as(token)));
    expect(many.reply.data.map((i: { key: string }) => i.key)).toEqual(["site_title", "version"]);
    expect(many.trips).toBe(1);
  });

  it("save with the permanent token: one round trip to read (with the guard), one to write; the public settings show it at once, then cost none", async () => {
    const group = (await call("/api/admin/setting/list?group=1", as(token))).data as { key: string; value: string }[];
    const edited = group.map((item) => (item.key === "site_title" ? { ...item, value: "Workerd Files" } : item));
    expect(await counted(() => postJson("/api/admin/setting/save", edited))).toEqual({
      reply: { code: 200, message: "success", data: null },
      trips: 2,
    });
    expect(await counted(() => call("/api/public/settings"))).toMatchObject({
      reply: { data: { site_title: "Workerd Files" } },
      trips: 1,
    });
    expect(await counted(() => call("/api/public/settings"))).toMatchObject({
      reply: { data: { site_title: "Workerd Files" } },
      trips: 0,
    });
  });

  it("save: nothing changed or a refused value costs the read only, and writes nothing", async () => {
    expect(
      await counted(() => postJson("/api/admin/setting/save", [{ key: "site_title", value: "Workerd Files" }])),
    ).toMatchObject({ reply: { code: 200 }, trips: 1 });
    const refused = await counted(() =>
      postJson("/api/admin/setting/save", [
        { key: "site_title", value: "Other" },
        { key: "allow_indexed", value: "nope" },
      ]),
    );
    expect(refused).toEqual({
      reply: { code: 400, message: "allow_indexed: must be true or false", data: null },
      trips: 1,
    });
    expect(await sql("SELECT value FROM settings WHERE key = 'site_title'")).toEqual([["Workerd Files"]]);
  });

  it("delete: one round trip", async () => {
    await sql("INSERT INTO settings (key, value, flag) VALUES ('retired_feature', 'x', 3)");
    expect(
      await counted(() => call("/api/admin/setting/delete?key=retired_feature", as(token, { method: "POST" }))),
    ).toEqual({
      reply: { code: 200, message: "success", data: {} },
      trips: 1 + 1,
    });
    expect(await sql("SELECT key FROM settings WHERE key = 'retired_feature'")).toEqual([]);
  });

  it("reset_token: one round trip; the old token is refused and the new one is the admin on the next request", async () => {
    const old = token;
    const { reply, trips } = await counted(() => call("/api/admin/setting/reset_token", as(old, { method: "POST" })));
    expect(reply.code).toBe(200);
    expect(trips).toBe(1 + 1);
    token = reply.data;
    expect(await call("/api/me", as(old))).toEqual({ code: 401, message: "token is invalidated", data: null });
    expect((await call("/api/me", as(token))).data.username).toBe("admin");
  });

  it("set_token: one round trip; the chosen token works at once", async () => {
    const old = token;
    const { reply, trips } = await counted(() =>
      postJson("/api/admin/setting/set_token", { token: "workerd-chosen-token-0123" }),
    );
    expect(reply).toEqual({ code: 200, message: "success", data: "workerd-chosen-token-0123" });
    expect(trips).toBe(1 + 1);
    token = reply.data;
    expect((await call("/api/me", as(old))).code).toBe(401);
    expect((await call("/api/me", as(token))).data.username).toBe("admin");
  });

  it("set_aria2: one round trip to save; a service that cannot be reached is code 500 naming why, settings kept", async () => {
    // Port 9 (discard) has no listener on 127.0.0.1 here. workerd reports a refused connection as
    // "Network connection lost." (and logs the refusal itself, which is expected noise).
    const uri = "http://127.0.0.1:9/jsonrpc";
    const { reply, trips } = await counted(() =>
      postJson("/api/admin/setting/set_aria2", { uri, secret: "workerd-secret" }),
    );
    expect(reply).toEqual({ code: 500, message: "failed get aria2 version: Network connection lost.", data: null });
    expect(trips).toBe(1 + 1);
    expect(await sql("SELECT value FROM settings WHERE key IN ('aria2_uri', 'aria2_secret') ORDER BY key")).toEqual([
      ["workerd-secret"],
      [uri],
    ]);
  });
});

// With a login token, a save's values travel in the guard's batch, conditioned in SQL on what the
// guard then checks in the Worker (store.ts settingsSave, auth/store.ts sessionIsAdmin): one round
// trip. Nothing may be written for a request the Worker then refuses.
describe("setting save with a login token", () => {
  const title = async () => (await sql("SELECT value FROM settings WHERE key = 'site_title'"))[0]![0];
  const save = (jwt: string, items: unknown) =>
    counted(() =>
      call(
        "/api/admin/setting/save",
        as(jwt, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(items) }),
      ),
    );
  let deputy: string;

  beforeAll(async () => {
    // A second admin (the first one's password) and a member, whose accounts the tests below break.
    await sql(
      "INSERT INTO users (username, password_hash, pwd_ts, role) SELECT 'deputy', password_hash, pwd_ts, ? FROM users WHERE username = 'admin'",
      [`[${ADMIN_ROLE_ID}]`],
    );
    await sql(
      "INSERT INTO users (username, password_hash, pwd_ts, role) SELECT 'member', password_hash, pwd_ts, '[]' FROM users WHERE username = 'admin'",
    );
    deputy = await signIn("settings-deputy", "deputy");
  });

  it("writes in the guard's batch: one round trip, read-only values sent back unchanged included", async () => {
    const group = (await call("/api/admin/setting/list?group=1", as(deputy))).data as { key: string; value: string }[];
    expect(group.some((item) => item.key === "version")).toBe(true);
    const edited = group.map((item) => (item.key === "site_title" ? { ...item, value: "One Trip" } : item));
    expect(await save(deputy, edited)).toEqual({ reply: { code: 200, message: "success", data: null }, trips: 1 });
    expect(await title()).toBe("One Trip");
    expect(await counted(() => call("/api/public/settings"))).toMatchObject({
      reply: { data: { site_title: "One Trip" } },
      trips: 1,
    });
  });

  it("a new default role is written with the roles' default flag, in the same round trip", async () => {
    await sql("INSERT INTO roles (name) VALUES ('visitors')");
    const [[visitors]] = (await sql("SELECT id FROM roles WHERE name = 'visitors'")) as [[number]];
    const before = (await sql("SELECT value FROM settings WHERE key = 'default_role'"))[0]![0] as string;
    expect(
      await save(deputy, [
        { key: "default_role", value: "visitors" },
        { key: "site_title", value: "With Visitors" },
      ]),
    ).toEqual({
      reply: { code: 200, message: "success", data: null },
      trips: 1,
    });
    expect(await sql("SELECT value FROM settings WHERE key IN ('default_role', 'site_title') ORDER BY key")).toEqual([
      [String(visitors)],
      ["With Visitors"],
    ]);
    expect(await sql("SELECT name FROM roles WHERE is_default = 1")).toEqual([["visitors"]]);
    // Sent back unchanged (the web UI saves whole groups): accepted, nothing moves.
    expect(await save(deputy, [{ key: "default_role", value: "visitors" }])).toMatchObject({
      reply: { code: 200 },
      trips: 1,
    });
    expect(await sql("SELECT name FROM roles WHERE is_default = 1")).toEqual([["visitors"]]);
    await sql("UPDATE settings SET value = ? WHERE key = 'default_role'", [before]);
    await sql("UPDATE roles SET is_default = CAST(id AS TEXT) = ?", [before]);
  });

  it("writes nothing when another item is refused, or a read-only value would change", async () => {
    await sql("UPDATE settings SET value = 'Kept' WHERE key = 'site_title'");
    expect(
      await save(deputy, [
        { key: "site_title", value: "Lost" },
        { key: "allow_indexed", value: "nope" },
      ]),
    ).toEqual({
      reply: { code: 400, message: "allow_indexed: must be true or false", data: null },
      trips: 1,
    });
    expect(
      await save(deputy, [
        { key: "site_title", value: "Lost" },
        { key: "version", value: "v9" },
      ]),
    ).toMatchObject({ reply: { code: 400, message: "version: is read-only" }, trips: 1 });
    expect(
      await save(deputy, [
        { key: "site_title", value: "Lost" },
        { key: "default_role", value: "no such role" },
      ]),
    ).toMatchObject({ reply: { code: 400 }, trips: 1 });
    const defaults = await sql("SELECT id FROM roles WHERE is_default = 1");
    for (const name of ["admin", "guest"]) {
      const [[stored]] = (await sql("SELECT value FROM settings WHERE key = 'default_role'")) as [[string]];
      const [[id]] = (await sql("SELECT CAST(id AS TEXT) FROM roles WHERE name = ?", [name])) as [[string]];
      if (id === stored) continue; // unchanged is accepted
      expect(
        await save(deputy, [
          { key: "site_title", value: "Lost" },
          { key: "default_role", value: name },
        ]),
      ).toMatchObject({ reply: { code: 400 }, trips: 1 });
    }
    expect(await sql("SELECT id FROM roles WHERE is_default = 1")).toEqual(defaults);
    expect(
      await save(deputy, [
        { key: "site_title", value: "Lost" },
        { key: "site_title", value: "Lost twice" },
      ]),
    ).toMatchObject({ reply: { code: 400 }, trips: 1 });
    expect(
      await save(deputy, [
        { key: "site_title", value: "Lost" },
        { key: "no_such_key", value: "x" },
      ]),
    ).toMatchObject({ reply: { code: 400 }, trips: 1 });
    expect(await title()).toBe("Kept");
  });

  it("writes nothing for a caller the guard refuses, whatever the reason", async () => {
    await sql("UPDATE settings SET value = 'Kept' WHERE key = 'site_title'");
    const attempt = async (jwt: string, code: number) => {
      expect((await save(jwt, [{ key: "site_title", value: "Lost" }])).reply.code).toBe(code);
      expect(await title()).toBe("Kept");
    };
    await attempt(await signIn("settings-member", "member"), 403);
    const cases: [string, string, string][] = [
      [
        "disabled",
        "UPDATE users SET disabled = 1 WHERE username = 'deputy'",
        "UPDATE users SET disabled = 0 WHERE username = 'deputy'",
      ],
      [
        "password changed",
        "UPDATE users SET pwd_ts = pwd_ts + 1 WHERE username = 'deputy'",
        "UPDATE users SET pwd_ts = pwd_ts - 1 WHERE username = 'deputy'",
      ],
      [
        "admin role taken away",
        "UPDATE users SET role = '[]' WHERE username = 'deputy'",
        `UPDATE users SET role = '[${ADMIN_ROLE_ID}]' WHERE username = 'deputy'`,
      ],
      [
        "renamed",
        "UPDATE users SET username = 'deputy2' WHERE username = 'deputy'",
        "UPDATE users SET username = 'deputy' WHERE username = 'deputy2'",
      ],
      [
        "session ended",
        "UPDATE device_sessions SET status = 1 WHERE user_id = (SELECT id FROM users WHERE username = 'deputy')",
        "UPDATE device_sessions SET status = 0 WHERE user_id = (SELECT id FROM users WHERE username = 'deputy')",
      ],
      [
        "token replaced by a later sign-in",
        "UPDATE device_sessions SET token_id = 'another' WHERE user_id = (SELECT id FROM users WHERE username = 'deputy')",
        "",
      ],
    ];
    for (const [why, breakIt, mendIt] of cases) {
      await sql(breakIt);
      await attempt(deputy, why === "admin role taken away" ? 403 : 401);
      if (mendIt) await sql(mendIt);
    }
  });
});
