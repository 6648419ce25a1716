// The storage group end to end through app.request(): every endpoint, its error paths, and the rows
// left in the database. Drivers here need no server (Virtual, Local, Alias, Crypt) or use the slow
// WebDAV stand-in; checks.test.ts covers the servers.
import { eq, inArray, like } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { roles, storages, users } from "../../db/schema.ts";
import { login, postJson, signInAdmin } from "../../../test/support/auth.ts";
import { startSlowWebdav } from "../../../test/support/storage-servers.ts";
import { backgroundContext, createUnitFixture, testEnv, type UnitFixture } from "../../../test/support/unit.ts";

type Envelope = { code: number; message: string; data: any };

let fixture: UnitFixture;
let admin: string;
beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(storages);
});

const create = async (body: unknown): Promise<Envelope> =>
  (await postJson(fixture, "/api/admin/storage/create", body, { Authorization: admin })).json();
const update = async (body: unknown): Promise<Envelope> =>
  (await postJson(fixture, "/api/admin/storage/update", body, { Authorization: admin })).json();
/** A POST with the argument in the query, an empty body and no Content-Type, as AList's UI sends it. */
const postQuery = async (path: string, token = admin): Promise<Envelope> =>
  (await fixture.request(path, { method: "POST", headers: { Authorization: token } })).json();
const get = async (path: string, token = admin): Promise<Envelope> =>
  (await fixture.request(path, { headers: { Authorization: token } })).json();
const rows = () => fixture.db.select().from(storages).orderBy(storages.id);
const row = async (id: number) => (await fixture.db.select().from(storages).where(eq(storages.id, id)))[0];
const virtual = (mountPath: string, extra: Record<string, unknown> = {}) => ({
  mount_path: mountPath,
  driver: "Virtual",
  addition: "{}",
  ...extra,
});

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("storage/create", () => {
  it("mounts a storage from driver, mount_path and addition, defaulting the rest from the template", async () => {
    const before = Date.now();
    const reply = await create({ mount_path: "virt/", driver: "Virtual", addition: '{"num_file":3}' });
    expect(reply).toEqual({ code: 200, message: "success", data: { id: expect.any(Number) } });
    const shown = await get(`/api/admin/storage/get?id=${reply.data.id}`);
    expect(shown).toEqual({
      code: 200,
      message: "success",
      data: {
        id: reply.data.id,
        mount_path: "/virt",
        order: 0,
        driver: "Virtual",
        cache_expiration: 30,
        status: "work",
        addition: '{"num_file":3}',
        remark: "",
        modified: expect.stringMatching(ISO_TIME),
        disabled: false,
        disable_index: false,
        enable_sign: false,
        order_by: "",
        order_direction: "",
        extract_folder: "",
        web_proxy: false,
        webdav_policy: "native_proxy",
        proxy_range: false,
        down_proxy_url: "",
        down_proxy_sign: true,
      },
    });
    // AList's field order.
    expect(Object.keys(shown.data)).toEqual([
      "id",
      "mount_path",
      "order",
      "driver",
      "cache_expiration",
      "status",
      "addition",
      "remark",
      "modified",
      "disabled",
      "disable_index",
      "enable_sign",
      "order_by",
      "order_direction",
      "extract_folder",
      "web_proxy",
      "webdav_policy",
      "proxy_range",
      "down_proxy_url",
      "down_proxy_sign",
    ]);
    expect(Date.parse(shown.data.modified)).toBeGreaterThanOrEqual(before - 1);
  });

  it("stores what the web UI's form sends, as sent", async () => {
    const reply = await create({
      id: 0,
      mount_path: "/films",
      order: 5,
      driver: "Virtual",
      remark: "for the den",
      cache_expiration: 0,
      status: "ignored: the server computes it",
      modified: "2020-01-01T00:00:00Z",
      web_proxy: true,
      webdav_policy: "use_proxy_url",
      down_proxy_url: "https://proxy.example",
      down_proxy_sign: false,
      order_by: "name",
      order_direction: "desc",
      extract_folder: "front",
      enable_sign: "true",
      disable_index: true,
      addition: '{"num_file":1,"num_folder":2}',
    });
    expect(reply.code).toBe(200);
    expect(await row(reply.data.id)).toMatchObject({
      mountPath: "/films",
      order: 5,
      remark: "for the den",
      cacheExpiration: 0,
      status: "work",
      webProxy: true,
      webdavPolicy: "use_proxy_url",
      downProxyUrl: "https://proxy.example",
      downProxySign: false,
      orderBy: "name",
      orderDirection: "desc",
      extractFolder: "front",
      enableSign: true,
      disableIndex: true,
      addition: '{"num_file":1,"num_folder":2}',
    });
    expect((await create(virtual("/b", { enable_sign: false, order: "7" }))).code).toBe(200);
    expect((await rows())[1]).toMatchObject({ enableSign: false, order: 7 });
  });

  it("takes each driver's own defaults: the 302 policy for S3, no cache time for Alias", async () => {
    const s3 = await create({ mount_path: "/s3", driver: "S3", addition: "{}", disabled: true });
    expect(await row(s3.data.id)).toMatchObject({
      webdavPolicy: "302_redirect",
      cacheExpiration: 30,
      status: "disabled",
      disabled: true,
    });
    const alias = await create({ mount_path: "/alias", driver: "Alias", addition: '{"paths":"/s3"}', disabled: true });
    expect(await row(alias.data.id)).toMatchObject({
      webdavPolicy: "302_redirect",
      cacheExpiration: 0,
      proxyRange: false,
    });
  });

  it("normalises the mount path like AList", async () => {
    await create(virtual("\\a\\b"));
    await create(virtual("/x/../y//z/"));
    expect((await rows()).map((r) => r.mountPath)).toEqual(["/a/b", "/y/z"]);
  });

  it("refuses a mount path already in use, saving nothing", async () => {
    await create(virtual("/virt"));
    expect(await create(virtual("virt/"))).toEqual({
      code: 400,
      message: "mount path /virt is already used",
      data: null,
    });
    expect(await rows()).toHaveLength(1);
  });

  it("refuses an unknown driver, saving nothing", async () => {
    expect(await create({ mount_path: "/x", driver: "Nope", addition: "{}" })).toEqual({
      code: 400,
      message: "driver [Nope] not found",
      data: null,
    });
    expect(await rows()).toHaveLength(0);
  });

  it("refuses an addition that is not a JSON object in a string, saving nothing", async () => {
    for (const addition of [undefined, {}, "not json", "[1]", "null", '"text"', 5]) {
      expect(await create({ mount_path: "/x", driver: "Virtual", addition })).toEqual({
        code: 400,
        message: "addition must be a JSON object encoded as a string",
        data: null,
      });
    }
    expect(await rows()).toHaveLength(0);
  });

  it("accepts choices only from the driver's template, naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        { webdav_policy: "302_redirect" },
        "webdav_policy must be one of use_proxy_url, native_proxy for driver Virtual",
      ],
      [{ extract_folder: "middle" }, "extract_folder must be one of front, back or empty for driver Virtual"],
      [{ order_by: "date" }, "order_by must be one of name, size, modified or empty for driver Virtual"],
      [{ order_direction: "up" }, "order_direction must be one of asc, desc or empty for driver Virtual"],
    ];
    for (const [extra, message] of cases)
      expect(await create(virtual("/x", extra))).toEqual({ code: 400, message, data: null });
    expect(await rows()).toHaveLength(0);
    // Empty means "not set": the template's default for a required select, empty for the others.
    const reply = await create(virtual("/x", { webdav_policy: "", extract_folder: "", order_by: "" }));
    expect(await row(reply.data.id)).toMatchObject({ webdavPolicy: "native_proxy", extractFolder: "", orderBy: "" });
  });

  it("answers wrong types, a missing body and malformed JSON with 400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [virtual("/x", { mount_path: 5 }), "mount_path: Invalid input: expected string, received number"],
      [{ driver: "Virtual", addition: "{}" }, "mount_path: is required"],
      [virtual(""), "mount_path: is required"],
      [virtual("/x", { order: "first" }), "order: must be an integer"],
      [virtual("/x", { cache_expiration: -1 }), "cache_expiration: must not be negative"],
      [virtual("/x", { enable_sign: "yes" }), "enable_sign: must be true or false"],
      [virtual("/x", { web_proxy: "true" }), "web_proxy: Invalid input: expected boolean, received string"],
      [virtual("/x", { driver: 3 }), "driver: Invalid input: expected string, received number"],
      ["{not json", "malformed JSON body: Malformed JSON in request body"],
      [[virtual("/x")], "json: Invalid input: expected object, received array"],
    ];
    for (const [body, message] of cases) expect(await create(body)).toEqual({ code: 400, message, data: null });
    const empty = await fixture.request("/api/admin/storage/create", {
      method: "POST",
      headers: { Authorization: admin },
    });
    expect(await empty.json()).toEqual({
      code: 400,
      message: "mount_path: is required; driver: is required",
      data: null,
    });
    expect(await rows()).toHaveLength(0);
  });

  it("keeps a storage whose check fails, with the error as its status, and answers 500 with its id", async () => {
    const reply = await create({ mount_path: "/disk", driver: "Local", addition: '{"root_folder_path":"/srv"}' });
    expect(reply).toEqual({
      code: 500,
      message: expect.stringMatching(
        /^failed init storage but storage is already created: Local storage cannot run on Cloudflare Workers: /,
      ),
      data: { id: expect.any(Number) },
    });
    expect(await row(reply.data.id)).toMatchObject({
      mountPath: "/disk",
      disabled: false,
      status: reply.message.replace("failed init storage but storage is already created: ", ""),
    });
  });

  it("creates a disabled storage without checking it", async () => {
    const reply = await create({ mount_path: "/disk", driver: "Local", addition: "{}", disabled: true });
    expect(reply).toEqual({ code: 200, message: "success", data: { id: expect.any(Number) } });
    expect(await row(reply.data.id)).toMatchObject({ disabled: true, status: "disabled" });
  });

  it("in Node, where Workers sockets do not exist, a TCP check fails with a clear status", async () => {
    const reply = await create({
      mount_path: "/sftp",
      driver: "SFTP",
      addition: '{"address":"127.0.0.1:22","username":"u"}',
    });
    expect(reply.code).toBe(500);
    expect((await row(reply.data.id))!.status).toMatch(
      /^this check needs Cloudflare Workers TCP sockets \(cloudflare:sockets\), which this runtime lacks: /,
    );
  });
});

describe("storage/get and storage/list", () => {
  it("answers an unknown id with 404 and a bad or missing id with 400", async () => {
    expect(await get("/api/admin/storage/get?id=999")).toEqual({ code: 404, message: "storage not found", data: null });
    for (const id of ["0", "-1", "abc", "1.5", ""]) {
      expect(await get(`/api/admin/storage/get?id=${id}`)).toEqual({
        code: 400,
        message: "id: must be a positive integer",
        data: null,
      });
    }
    expect(await get("/api/admin/storage/get")).toEqual({ code: 400, message: "id: is required", data: null });
  });

  it("lists in order, then id order, with the total; without per_page, all of them", async () => {
    const ids = [];
    for (const [path, order] of [
      ["/c", 2],
      ["/a", 1],
      ["/b", 1],
    ] as const)
      ids.push((await create(virtual(path, { order }))).data.id);
    const all = await get("/api/admin/storage/list");
    expect(all.code).toBe(200);
    expect(all.data.total).toBe(3);
    expect(all.data.content.map((s: { mount_path: string }) => s.mount_path)).toEqual(["/a", "/b", "/c"]);
    expect(all.data.content[0]).toEqual((await get(`/api/admin/storage/get?id=${ids[1]}`)).data);

    const second = await get("/api/admin/storage/list?page=2&per_page=2");
    expect(second.data).toEqual({ total: 3, content: [expect.objectContaining({ mount_path: "/c" })] });
    expect(
      (await get("/api/admin/storage/list?page=0&per_page=1")).data.content.map(
        (s: { mount_path: string }) => s.mount_path,
      ),
    ).toEqual(["/a"]);
    expect((await get("/api/admin/storage/list?page=9&per_page=2")).data).toEqual({ total: 3, content: [] });
    expect((await get("/api/admin/storage/list?per_page=0")).data.content).toHaveLength(3);
  });

  it("writes each stored value as AList's JSON: text escaped, flags as booleans, the time in RFC 3339 UTC with milliseconds", async () => {
    const stored = {
      mountPath: '/wire "quoted" \\ é 𝄞',
      order: -3,
      driver: "Virtual",
      cacheExpiration: 0,
      status: "failed: line one\nline two\ttab \u0001",
      addition: '{"num_file":1,"nested":{"a":"b"}}',
      remark: "<script>&</script>",
      modifiedAtMs: 1_700_000_000_007,
      disabled: true,
      disableIndex: true,
      enableSign: false,
      orderBy: "name",
      orderDirection: "desc",
      extractFolder: "back",
      webProxy: true,
      webdavPolicy: "302_redirect",
      proxyRange: true,
      downProxyUrl: "https://proxy.example/a?b=c",
      downProxySign: false,
    };
    const { id } = (await fixture.db.insert(storages).values(stored).returning({ id: storages.id }))[0]!;
    try {
      const expected = {
        id,
        mount_path: stored.mountPath,
        order: -3,
        driver: "Virtual",
        cache_expiration: 0,
        status: stored.status,
        addition: stored.addition,
        remark: stored.remark,
        modified: new Date(stored.modifiedAtMs).toISOString(),
        disabled: true,
        disable_index: true,
        enable_sign: false,
        order_by: "name",
        order_direction: "desc",
        extract_folder: "back",
        web_proxy: true,
        webdav_policy: "302_redirect",
        proxy_range: true,
        down_proxy_url: stored.downProxyUrl,
        down_proxy_sign: false,
      };
      expect(expected.modified).toBe("2023-11-14T22:13:20.007Z");
      const shown = await get(`/api/admin/storage/get?id=${id}`);
      expect(shown).toEqual({ code: 200, message: "success", data: expected });
      expect(Object.keys(shown.data)).toEqual(Object.keys(expected));
      const listed = await get("/api/admin/storage/list");
      expect(listed.data.content[0]).toEqual(expected); // order -3 sorts first
    } finally {
      await fixture.db.delete(storages).where(eq(storages.id, id));
    }
  });

  it("lists every storage with per_page=0 or without per_page, past any default page size (60 here)", async () => {
    const before = (await get("/api/admin/storage/list")).data.total as number;
    await fixture.db.insert(storages).values(
      Array.from({ length: 60 }, (_, i) => ({
        mountPath: `/many/${i}`,
        driver: "Virtual",
        status: "work",
        addition: "{}",
        modifiedAtMs: 0,
      })),
    );
    try {
      for (const query of ["?per_page=0", "?page=1&per_page=0", "?page=3&per_page=0", ""]) {
        const { data } = await get(`/api/admin/storage/list${query}`);
        expect(data.total).toBe(before + 60);
        expect(data.content, query).toHaveLength(before + 60);
      }
    } finally {
      await fixture.db.delete(storages).where(like(storages.mountPath, "/many/%"));
    }
  });

  it("refuses page numbers that are not integers", async () => {
    expect(await get("/api/admin/storage/list?page=abc")).toEqual({
      code: 400,
      message: "page: must be an integer",
      data: null,
    });
    expect(await get("/api/admin/storage/list?per_page=1e3")).toEqual({
      code: 400,
      message: "per_page: must be an integer",
      data: null,
    });
  });
});

describe("storage/update", () => {
  it("saves the storage, checks it again and answers its id; the id may be a numeric string", async () => {
    const { data } = await create(virtual("/old", { remark: "before" }));
    const before = (await row(data.id))!;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await update(virtual("new/", { id: String(data.id), remark: "after", order: 3 }))).toEqual({
      code: 200,
      message: "success",
      data: { id: data.id },
    });
    const after = (await row(data.id))!;
    expect(after).toMatchObject({ mountPath: "/new", remark: "after", order: 3, status: "work" });
    expect(after.modifiedAtMs).toBeGreaterThan(before.modifiedAtMs);
  });

  it("refuses to change the driver, an unknown id and bad ids, changing nothing", async () => {
    const { data } = await create(virtual("/v"));
    const before = await row(data.id);
    expect(await update({ id: data.id, mount_path: "/v", driver: "Local", addition: "{}" })).toEqual({
      code: 400,
      message: "driver cannot be changed",
      data: null,
    });
    expect(await update(virtual("/v", { id: 999 }))).toEqual({ code: 404, message: "storage not found", data: null });
    expect(await update(virtual("/v"))).toEqual({ code: 400, message: "id: is required", data: null });
    for (const id of [0, -3, "abc", "0", 1.5]) {
      expect(await update(virtual("/v", { id }))).toEqual({
        code: 400,
        message: "id: must be a positive integer",
        data: null,
      });
    }
    expect(await update(virtual("/v", { id: data.id, driver: "Nope" }))).toEqual({
      code: 400,
      message: "driver [Nope] not found",
      data: null,
    });
    expect(await row(data.id)).toEqual(before);
  });

  it("refuses a mount path another storage uses, changing nothing", async () => {
    await create(virtual("/taken"));
    const { data } = await create(virtual("/mine"));
    expect(await update(virtual("/taken", { id: data.id, remark: "changed" }))).toEqual({
      code: 400,
      message: "mount path /taken is already used",
      data: null,
    });
    expect(await row(data.id)).toMatchObject({ mountPath: "/mine", remark: "" });
  });

  it("keeps the row when the new settings fail their check: status is the error, code 500 with the id", async () => {
    await create(virtual("/media"));
    const alias = await create({ mount_path: "/alias", driver: "Alias", addition: '{"paths":"/media/films"}' });
    expect(alias.code).toBe(200);
    const reply = await update({
      id: alias.data.id,
      mount_path: "/alias",
      driver: "Alias",
      addition: '{"paths":"/nowhere"}',
    });
    expect(reply).toEqual({
      code: 500,
      message: "failed init storage: path /nowhere is not inside any mounted storage",
      data: { id: alias.data.id },
    });
    expect(await row(alias.data.id)).toMatchObject({
      addition: '{"paths":"/nowhere"}',
      status: "path /nowhere is not inside any mounted storage",
    });
  });

  it("saves a disabled storage without checking it, and disables one on request", async () => {
    const local = await create({ mount_path: "/disk", driver: "Local", addition: "{}", disabled: true });
    expect(await update({ id: local.data.id, mount_path: "/disk2", driver: "Local", addition: "{}" })).toEqual({
      code: 200,
      message: "success",
      data: { id: local.data.id },
    });
    expect(await row(local.data.id)).toMatchObject({ mountPath: "/disk2", disabled: true, status: "disabled" });
    const { data } = await create(virtual("/v"));
    expect((await update(virtual("/v", { id: data.id, disabled: true }))).code).toBe(200);
    expect(await row(data.id)).toMatchObject({ disabled: true, status: "disabled" });
  });
});

describe("storage/enable and storage/disable", () => {
  it("disables (status disabled) and enables (checked again), each once", async () => {
    const { data } = await create(virtual("/v"));
    expect(await postQuery(`/api/admin/storage/disable?id=${data.id}`)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await row(data.id)).toMatchObject({ disabled: true, status: "disabled" });
    expect(await postQuery(`/api/admin/storage/disable?id=${data.id}`)).toEqual({
      code: 400,
      message: "this storage have disabled",
      data: null,
    });
    expect(await postQuery(`/api/admin/storage/enable?id=${data.id}`)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await row(data.id)).toMatchObject({ disabled: false, status: "work" });
    expect(await postQuery(`/api/admin/storage/enable?id=${data.id}`)).toEqual({
      code: 400,
      message: "this storage have enabled",
      data: null,
    });
  });

  it("enables a storage whose check fails: it stays enabled with the error, code 500", async () => {
    const { data } = await create({ mount_path: "/disk", driver: "Local", addition: "{}", disabled: true });
    const reply = await postQuery(`/api/admin/storage/enable?id=${data.id}`);
    expect(reply).toEqual({
      code: 500,
      message: expect.stringMatching(/^failed load storage: Local storage cannot run on Cloudflare Workers/),
      data: null,
    });
    expect(await row(data.id)).toMatchObject({
      disabled: false,
      status: reply.message.replace("failed load storage: ", ""),
    });
  });

  it("answers unknown and bad ids", async () => {
    for (const action of ["enable", "disable"]) {
      expect(await postQuery(`/api/admin/storage/${action}?id=42`)).toEqual({
        code: 404,
        message: "storage not found",
        data: null,
      });
      expect(await postQuery(`/api/admin/storage/${action}?id=0`)).toEqual({
        code: 400,
        message: "id: must be a positive integer",
        data: null,
      });
      expect(await postQuery(`/api/admin/storage/${action}?id=abc`)).toEqual({
        code: 400,
        message: "id: must be a positive integer",
        data: null,
      });
      expect(await postQuery(`/api/admin/storage/${action}`)).toEqual({
        code: 400,
        message: "id: is required",
        data: null,
      });
    }
  });
});

describe("storage/delete", () => {
  beforeAll(async () => {
    await fixture.db.insert(roles).values([
      { name: "editors", permissionScopes: [{ path: "/media/films", permission: 8 }] },
      {
        name: "viewers",
        permissionScopes: [
          { path: "/books", permission: 1 },
          { path: "/media", permission: 1 },
        ],
      },
      { name: "others", permissionScopes: [{ path: "/mediax/a", permission: 1 }] },
    ]);
    const passwordHash = await hashStaticHash(await staticHash("pw"));
    await fixture.db.insert(users).values([
      { username: "bob", passwordHash, basePath: "/media/bob" },
      { username: "carol", passwordHash, basePath: "/elsewhere" },
    ]);
  });

  it("refuses while a role scope or a user's base path uses the first mount segment, naming them", async () => {
    const { data } = await create(virtual("/media/tv"));
    expect(await postQuery(`/api/admin/storage/delete?id=${data.id}`)).toEqual({
      code: 400,
      message: "storage is used by role:editors, role:viewers, user:bob, please cancel usage first",
      data: null,
    });
    expect(await row(data.id)).toBeDefined();
  });

  it("compares whole segments: /mediax is not /media", async () => {
    const { data } = await create(virtual("/mediax"));
    expect(await postQuery(`/api/admin/storage/delete?id=${data.id}`)).toEqual({
      code: 400,
      message: "storage is used by role:others, please cancel usage first",
      data: null,
    });
    const free = await create(virtual("/medi"));
    expect(await postQuery(`/api/admin/storage/delete?id=${free.data.id}`)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await row(free.data.id)).toBeUndefined();
  });

  it("skips the check for the root mount", async () => {
    const { data } = await create(virtual("/"));
    expect(await postQuery(`/api/admin/storage/delete?id=${data.id}`)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await rows()).toHaveLength(0);
  });

  it("answers unknown and bad ids", async () => {
    expect(await postQuery("/api/admin/storage/delete?id=7")).toEqual({
      code: 404,
      message: "storage not found",
      data: null,
    });
    expect(await postQuery("/api/admin/storage/delete?id=0")).toEqual({
      code: 400,
      message: "id: must be a positive integer",
      data: null,
    });
    expect(await postQuery("/api/admin/storage/delete?id=abc")).toEqual({
      code: 400,
      message: "id: must be a positive integer",
      data: null,
    });
    expect(await postQuery("/api/admin/storage/delete")).toEqual({ code: 400, message: "id: is required", data: null });
  });
});

describe("storage/load_all", () => {
  const executionContext = backgroundContext;
  const loadAll = async (ctx: ExecutionContext): Promise<Envelope> =>
    (
      await fixture.app.request(
        "/api/admin/storage/load_all",
        { method: "POST", headers: { Authorization: admin } },
        testEnv,
        ctx,
      )
    ).json();

  it("answers at once and re-checks every enabled storage in the background, 4 at a time", async () => {
    const dav = await startSlowWebdav(150);
    try {
      const davIds = [];
      for (let i = 0; i < 9; i++) {
        davIds.push(
          (
            await create({
              mount_path: `/dav${i}`,
              driver: "WebDav",
              addition: JSON.stringify({ address: dav.url, username: "" }),
            })
          ).data.id,
        );
      }
      const media = (await create(virtual("/media"))).data.id;
      const alias = (await create({ mount_path: "/alias", driver: "Alias", addition: '{"paths":"/media"}' })).data.id;
      const off = (await create(virtual("/off", { disabled: true }))).data.id;
      await fixture.db.update(storages).set({ status: "stale" }).where(eq(storages.disabled, false));
      const gone = (
        await fixture.db.insert(storages).values({ mountPath: "/gone", driver: "Gone", modifiedAtMs: 0 }).returning()
      )[0]!.id;

      const { ctx, pending } = executionContext();
      expect(await loadAll(ctx)).toEqual({ code: 200, message: "success", data: null });
      expect(pending).toHaveLength(1);
      expect((await row(davIds[0]))!.status).toBe("stale"); // still checking
      await Promise.all(pending);

      for (const id of [...davIds, media, alias]) expect((await row(id))!.status).toBe("work");
      expect((await row(gone))!.status).toBe("driver [Gone] not found");
      expect(await row(off)).toMatchObject({ disabled: true, status: "disabled" });
      expect(dav.maxInFlight()).toBe(4);
    } finally {
      await dav.close();
    }
  });

  it("checks Alias after the storages it points into, so it sees their fresh status", async () => {
    const media = (await create(virtual("/media"))).data.id;
    const alias = (await create({ mount_path: "/alias", driver: "Alias", addition: '{"paths":"/media/films"}' })).data
      .id;
    await fixture.db.update(storages).set({ status: "wrong username or password" }).where(eq(storages.id, media));
    await fixture.db.update(storages).set({ status: "stale" }).where(eq(storages.id, alias));
    const { ctx, pending } = executionContext();
    await loadAll(ctx);
    await Promise.all(pending);
    expect((await row(media))!.status).toBe("work");
    expect((await row(alias))!.status).toBe("work");
  });
});

describe("the storage group is for admins only", () => {
  it("answers 403 to a user and 401 without a token", async () => {
    await fixture.db
      .insert(users)
      .values({ username: "dora", passwordHash: await hashStaticHash(await staticHash("dora pw")) });
    const dora = (await login(fixture, { username: "dora", password: "dora pw" })).data!.token;
    for (const path of ["/api/admin/storage/list", "/api/admin/storage/get?id=1"]) {
      expect(await get(path, dora)).toEqual({ code: 403, message: "You are not an admin", data: null });
      expect(await get(path, "")).toEqual({ code: 401, message: "Guest user is disabled, login please", data: null });
    }
    for (const action of ["create", "update", "delete?id=1", "enable?id=1", "disable?id=1", "load_all"]) {
      expect(await postQuery(`/api/admin/storage/${action}`, dora)).toEqual({
        code: 403,
        message: "You are not an admin",
        data: null,
      });
      expect(await postQuery(`/api/admin/storage/${action}`, "")).toEqual({
        code: 401,
        message: "Guest user is disabled, login please",
        data: null,
      });
    }
  });
});

describe("moving a storage's mount path", () => {
  const scopesOf = async (name: string) =>
    (await fixture.db.select().from(roles).where(eq(roles.name, name)))[0]!.permissionScopes;

  it("carries role scopes at or inside the old path along, and leaves the rest alone", async () => {
    const { data } = await create(virtual("/media"));
    await fixture.db.insert(roles).values({
      name: "movers",
      permissionScopes: [
        { path: "/media", permission: 1 },
        { path: "/media/tv", permission: 8 },
        { path: "/mediaeval", permission: 2 },
        { path: "/", permission: 4 },
      ],
    });
    expect((await update({ ...virtual("/films"), id: data.id })).code).toBe(200);
    expect(await scopesOf("movers")).toEqual([
      { path: "/films", permission: 1 },
      { path: "/films/tv", permission: 8 },
      { path: "/mediaeval", permission: 2 },
      { path: "/", permission: 4 },
    ]);
    expect(await scopesOf("admin")).toEqual([{ path: "/", permission: 65535 }]);
  });

  it("leaves the admin and guest roles alone, even with scopes under the moved path", async () => {
    const { data } = await create(virtual("/shared"));
    const original = await fixture.db
      .select()
      .from(roles)
      .where(inArray(roles.name, ["admin", "guest"]));
    const pinned = (extra: { path: string; permission: number }) => [{ path: "/", permission: 1 }, extra];
    await fixture.db
      .update(roles)
      .set({ permissionScopes: pinned({ path: "/shared/public", permission: 1 }) })
      .where(eq(roles.name, "guest"));
    await fixture.db
      .update(roles)
      .set({ permissionScopes: pinned({ path: "/shared", permission: 2 }) })
      .where(eq(roles.name, "admin"));
    try {
      expect((await update({ ...virtual("/common"), id: data.id })).code).toBe(200);
      expect(await scopesOf("guest")).toEqual(pinned({ path: "/shared/public", permission: 1 }));
      expect(await scopesOf("admin")).toEqual(pinned({ path: "/shared", permission: 2 }));
    } finally {
      for (const role of original)
        await fixture.db.update(roles).set({ permissionScopes: role.permissionScopes }).where(eq(roles.id, role.id));
    }
  });

  it("changes no role when the move is refused", async () => {
    const { data } = await create(virtual("/music"));
    await create(virtual("/taken"));
    await fixture.db
      .insert(roles)
      .values({ name: "listeners", permissionScopes: [{ path: "/music/jazz", permission: 1 }] });
    expect((await update({ ...virtual("/taken"), id: data.id })).code).toBe(400);
    expect(await scopesOf("listeners")).toEqual([{ path: "/music/jazz", permission: 1 }]);
  });
});
