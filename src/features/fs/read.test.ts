// The read side of the file API in Node, on Virtual storages (generated, deterministic files): the
// mount tree, paging, permissions from role scopes, base paths, metas, signs and /d, /p. The
// drivers that reach real servers are tested in workerd (ftp, s3, webdav and write .workerd.test.ts
// beside this file), the Alias driver in alias.test.ts.
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { settings, storages, users } from "../../db/schema.ts";
import { send } from "../../../test/support/auth.ts";
import type { Envelope, UnitFixture } from "../../../test/support/unit.ts";
import { clearReads, readsAs, setUpReads } from "./unit-fixture.ts";

let fixture: UnitFixture;
let admin: string;
let token: string;

const { post, list, get, mount, member, signOf } = readsAs(
  () => fixture,
  () => admin,
  () => token,
);

beforeAll(async () => {
  ({ fixture, admin, token } = await setUpReads());
});
afterAll(() => fixture.close());
beforeEach(() => clearReads(fixture));

describe("the mount tree", () => {
  it("lists virtual folders for mount-path ancestors, in storage order, with AList's page fields", async () => {
    await mount("/b/inner", {}, { order: 2 });
    await mount("/a", {}, { order: 1 });
    const { code, data } = await list("/");
    expect(code).toBe(200);
    expect(data.content.map((e: any) => e.name)).toEqual(["a", "b"]);
    expect(data.content[0]).toEqual({
      id: "",
      path: "",
      name: "a",
      size: 0,
      is_dir: true,
      modified: "2026-03-01T08:00:00Z",
      created: "2026-03-01T08:00:00Z",
      sign: "",
      thumb: "",
      type: 1,
      hashinfo: "null",
      hash_info: null,
      label_list: null,
    });
    expect(Object.keys(data)).toEqual([
      "content",
      "total",
      "filtered_total",
      "page",
      "per_page",
      "has_more",
      "pages_total",
      "readme",
      "header",
      "write",
      "provider",
    ]);
    expect(data).toMatchObject({
      total: 2,
      filtered_total: 2,
      page: 1,
      per_page: 200,
      has_more: false,
      pages_total: 1,
      write: true,
      provider: "unknown",
    });
  });

  it("lists only the mount paths below the folder, whatever sorts beside them", async () => {
    // Neighbours of "/m/" in byte order: "-" and "." sort before "/", "0" right after it.
    for (const path of ["/m-x/a", "/m.x/a", "/m0/a", "/m/é/a", "/m/z", "/m/x/y", "/n/a"]) await mount(path);
    expect((await list("/m")).data.content.map((e: any) => e.name)).toEqual(["x", "z", "é"]);
    expect((await get("/m/é")).data).toMatchObject({ name: "é", is_dir: true });
    expect((await get("/m0")).data).toMatchObject({ name: "m0", is_dir: true });
  });

  it("lists a storage: files with signs (sign_all is on), then folders; the same names on every request", async () => {
    await mount("/v");
    const first = await list("/v");
    expect(first.data.provider).toBe("Virtual");
    expect(first.data.content).toHaveLength(5);
    const files = first.data.content.filter((e: any) => !e.is_dir);
    expect(files).toHaveLength(3);
    for (const file of files) {
      expect(file.sign).toBe(signOf(`/v/${file.name}`));
      expect(file.size).toBeGreaterThanOrEqual(100);
      expect(file.type).toBe(0);
    }
    expect((await list("/v")).data.content).toEqual(first.data.content);
  });

  it("pages: per_page, page, has_more and pages_total; an empty page is null", async () => {
    await mount("/v", { num_file: 7, num_folder: 0 });
    const page = await list("/v", { page: 2, per_page: 3 });
    expect(page.data).toMatchObject({ total: 7, page: 2, per_page: 3, has_more: true, pages_total: 3 });
    expect(page.data.content).toHaveLength(3);
    expect((await list("/v", { page: 9, per_page: 3 })).data.content).toBeNull();
    expect((await list("/v", { per_page: 100000 })).data.per_page).toBe(500);
  });

  it("answers AList's messages for a missing storage, a missing folder and a file", async () => {
    expect(await list("/")).toEqual({
      code: 500,
      message: "failed get storage: storage not found; please add a storage first",
      data: null,
    });
    await mount("/v");
    expect((await list("/nope")).message).toBe("failed get storage: storage not found; rawPath: /nope");
    expect((await list("/v/nope")).message).toBe("failed get objs: failed get dir: object not found");
    const file = (await list("/v")).data.content.find((e: any) => !e.is_dir);
    expect((await list(`/v/${file.name}`)).message).toBe("failed get objs: not a folder");
  });

  it("hides disabled storages and answers a failed one with its status", async () => {
    await mount("/off", {}, { disabled: true });
    await mount("/broken", {}, { status: "connection refused" });
    expect((await list("/")).data.content.map((e: any) => e.name)).toEqual(["broken"]);
    expect(await list("/broken")).toEqual({ code: 500, message: "storage not init: connection refused", data: null });
    expect((await list("/off")).message).toBe("failed get storage: storage not found; rawPath: /off");
  });

  it("refuses storages whose driver cannot serve files at the edge", async () => {
    await fixture.db
      .insert(storages)
      .values({ mountPath: "/local", driver: "Local", status: "work", addition: "{}", modifiedAtMs: Date.now() });
    expect(await list("/local")).toEqual({
      code: 500,
      message: "driver Local cannot serve files at the edge",
      data: null,
    });
  });
});

describe("get, dirs, other, search", () => {
  it("gets a file with raw_url to /p (Virtual is only_local), its sign, and the object fields", async () => {
    await mount("/v");
    const file = (await list("/v")).data.content.find((e: any) => !e.is_dir);
    const { code, data } = await get(`/v/${file.name}`);
    expect(code).toBe(200);
    expect(Object.keys(data)).toEqual([
      "id",
      "path",
      "name",
      "size",
      "is_dir",
      "modified",
      "created",
      "sign",
      "thumb",
      "type",
      "hashinfo",
      "hash_info",
      "raw_url",
      "readme",
      "header",
      "provider",
      "related",
    ]);
    expect(data).toMatchObject({
      name: file.name,
      size: file.size,
      is_dir: false,
      sign: signOf(`/v/${file.name}`),
      provider: "Virtual",
    });
    expect(data.raw_url).toBe(`http://localhost/p/v/${file.name}?sign=${signOf(`/v/${file.name}`)}`);
  });

  it("gets a mount point as the virtual folder and the root as AList's synthetic one", async () => {
    await mount("/a/b");
    expect((await get("/a")).data).toMatchObject({
      name: "a",
      is_dir: true,
      raw_url: "",
      provider: "unknown",
      type: 0,
    });
    expect((await get("/missing")).message).toBe("failed get storage: storage not found; rawPath: /missing");
  });

  it("dirs lists folders only; force_root is for admins", async () => {
    await mount("/v");
    const { data } = await post("/api/fs/dirs", { path: "/v" });
    expect(data).toHaveLength(2);
    expect(Object.keys(data[0])).toEqual(["name", "modified"]);
    const reader = await member("dora", [{ path: "/", permission: 0 }]);
    expect(await post("/api/fs/dirs", { path: "/v", force_root: true }, reader)).toEqual({
      code: 403,
      message: "Permission denied",
      data: null,
    });
  });

  it("other answers not implement; search is not available", async () => {
    await mount("/v");
    expect(await post("/api/fs/other", { path: "/v", method: "archive" })).toEqual({
      code: 500,
      message: "not implement",
      data: null,
    });
    expect(await post("/api/fs/search", { parent: "/", keywords: "x", page: 1, per_page: 100 })).toEqual({
      code: 500,
      message: "search not available",
      data: null,
    });
  });

  it("refuses a body of the wrong types, malformed JSON, and anonymous callers while the guest is off", async () => {
    expect((await post("/api/fs/list", { path: 5 })).code).toBe(400);
    const malformed = await (await send(fixture, "POST", "/api/fs/list", "{nope", { Authorization: admin })).json();
    expect((malformed as Envelope).code).toBe(400);
    expect(await post("/api/fs/list", { path: "/" }, "")).toEqual({
      code: 401,
      message: "Guest user is disabled, login please",
      data: null,
    });
  });
});

describe("permissions and paths", () => {
  it("shows a user only the branches that lead to its scopes, and refuses the rest with AList's text", async () => {
    await mount("/public");
    await mount("/private");
    const reader = await member("rita", [{ path: "/public", permission: 0 }]);
    expect((await list("/", {}, reader)).data.content.map((e: any) => e.name)).toEqual(["public"]);
    expect((await list("/public", {}, reader)).code).toBe(200);
    expect(await list("/private", {}, reader)).toEqual({
      code: 403,
      message: "password is incorrect or you have no permission",
      data: null,
    });
    // No over-grant at the root (docs/decisions.md D8.2): a write scope below does not make / writable.
    const writer = await member("wes", [{ path: "/public", permission: 8 }]);
    expect((await list("/", {}, writer)).data.write).toBe(false);
    expect((await list("/public", {}, writer)).data.write).toBe(true);
    expect(await list("/", { refresh: true }, writer)).toEqual({
      code: 403,
      message: "Refresh without permission",
      data: null,
    });
  });

  it("joins the base path to every path, and no spelling climbs out of it", async () => {
    await mount("/home/bo");
    await mount("/home/bob");
    await mount("/secret");
    const bo = await member("bo", [{ path: "/", permission: 0 }], { basePath: "/home/bo" });
    const inHome = (await list("/", {}, bo)).data.content.map((e: any) => e.name);
    expect(inHome).toHaveLength(5);
    for (const spelling of ["/..", "../secret", "/a/../../secret", "..\\secret", "/..\\..\\secret"]) {
      expect(await list(spelling, {}, bo), spelling).toEqual({
        code: 403,
        message: "access using relative path is not allowed",
        data: null,
      });
    }
    // Cleaned spellings stay inside the base path: /home/bo/secret, not /secret; never /home/bob.
    for (const spelling of ["//secret", "/./secret", "\\secret", "%2e%2e/secret", "b"]) {
      const { message } = await list(spelling, {}, bo);
      expect(message, spelling).toMatch(/^failed get objs: failed get dir: object not found$/);
    }
    expect((await list("/x\u0000y", {}, bo)).code).toBe(403);
  });

  it("keeps a path-limited user (permission bit 14) inside its scopes", async () => {
    await mount("/a");
    await mount("/b");
    const limited = await member("lim", [{ path: "/a", permission: 0 }], { permission: 1 << 14 });
    expect((await list("/a", {}, limited)).code).toBe(200);
    expect(await list("/b", {}, limited)).toEqual({ code: 403, message: "permission denied", data: null });
  });

  it("lets the guest browse when enabled, as the guest role's scope allows", async () => {
    await mount("/v");
    await fixture.db.update(users).set({ disabled: false }).where(eq(users.username, "guest"));
    try {
      expect((await list("/v", {}, "")).code).toBe(200);
    } finally {
      await fixture.db.update(users).set({ disabled: true }).where(eq(users.username, "guest"));
    }
  });
});

describe("metas", () => {
  const createMeta = (meta: Record<string, unknown>) => post("/api/admin/meta/create", meta);

  it("guards a folder with its password (p_sub below), with immediate effect, and signs what it guards", async () => {
    await mount("/v");
    await fixture.db.update(settings).set({ value: "false" }).where(eq(settings.key, "sign_all"));
    try {
      const reader = await member("pat", [{ path: "/", permission: 0 }]);
      const before = await list("/v", {}, reader);
      expect(before.code).toBe(200);
      expect(before.data.content.every((e: any) => e.sign === "")).toBe(true);
      await createMeta({ path: "/v", password: "open sesame", readme: "read me", header: "head" });
      expect(await list("/v", {}, reader)).toEqual({
        code: 403,
        message: "password is incorrect or you have no permission",
        data: null,
      });
      const opened = await list("/v", { password: "open sesame" }, reader);
      expect(opened.data).toMatchObject({ readme: "read me", header: "head" });
      const file = opened.data.content.find((e: any) => !e.is_dir);
      expect(file.sign).toBe(signOf(`/v/${file.name}`));
      // Without p_sub, only the folder itself is guarded.
      const folder = opened.data.content.find((e: any) => e.is_dir);
      expect((await list(`/v/${folder.name}`, {}, reader)).code).toBe(200);
      // The admin has access-without-password.
      expect((await list("/v")).code).toBe(200);
    } finally {
      await fixture.db.update(settings).set({ value: "true" }).where(eq(settings.key, "sign_all"));
    }
  });

  it("hides entries by pattern (a trailing newline hides nothing more), except from see-hides holders", async () => {
    await mount("/v", { num_file: 4, num_folder: 0 });
    const names: string[] = (await list("/v")).data.content.map((e: any) => e.name);
    await createMeta({ path: "/v", hide: `^${names[0]}$\n` });
    const reader = await member("hal", [{ path: "/", permission: 0 }]);
    expect((await list("/v", {}, reader)).data.content.map((e: any) => e.name)).toEqual(names.slice(1));
    expect((await get(`/v/${names[0]}`, {}, reader)).code).toBe(403);
    expect((await list("/v")).data.content).toHaveLength(4);
  });
});

describe("/d and /p", () => {
  const fetchPath = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    fixture.request(path, { method, headers });

  async function firstFile() {
    await mount("/v", { num_file: 2, num_folder: 0, min_file_size: 300000, max_file_size: 400000 });
    const file = (await list("/v")).data.content[0];
    return { name: file.name as string, size: file.size as number, path: `/v/${file.name}` };
  }

  it("refuses a missing, malformed, expired or wrong sign with AList's messages (HTTP 200, code 401)", async () => {
    const { path } = await firstFile();
    const cases: [string, string][] = [
      ["", "expire missing"],
      ["?sign=abc:x", "expire invalid"],
      [`?sign=${signOf(path, 1000)}`, "sign expired"],
      [`?sign=${signOf("/v/other", 0)}`, "sign invalid"],
      [`?sign=${signOf(path, 0, "old key")}`, "sign invalid"],
    ];
    for (const [query, message] of cases) {
      const response = await fetchPath(`/d${path}${query}`);
      expect(response.status).toBe(200);
      expect(await response.json(), query).toEqual({ code: 401, message, data: null });
    }
  });

  it("serves Virtual bytes (only_local) with Range, conditional requests and HEAD", async () => {
    const { name, size, path } = await firstFile();
    const url = `/d${path}?sign=${signOf(path)}`;
    const whole = await fetchPath(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-length")).toBe(String(size));
    expect(whole.headers.get("content-disposition")).toBe(`attachment; filename="${name}"; filename*=UTF-8''${name}`); // ASCII names: both forms equal
    expect(whole.headers.get("content-security-policy")).toContain("sandbox");
    const bytes = new Uint8Array(await whole.arrayBuffer());
    expect(bytes.length).toBe(size);

    const ranged = await fetchPath(url, { Range: "bytes=100-199" });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 100-199/${size}`);
    expect(new Uint8Array(await ranged.arrayBuffer())).toEqual(bytes.slice(100, 200));
    const tail = await fetchPath(url, { Range: "bytes=-10" });
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.slice(size - 10));
    expect((await fetchPath(url, { Range: `bytes=${size}-` })).status).toBe(416);

    const etag = whole.headers.get("etag")!;
    expect((await fetchPath(url, { "If-None-Match": etag })).status).toBe(304);
    expect((await fetchPath(url, { "If-Match": '"other"' })).status).toBe(412);
    const head = await fetchPath(url, {}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(size));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    // /p serves the same bytes.
    const proxied = await fetchPath(`/p${path}?sign=${signOf(path)}`, { Range: "bytes=0-9" });
    expect(new Uint8Array(await proxied.arrayBuffer())).toEqual(bytes.slice(0, 10));
    expect(createHash("sha256").update(bytes).digest("hex")).toHaveLength(64);
  });

  it("decodes the path once: encoded names, and traversal that only reaches the root", async () => {
    const { path } = await firstFile();
    const encoded = path.split("/").map(encodeURIComponent).join("/");
    expect((await fetchPath(`/d${encoded}?sign=${signOf(path)}`)).status).toBe(200);
    const climbing = await fetchPath(`/d/v/%2e%2e/%2e%2e/v/${path.slice(3)}?sign=${signOf(path)}`);
    expect(climbing.status).toBe(200);
    expect(await (await fetchPath(`/d/nope/x?sign=${signOf("/nope/x")}`)).json()).toEqual({
      code: 500,
      message: "failed get storage: storage not found; rawPath: /nope/x",
      data: null,
    });
  });

  it("needs no sign with sign_all off, and re-keys at once when the token changes", async () => {
    const { path } = await firstFile();
    await fixture.db.update(settings).set({ value: "false" }).where(eq(settings.key, "sign_all"));
    try {
      expect((await fetchPath(`/d${path}`)).status).toBe(200);
      expect((await fetchPath(`/d${path}`, {}, "HEAD")).headers.get("content-type")).toBe("application/octet-stream");
    } finally {
      await fixture.db.update(settings).set({ value: "true" }).where(eq(settings.key, "sign_all"));
    }
    const reset = await post("/api/admin/setting/reset_token", undefined);
    expect(reset.code).toBe(200);
    expect(await (await fetchPath(`/d${path}?sign=${signOf(path)}`)).json()).toEqual({
      code: 401,
      message: "sign invalid",
      data: null,
    });
    expect((await fetchPath(`/d${path}?sign=${signOf(path, 0, reset.data)}`)).status).toBe(200);
    token = reset.data;
  });
});

describe("hidden subtrees", () => {
  it("refuses everything below a hidden name by its exact path, even under a meta of its own; see-hides holders get it with a sign", async () => {
    await mount("/v", { num_file: 1, num_folder: 2 });
    const [hidden, shown] = (await list("/v")).data.content
      .filter((e: any) => e.is_dir)
      .map((e: any) => e.name as string);
    const inner = (await list(`/v/${hidden}`)).data.content.find((e: any) => !e.is_dir).name as string;
    const deep = (await list(`/v/${hidden}`)).data.content.find((e: any) => e.is_dir).name as string;
    expect((await post("/api/admin/meta/create", { path: "/v", hide: `^${hidden}$`, h_sub: false })).code).toBe(200);
    // A meta on the hidden folder itself (here a readme) does not make it reachable.
    expect((await post("/api/admin/meta/create", { path: `/v/${hidden}/${deep}`, readme: "deep" })).code).toBe(200);
    await fixture.db.update(settings).set({ value: "false" }).where(eq(settings.key, "sign_all"));
    try {
      const reader = await member("hidi", [{ path: "/", permission: 0 }]);
      const denied = { code: 403, message: "password is incorrect or you have no permission", data: null };
      expect((await list("/v", {}, reader)).data.content.map((e: any) => e.name)).not.toContain(hidden);
      expect(await list(`/v/${hidden}`, {}, reader)).toEqual(denied);
      expect(await get(`/v/${hidden}/${inner}`, {}, reader)).toEqual(denied);
      expect(await list(`/v/${hidden}/${deep}`, {}, reader)).toEqual(denied);
      expect(await post("/api/fs/dirs", { path: `/v/${hidden}` }, reader)).toEqual(denied);
      expect((await list(`/v/${shown}`, {}, reader)).code).toBe(200);
      // /d and /p know no caller: with sign_all off a hidden file still needs the sign only a
      // see-hides holder is given.
      for (const kind of ["d", "p"]) {
        expect(await (await fixture.request(`/${kind}/v/${hidden}/${inner}`)).json(), kind).toEqual({
          code: 401,
          message: "expire missing",
          data: null,
        });
      }
      const seen = await get(`/v/${hidden}/${inner}`);
      expect(seen.data.sign).toBe(signOf(`/v/${hidden}/${inner}`));
      expect((await list(`/v/${hidden}`)).data.content.find((e: any) => e.name === inner).sign).toBe(
        signOf(`/v/${hidden}/${inner}`),
      );
      expect((await fixture.request(`/d/v/${hidden}/${inner}?sign=${seen.data.sign}`)).status).toBe(200);
      expect((await fixture.request(`/d/v/${shown}/${inner}`)).status).toBe(200);
    } finally {
      await fixture.db.update(settings).set({ value: "true" }).where(eq(settings.key, "sign_all"));
    }
  });
});
