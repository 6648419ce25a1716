// The storage group end to end through app.request(): create, get, list and update, their error
// paths, and the rows left in the database. Drivers here need no server (Virtual, Local, Alias,
// Crypt); checks.test.ts covers the servers, rules.test.ts what follows once a storage exists.
import { eq, like } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { storages } from "../../db/schema.ts";
import { signInAdmin } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";

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

const { post, get } = api(
  () => fixture,
  () => admin,
);
const create = (body: unknown) => post("/api/admin/storage/create", body);
const update = (body: unknown) => post("/api/admin/storage/update", body);
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
