// Access keys inside workerd against s3rver (docs/decisions.md D16): a read-only key scoped to
// /team/docs reads there through the API, /d, /p and WebDAV, and nothing else on any route or
// protocol; a read-write key writes only there; keys are refused on account and admin routes, and
// stop when they expire, are revoked, or their user is disabled, changes its password or loses the folder.
import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basic, Bits, dav, hrefs } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { poll } from "../../../test/support/poll.ts";
import { s3Addition, s3Keys, s3Put, s3Text } from "../../../test/support/upstreams.ts";
import { call, callApi, type Envelope, inTrips, makeUser, signIn } from "../../../test/support/workerd-client.ts";

const ROOT = "akeys";
const FILES_ONLY = { code: 403, message: "an access key reaches the file side only", data: null };
const DENIED = 403;

let admin: string;
let owner: string;
let ownerId: number;
let roleId: number;
/** Read-only (WebDAV read), /team/docs, API and WebDAV. */
let reader: { id: number; secret: string };
/** Read and write, /team/docs, API only. */
let writer: { id: number; secret: string };

const api = (token: string, path: string, body?: unknown, ip = "203.0.113.45") =>
  exports.default
    .fetch(
      new Request(`http://gatehouse.test${path}`, {
        method: body === undefined && !path.includes("/fs/") ? "GET" : "POST",
        headers: {
          Authorization: token,
          "CF-Connecting-IP": ip,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    )
    .then((reply) => reply.json() as Promise<Envelope>);

const names = (reply: Envelope) => (reply.data?.content ?? []).map((entry: { name: string }) => entry.name).sort();

async function makeKey(body: Record<string, unknown>, token = owner) {
  const made = await callApi(token, "/api/me/access_key/create", body);
  expect(made.code, made.message).toBe(200);
  return made.data as { id: number; secret: string; access_key_id: string | null; secret_access_key: string | null };
}

const put = (token: string, path: string, body: string) =>
  exports.default
    .fetch(
      new Request("http://gatehouse.test/api/fs/put", {
        method: "PUT",
        headers: { Authorization: token, "File-Path": encodeURIComponent(path) },
        body,
      }),
    )
    .then((reply) => reply.json() as Promise<Envelope>);

beforeAll(async () => {
  admin = await signIn("access-keys");
  await sql("DELETE FROM storages");
  await sql("DELETE FROM metas");
  await s3Put(`${ROOT}/team/docs/a.txt`, "docs a");
  await s3Put(`${ROOT}/team/docs/sub/b.txt`, "docs b");
  await s3Put(`${ROOT}/team/secret.txt`, "team secret");
  await s3Put(`${ROOT}-other/x.txt`, "other x");
  for (const [mount, root] of [
    ["/team", `/${ROOT}/team`],
    ["/other", `/${ROOT}-other`],
  ] as const) {
    const made = await callApi(admin, "/api/admin/storage/create", {
      mount_path: mount,
      driver: "S3",
      addition: JSON.stringify({ ...s3Addition(), root_folder_path: root }),
    });
    expect(made.code, made.message).toBe(200);
  }
  ownerId = await makeUser(admin, "keyholder", { "/": Bits.ALL & ~Bits.PATH_LIMIT });
  roleId = Number((await sql("SELECT id FROM roles WHERE name = 'keyholder-role'"))[0]![0]);
  owner = await signIn("keyholder", "keyholder", "keyholder password");
  reader = await makeKey({
    name: "reader",
    path: "/team/docs",
    permission: Bits.WEBDAV_READ,
    usage: ["api", "webdav"],
  });
  writer = await makeKey({
    name: "writer",
    path: "/team/docs",
    permission: Bits.WRITE | Bits.RENAME | Bits.MOVE | Bits.COPY | Bits.REMOVE | Bits.WEBDAV_READ | Bits.WEBDAV_MANAGE,
    usage: ["api"],
  });
});

afterAll(async () => {
  await sql("DELETE FROM storages");
});

describe("making and listing keys", () => {
  it("answers the secret once, stores its hash and seals the S3 secret", async () => {
    const made = await makeKey({ name: "s3 tool", path: "/team", permission: 0, expires_at: 0, usage: ["s3"] });
    expect(made.secret).toMatch(/^gh-key-[A-Za-z0-9]{32}$/);
    expect(made.access_key_id).toMatch(/^GK[A-Z0-9]{18}$/);
    expect(made.secret_access_key).toMatch(/^[A-Za-z0-9]{40}$/);
    const [row] = (await sql("SELECT hash, s3_secret, path, permission, usage FROM app_passwords WHERE id = ?", [
      made.id,
    ])) as [string, string, string, number, string][];
    expect(row![0]).toMatch(/^[0-9a-f]{64}$/);
    expect(row![0]).not.toContain(made.secret);
    expect(row![1]).toMatch(/^v1\./);
    expect(row![1]).not.toContain(made.secret_access_key);
    expect(row!.slice(2)).toEqual(["/team", 0, '["s3"]']);

    const listed = await api(owner, "/api/me/access_key/list");
    expect(listed.code).toBe(200);
    const entry = listed.data.find((key: { id: number }) => key.id === made.id);
    expect(entry).toEqual({
      id: made.id,
      name: "s3 tool",
      path: "/team",
      permission: 0,
      expires_at: 0,
      usage: ["s3"],
      access_key_id: made.access_key_id,
      created: expect.any(String),
      last_used: null,
    });
    expect(JSON.stringify(listed.data)).not.toContain(made.secret);
    expect((await callApi(owner, "/api/me/access_key/delete", { id: made.id })).code).toBe(200);
  });

  it("refuses a folder outside the user's reach, rights it lacks, a past expiry", async () => {
    const scoped = await makeUser(admin, "keyholder-narrow", { "/team/docs": Bits.WEBDAV_READ });
    expect(scoped).toBeGreaterThan(0);
    const narrow = await signIn("keyholder-narrow", "keyholder-narrow", "keyholder-narrow password");
    const before = await sql("SELECT count(*) FROM app_passwords");
    expect(await callApi(narrow, "/api/me/access_key/create", { name: "x", path: "/other" })).toMatchObject({
      code: 403,
      message: "the key's folder is outside your reach",
    });
    expect(
      await callApi(narrow, "/api/me/access_key/create", { name: "x", path: "/team/docs/../../other" }),
    ).toMatchObject({ code: 403 });
    expect(
      await callApi(narrow, "/api/me/access_key/create", { name: "x", path: "/team/docs", permission: Bits.WRITE }),
    ).toMatchObject({ code: 400, message: "an access key cannot have rights its user lacks in its folder" });
    expect(
      await callApi(narrow, "/api/me/access_key/create", { name: "x", path: "/team/docs", expires_at: 1000 }),
    ).toMatchObject({ code: 400, message: "expires_at must be 0 (never) or a time to come" });
    expect(await callApi(narrow, "/api/me/access_key/create", { name: "x", usage: [] })).toMatchObject({ code: 400 });
    expect(await sql("SELECT count(*) FROM app_passwords")).toEqual(before);
    // Without permission: the reading bits the user holds there.
    const made = await makeKey({ name: "default", path: "/team/docs" }, narrow);
    expect((await sql("SELECT permission FROM app_passwords WHERE id = ?", [made.id]))[0]).toEqual([Bits.WEBDAV_READ]);
  });
});

describe("a read-only key scoped to /team/docs", () => {
  it("lists and reads there through the API, raw or Bearer, in one round trip", async () => {
    for (const token of [reader.secret, `Bearer ${reader.secret}`]) {
      const listed = await inTrips(1, () => api(token, "/api/fs/list", { path: "/team/docs" }));
      expect(listed.code, listed.message).toBe(200);
      expect(names(listed)).toEqual(["a.txt", "sub"]);
    }
    const got = await api(reader.secret, "/api/fs/get", { path: "/team/docs/sub/b.txt" });
    expect(got).toMatchObject({ code: 200, data: { name: "b.txt", size: 6 } });
    expect((await api(reader.secret, "/api/me")).data.username).toBe("keyholder");
  });

  it("downloads through /d and /p with the links the API gives it", async () => {
    const got = await api(reader.secret, "/api/fs/get", { path: "/team/docs/a.txt" });
    const query = got.data.sign ? `?sign=${got.data.sign}` : "";
    for (const prefix of ["/d", "/p"]) {
      const reply = await exports.default.fetch(
        new Request(`http://gatehouse.test${prefix}/team/docs/a.txt${query}`, { redirect: "manual" }),
      );
      if (reply.status === 302) {
        expect(prefix).toBe("/d");
        expect(await (await fetch(reply.headers.get("Location")!)).text()).toBe("docs a");
      } else {
        expect(reply.status, prefix).toBe(200);
        expect(await reply.text()).toBe("docs a");
      }
    }
  });

  it("is refused everything outside its folder: beside it, above it, by traversal", async () => {
    for (const path of ["/team", "/other", "/team/secret.txt", "/team/docs/../secret.txt", "/team/docsx"]) {
      const listed = await api(reader.secret, "/api/fs/list", { path });
      expect(listed.code, path).toBe(DENIED);
      const got = await api(reader.secret, "/api/fs/get", { path });
      expect(got.code, path).toBe(DENIED);
    }
    // The root lists only the way to the folder.
    expect(names(await api(reader.secret, "/api/fs/list", { path: "/" }))).toEqual(["team"]);
    expect((await api(reader.secret, "/api/fs/dirs", { path: "/other" })).code).toBe(DENIED);
  });

  it("writes nothing, inside its folder or out", async () => {
    expect((await api(reader.secret, "/api/fs/mkdir", { path: "/team/docs/new" })).code).toBe(DENIED);
    expect((await put(reader.secret, "/team/docs/new.txt", "new")).code).toBe(DENIED);
    expect((await api(reader.secret, "/api/fs/rename", { path: "/team/docs/a.txt", name: "z.txt" })).code).toBe(DENIED);
    expect((await api(reader.secret, "/api/fs/remove", { dir: "/team/docs", names: ["a.txt"] })).code).toBe(DENIED);
    expect(await s3Keys(`${ROOT}/team/docs`)).toEqual([`${ROOT}/team/docs/a.txt`, `${ROOT}/team/docs/sub/b.txt`]);
  });

  it("reads there over WebDAV and nothing else", async () => {
    const auth = basic("keyholder", reader.secret);
    const found = await dav("PROPFIND", "/team/docs", { auth, headers: { Depth: "1" } });
    expect(found.status).toBe(207);
    expect(hrefs(await found.text())).toEqual(["/dav/team/docs/", "/dav/team/docs/sub/", "/dav/team/docs/a.txt"]);
    const file = await dav("GET", "/team/docs/a.txt", { auth });
    // S3 storages redirect WebDAV downloads to the upstream (docs/webdav.md).
    expect(file.status).toBe(302);
    expect(await (await fetch(file.headers.get("Location")!)).text()).toBe("docs a");
    for (const path of ["/team/secret.txt", "/other/x.txt", "/team/docs/../secret.txt"])
      expect((await dav("GET", path, { auth })).status, path).toBeGreaterThanOrEqual(400);
    expect((await dav("PROPFIND", "/other", { auth, headers: { Depth: "1" } })).status).toBe(403);
    expect((await dav("PUT", "/team/docs/new.txt", { auth, body: "new" })).status).toBe(403);
    expect((await dav("DELETE", "/team/docs/a.txt", { auth })).status).toBe(403);
    expect(await s3Text(`${ROOT}/team/docs/a.txt`)).toBe("docs a");
    // A key without WebDAV use is refused there; with the wrong username too.
    expect((await dav("PROPFIND", "/team/docs", { auth: basic("keyholder", writer.secret) })).status).toBe(403);
    expect(
      (await dav("PROPFIND", "/team/docs", { auth: basic("admin", reader.secret), ip: "203.0.113.99" })).status,
    ).toBe(401);
  });
});

describe("a read-write key scoped to /team/docs", () => {
  it("writes inside its folder", async () => {
    expect((await api(writer.secret, "/api/fs/mkdir", { path: "/team/docs/made" })).code).toBe(200);
    expect((await put(writer.secret, "/team/docs/made/w.txt", "written")).code).toBe(200);
    expect(await s3Text(`${ROOT}/team/docs/made/w.txt`)).toBe("written");
  });

  it("moves, copies and renames nothing out of its folder, and nothing in from outside", async () => {
    const attempts: [string, unknown][] = [
      ["/api/fs/move", { src_dir: "/team/docs/made", dst_dir: "/team", names: ["w.txt"] }],
      ["/api/fs/move", { src_dir: "/team/docs/made", dst_dir: "/other", names: ["w.txt"] }],
      ["/api/fs/copy", { src_dir: "/team/docs/made", dst_dir: "/other", names: ["w.txt"] }],
      ["/api/fs/copy", { src_dir: "/other", dst_dir: "/team/docs", names: ["x.txt"] }],
      ["/api/fs/move", { src_dir: "/team", dst_dir: "/team/docs", names: ["secret.txt"] }],
      ["/api/fs/rename", { path: "/team/docs/made/w.txt", name: "../../w.txt" }],
      ["/api/fs/recursive_move", { src_dir: "/team/docs/made", dst_dir: "/team" }],
      ["/api/fs/remove", { dir: "/team", names: ["secret.txt"] }],
      ["/api/fs/mkdir", { path: "/team/docs/../outside" }],
      ["/api/fs/add_offline_download", { path: "/team", urls: ["http://127.0.0.1:1/x"], tool: "SimpleHttp" }],
    ];
    // Other suites share the database: count the tasks this test would add, not all of them.
    const tasksBefore = await sql("SELECT count(*) FROM tasks");
    for (const [route, body] of attempts) {
      const reply = await api(writer.secret, route, body);
      expect([400, 403], `${route} ${JSON.stringify(body)}: ${reply.message}`).toContain(reply.code);
    }
    expect((await put(writer.secret, "/team/put.txt", "out")).code).toBe(DENIED);
    expect(await s3Text(`${ROOT}/team/docs/made/w.txt`)).toBe("written");
    expect(await s3Text(`${ROOT}/team/secret.txt`)).toBe("team secret");
    expect(await s3Keys(`${ROOT}-other`)).toEqual([`${ROOT}-other/x.txt`]);
    expect(await s3Keys(`${ROOT}/team/w.txt`)).toEqual([]);
    expect(await sql("SELECT count(*) FROM tasks")).toEqual(tasksBefore);
  });
});

describe("search with a key", () => {
  beforeAll(async () => {
    await sql("UPDATE settings SET value = 'database' WHERE key = 'search_index'");
    expect((await callApi(admin, "/api/admin/index/build", { paths: ["/"], max_depth: -1 })).code).toBe(200);
    await poll(
      () => call("/api/admin/index/progress", { headers: { Authorization: admin } }),
      (reply) => reply.data.is_done,
      { timeoutMs: 5_000, what: "built" },
    );
  });

  // The other suites share this database: they find search as a fresh install has it.
  afterAll(async () => {
    await sql("UPDATE settings SET value = 'none' WHERE key = 'search_index'");
    await sql("UPDATE settings SET value = '{}' WHERE key = 'index_progress'");
    await sql("DELETE FROM search_nodes");
  });

  it("finds only what lies in the key's folder (and the names of the way there)", async () => {
    const everything = await api(owner, "/api/fs/search", { parent: "/", keywords: "t" });
    expect(everything.data.content.map((item: { name: string }) => item.name)).toEqual(
      expect.arrayContaining(["secret.txt", "x.txt", "a.txt"]),
    );
    for (const parent of ["/", "/team", "/other"]) {
      const reply = await api(reader.secret, "/api/fs/search", { parent, keywords: "t" });
      const paths = (reply.data?.content ?? []).map((item: { parent: string; name: string }) =>
        `${item.parent}/${item.name}`.replace(/^\/\//, "/"),
      );
      for (const path of paths)
        expect(["/team", "/team/docs"].includes(path) || path.startsWith("/team/docs/"), path).toBe(true);
      if (parent === "/") expect(paths).toEqual(expect.arrayContaining(["/team/docs/a.txt", "/team/docs/sub/b.txt"]));
    }
  });
});

describe("what a key may never do", () => {
  it("is refused on account, share, task and admin routes, the admin's own key too", async () => {
    const adminKey = await makeKey({ name: "admin's", path: "/", permission: 0x33ff, usage: ["api"] }, admin);
    const sharesBefore = await sql("SELECT count(*) FROM shares");
    for (const secret of [reader.secret, writer.secret, adminKey.secret]) {
      for (const [path, body] of [
        ["/api/me/update", { password: "taken over" }],
        ["/api/me/access_key/create", { name: "more" }],
        ["/api/me/access_key/list", undefined],
        ["/api/me/app_password/create", { name: "more" }],
        ["/api/me/sessions", undefined],
        ["/api/auth/2fa/generate", {}],
        ["/api/auth/logout", undefined],
        ["/api/share/create", { files: ["/team/docs/a.txt"] }],
        ["/api/task/copy/undone", undefined],
        ["/api/admin/user/list", undefined],
        ["/api/admin/access_key/list", undefined],
        ["/api/admin/setting/list", undefined],
      ] as const) {
        expect(await api(secret, path, body), path).toEqual(FILES_ONLY);
      }
    }
    // Nor admin-only file operations.
    expect((await api(adminKey.secret, "/api/fs/link", { path: "/team/docs/a.txt" })).code).toBe(403);
    expect(await sql("SELECT count(*) FROM shares")).toEqual(sharesBefore);
    expect((await sql("SELECT count(*) FROM app_passwords WHERE user_id = ?", [ownerId]))[0]![0]).toBeGreaterThan(0);
  });
});

describe("when a key stops", () => {
  it("records its last use, and not on every request", async () => {
    const key = await makeKey({ name: "used", path: "/team/docs" });
    const before = Math.floor(Date.now() / 1000);
    expect((await api(key.secret, "/api/fs/list", { path: "/team/docs" })).code).toBe(200);
    const lastUsed = async () =>
      (await sql("SELECT last_used_at FROM app_passwords WHERE id = ?", [key.id]))[0]![0] as number;
    expect(await lastUsed()).toBeGreaterThanOrEqual(before);
    const listed = await api(owner, "/api/me/access_key/list");
    expect(listed.data.find((entry: { id: number }) => entry.id === key.id).last_used).toMatch(/^\d{4}-/);
    // A time long past: an update sent with the next requests would move it, and none is sent.
    await sql("UPDATE app_passwords SET last_used_at = 1 WHERE id = ?", [key.id]);
    for (let i = 0; i < 3; i++) expect((await api(key.secret, "/api/fs/list", { path: "/team/docs" })).code).toBe(200);
    expect((await dav("PROPFIND", "/team/docs", { auth: basic("keyholder", key.secret) })).status).toBe(207);
    expect(await lastUsed()).toBe(1);
  });

  it("when it expires", async () => {
    const key = await makeKey({ name: "short", path: "/team/docs", expires_at: Math.floor(Date.now() / 1000) + 60 });
    expect((await api(key.secret, "/api/fs/list", { path: "/team/docs" })).code).toBe(200);
    await sql("UPDATE app_passwords SET expires_at = ? WHERE id = ?", [Math.floor(Date.now() / 1000) - 1, key.id]);
    expect(await api(key.secret, "/api/fs/list", { path: "/team/docs" })).toEqual({
      code: 401,
      message: "access key expired",
      data: null,
    });
    expect((await dav("PROPFIND", "/team/docs", { auth: basic("keyholder", key.secret) })).status).toBe(401);
  });

  it("when it is revoked, by its user or the admin", async () => {
    const mine = await makeKey({ name: "revoked by me", path: "/team/docs" });
    const theirs = await makeKey({ name: "revoked by admin", path: "/team/docs" });
    expect((await callApi(owner, "/api/me/access_key/delete", { id: mine.id })).code).toBe(200);
    const page = await api(admin, "/api/admin/access_key/list");
    expect(page.data.content.find((key: { id: number }) => key.id === theirs.id)).toMatchObject({
      username: "keyholder",
      user_id: ownerId,
      path: "/team/docs",
    });
    expect(await callApi(admin, "/api/admin/access_key/delete", { id: theirs.id })).toMatchObject({ code: 200 });
    expect(await callApi(owner, "/api/me/access_key/delete", { id: theirs.id })).toMatchObject({
      code: 404,
      message: "access key not found",
    });
    for (const key of [mine, theirs])
      expect(await api(key.secret, "/api/fs/list", { path: "/team/docs" }, "203.0.113.7")).toEqual({
        code: 401,
        message: "token is invalidated",
        data: null,
      });
    await sql("DELETE FROM login_failures");
  });

  it("when its user loses the folder, at once", async () => {
    const role = await callApi(admin, "/api/admin/role/update", {
      id: roleId,
      name: "keyholder-role",
      permission_scopes: [{ path: "/other", permission: Bits.ALL & ~Bits.PATH_LIMIT }],
    });
    expect(role.code, role.message).toBe(200);
    expect((await api(reader.secret, "/api/fs/list", { path: "/team/docs" })).code).toBe(DENIED);
    // Nor does the key reach the user's new folder: the intersection is empty.
    expect((await api(reader.secret, "/api/fs/list", { path: "/other" })).code).toBe(DENIED);
    expect((await dav("GET", "/team/docs/a.txt", { auth: basic("keyholder", reader.secret) })).status).toBe(403);
    await callApi(admin, "/api/admin/role/update", {
      id: roleId,
      name: "keyholder-role",
      permission_scopes: [{ path: "/", permission: Bits.ALL & ~Bits.PATH_LIMIT }],
    });
    expect((await api(reader.secret, "/api/fs/list", { path: "/team/docs" })).code).toBe(200);
  });

  it("when its user's base path moves away from the folder, at once", async () => {
    expect((await callApi(admin, "/api/admin/user/update", { id: ownerId, base_path: "/other" })).code).toBe(200);
    // Its paths now start at /other: the key's folder is out of its user's reach.
    for (const path of ["/", "/team/docs", "/x.txt"])
      expect((await api(reader.secret, "/api/fs/list", { path })).code, path).toBe(DENIED);
    expect((await callApi(admin, "/api/admin/user/update", { id: ownerId, base_path: "/" })).code).toBe(200);
    expect((await api(reader.secret, "/api/fs/list", { path: "/team/docs" })).code).toBe(200);
  });

  it("when its user is disabled, at once", async () => {
    expect((await callApi(admin, "/api/admin/user/update", { id: ownerId, disabled: true })).code).toBe(200);
    expect(await api(reader.secret, "/api/fs/list", { path: "/team/docs" })).toEqual({
      code: 401,
      message: "Current user is disabled, replace please",
      data: null,
    });
    expect((await dav("PROPFIND", "/team/docs", { auth: basic("keyholder", reader.secret) })).status).toBe(403);
    expect((await callApi(admin, "/api/admin/user/update", { id: ownerId, disabled: false })).code).toBe(200);
    expect((await api(reader.secret, "/api/fs/list", { path: "/team/docs" })).code).toBe(200);
  });

  it("wrong keys count toward the address's sign-in lockout", async () => {
    const ip = "203.0.113.66";
    for (let i = 0; i < 5; i++)
      expect((await api("gh-key-wrongwrongwrongwrongwrongwrong12", "/api/fs/list", { path: "/" }, ip)).code).toBe(401);
    const locked = await api(reader.secret, "/api/fs/list", { path: "/team/docs" }, ip);
    expect(locked.code).toBe(429);
    // The same address cannot sign in either.
    const login = await exports.default.fetch(
      new Request("http://gatehouse.test/api/auth/login", {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip },
        body: JSON.stringify({ username: "keyholder", password: "keyholder password" }),
      }),
    );
    expect(((await login.json()) as Envelope).code).toBe(429);
    expect((await api(reader.secret, "/api/fs/list", { path: "/team/docs" }, "203.0.113.67")).code).toBe(200);
    await sql("DELETE FROM login_failures");
  });

  it("when its user changes the password: every key ends", async () => {
    // Disabling the user above ended its sessions: it signs in again.
    owner = await signIn("keyholder-again", "keyholder", "keyholder password");
    expect((await api(reader.secret, "/api/fs/list", { path: "/team/docs" })).code).toBe(200);
    expect(await callApi(owner, "/api/me/update", { password: "keyholder new password" })).toMatchObject({ code: 200 });
    expect(await api(reader.secret, "/api/fs/list", { path: "/team/docs" })).toEqual({
      code: 401,
      message: "Password has been changed, login please",
      data: null,
    });
    expect((await dav("PROPFIND", "/team/docs", { auth: basic("keyholder", reader.secret) })).status).toBe(401);
    await sql("DELETE FROM login_failures");
  });
});
