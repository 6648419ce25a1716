// The setting group: list, get, save, delete, and the permanent token's life cycle.
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { roles, settings, users } from "../../db/schema.ts";
import { SETTING_DEFINITIONS } from "../../db/settings.ts";
import { REFERENCE_SETTINGS } from "../../../test/fixtures/alist-settings.ts";
import { login, signInAdmin } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";

/** Defaults Gatehouse changes on purpose: the logo ships with the web UI instead of loading from a CDN (docs/web-ui.md). */
const DELIBERATE_DEFAULTS: Record<string, string> = { logo: "/images/logo.svg", favicon: "/images/logo.svg" };

type Item = {
  key: string;
  value: string;
  help: string;
  type: string;
  options: string;
  group: number;
  flag: number;
  index: number;
};

let fixture: UnitFixture;
let admin: string;
let member: string;

beforeAll(async () => {
  fixture = await createUnitFixture();
  await fixture.db.insert(roles).values([
    { id: 3, name: "editor" },
    { id: 4, name: "viewer" },
  ]);
  await fixture.db
    .insert(users)
    .values({ username: "mia", passwordHash: await hashStaticHash(await staticHash("mia pw")), roleIds: [3] });
  admin = await signInAdmin(fixture);
  member = (await login(fixture, { username: "mia", password: "mia pw" })).data!.token;
});
afterAll(() => fixture.close());

const {
  post,
  get,
  send: request,
} = api(
  () => fixture,
  () => admin,
);
const save = (items: unknown) => post("/api/admin/setting/save", items);
const storedRows = async (...keys: string[]) => fixture.db.select().from(settings).where(inArray(settings.key, keys));
const storedValue = async (key: string) => (await storedRows(key))[0]?.value;
const permanentToken = async () => (await storedValue("token"))!;

const ROUTES: [method: "GET" | "POST", path: string, body?: unknown][] = [
  ["GET", "/api/admin/setting/list"],
  ["GET", "/api/admin/setting/get?key=site_title"],
  ["POST", "/api/admin/setting/save", [{ key: "site_title", value: "x" }]],
  ["POST", "/api/admin/setting/delete?key=site_title"],
  ["POST", "/api/admin/setting/reset_token"],
  ["POST", "/api/admin/setting/set_token", { token: "a-token-of-sufficient-length" }],
  ["POST", "/api/admin/setting/set_aria2", { uri: "http://127.0.0.1:1/jsonrpc", secret: "" }],
  ["POST", "/api/admin/setting/set_qbit", { url: "http://127.0.0.1:1/", seedtime: "0" }],
];

describe("every setting route is for admins only", () => {
  it.each(ROUTES)("%s %s: no token 401, a non-admin 403, and nothing changes", async (method, path, body) => {
    const before = await fixture.db.select().from(settings);
    expect(await request(method, path, body, "")).toEqual({
      code: 401,
      message: "Guest user is disabled, login please",
      data: null,
    });
    expect(await request(method, path, body, member)).toEqual({
      code: 403,
      message: "You are not an admin",
      data: null,
    });
    expect(await fixture.db.select().from(settings)).toEqual(before);
  });

  it("let the permanent token in", async () => {
    expect((await get("/api/admin/setting/get?key=version", await permanentToken())).data.value).toBe("v3.58.0");
  });
});

describe("GET /api/admin/setting/list", () => {
  it("lists every setting with AList's default, type, options, group, flag, help and index, by index", async () => {
    const { code, data } = await get("/api/admin/setting/list");
    expect(code).toBe(200);
    const items = data as Item[];
    // The expectation is AList's table (test/fixtures/alist-settings.ts), not the definitions the code
    // seeds from, then OpenList's settings of what AList v3.58 lacks: chunked uploads
    // (docs/decisions.md D12.2), the manual scan's progress (D18.1), the share dialog's summary, and
    // LDAP's TLS (D21.1).
    expect(items.map((i) => i.key)).toEqual([
      ...REFERENCE_SETTINGS.map(([key]) => key),
      "multipart_enabled",
      "multipart_chunk_size",
      "scan_progress",
      "share_summary_content",
      "share_preview",
      "share_archive_preview",
      "share_force_proxy",
      "share_preview_download_by_default",
      "share_preview_archives_by_default",
      "ldap_skip_tls_verify",
      "ldap_start_tls",
    ]);
    REFERENCE_SETTINGS.forEach(([key, value, type, options, group, flag, help], index) => {
      const item = items[index]!;
      // default_role's options are computed: the roles it may take (AList v3.58.0 server/handles/setting.go:17).
      expect({ ...item, value: null }).toEqual({
        key,
        value: null,
        type,
        options: key === "default_role" ? "editor,viewer" : options,
        group,
        flag,
        help,
        index,
      });
      if (value !== null && key !== "default_role") expect(item.value, key).toBe(DELIBERATE_DEFAULTS[key] ?? value);
    });
    const value = (key: string) => items.find((i) => i.key === key)!.value;
    // The values the fixture leaves out (null there): AList computes them or writes them out of line.
    expect(value("version")).toBe("v3.58.0");
    expect(value("default_role")).toBe("guest"); // stored as the guest role's id, 1; listed by name
    expect((await storedRows("default_role"))[0]!.value).toBe("1");
    expect(value("token")).toMatch(
      /^alist-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}[A-Za-z0-9]{64}$/,
    );
    expect(JSON.parse(value("iframe_previews"))).toEqual({
      "doc,docx,xls,xlsx,ppt,pptx": {
        Microsoft: "https://view.officeapps.live.com/op/view.aspx?src=$e_url",
        Google: "https://docs.google.com/gview?url=$e_url&embedded=true",
      },
      pdf: { "PDF.js": "https://alist-org.github.io/pdf.js/web/viewer.html?file=$e_url" },
      epub: { "EPUB.js": "https://alist-org.github.io/static/epub.js/viewer.html?url=$e_url" },
    });
    expect(value("iframe_previews")).toMatch(/^\{\n\t"doc,docx/); // pretty-printed with tabs
    const regs = value("privacy_regs").split("\n");
    expect(regs).toHaveLength(3);
    expect(new RegExp(`^(?:${regs[0]})$`).test("192.168.255.1")).toBe(true);
    expect(new RegExp(`^(?:${regs[0]})$`).test("256.1.1.1")).toBe(false);
    expect(regs[1]).toContain("[[:xdigit:]]{1,4}");
    expect(regs[2]).toBe("(?U)access_token=(.*)&");
  });

  it("includes the permanent token as stored", async () => {
    const items = (await get("/api/admin/setting/list?groups=0")).data as Item[];
    expect(items.find((i) => i.key === "token")!.value).toBe(await permanentToken());
  });

  it("filters by `groups`, ordered by index", async () => {
    const items = (await get("/api/admin/setting/list?groups=5,0")).data as Item[];
    expect(items.map((i) => i.key)).toEqual([
      "token",
      "index_progress",
      "aria2_uri",
      "aria2_secret",
      "qbittorrent_url",
      "qbittorrent_seedtime",
      "transmission_uri",
      "transmission_seedtime",
      "scan_progress",
    ]);
    expect(items.map((i) => i.index)).toEqual([...items.map((i) => i.index)].sort((a, b) => a - b));
  });

  it("filters by `group`, and `groups` wins when both are given", async () => {
    const site = (await get("/api/admin/setting/list?group=1")).data as Item[];
    expect(site.map((i) => i.key)).toEqual(SETTING_DEFINITIONS.filter((d) => d.group === 1).map((d) => d.key));
    const both = (await get("/api/admin/setting/list?groups=5&group=1")).data as Item[];
    expect(new Set(both.map((i) => i.group))).toEqual(new Set([5]));
  });

  it("treats an empty filter as none", async () => {
    expect(((await get("/api/admin/setting/list?groups=")).data as Item[]).length).toBe(SETTING_DEFINITIONS.length);
  });

  it.each([
    ["groups=abc", "groups: must be group numbers separated by commas, e.g. 5,0"],
    ["groups=5,,0", "groups: must be group numbers separated by commas, e.g. 5,0"],
    ["groups=-1", "groups: must be group numbers separated by commas, e.g. 5,0"],
    ["group=1x", "group: must be group numbers separated by commas, e.g. 5,0"],
  ])("refuses %s with 400", async (query, message) => {
    expect(await get(`/api/admin/setting/list?${query}`)).toEqual({ code: 400, message, data: null });
  });
});

describe("GET /api/admin/setting/get", () => {
  it("returns one item for `key`", async () => {
    expect(await get("/api/admin/setting/get?key=pagination_type")).toEqual({
      code: 200,
      message: "success",
      data: {
        key: "pagination_type",
        value: "all",
        help: "",
        type: "select",
        options: "all,pagination,load_more,auto_load_more",
        group: 1,
        flag: 0,
        index: 3,
      },
    });
  });

  it("returns an array in request order for `keys`, and `keys` wins over `key`", async () => {
    const { data } = await get("/api/admin/setting/get?keys=thumbnail_size,aria2_uri,site_title&key=version");
    expect((data as Item[]).map((i) => [i.key, i.value])).toEqual([
      ["thumbnail_size", "144"],
      ["aria2_uri", "http://localhost:6800/jsonrpc"],
      ["site_title", "AList"],
    ]);
  });

  it("answers an array for `keys` even with one key", async () => {
    expect((await get("/api/admin/setting/get?keys=version")).data).toEqual([
      expect.objectContaining({ key: "version", value: "v3.58.0" }),
    ]);
  });

  it("shows default_role by name, with the roles it may take", async () => {
    expect((await get("/api/admin/setting/get?key=default_role")).data).toMatchObject({
      value: "guest",
      options: "editor,viewer",
      type: "select",
    });
  });

  it("answers 404 naming an unknown key, alone or among others", async () => {
    expect(await get("/api/admin/setting/get?key=nope")).toEqual({
      code: 404,
      message: "setting nope not found",
      data: null,
    });
    expect(await get("/api/admin/setting/get?keys=site_title,nope")).toEqual({
      code: 404,
      message: "setting nope not found",
      data: null,
    });
  });

  it("answers 400 when neither `key` nor `keys` names a setting", async () => {
    expect(await get("/api/admin/setting/get")).toEqual({ code: 400, message: "key or keys is required", data: null });
    expect(await get("/api/admin/setting/get?key=")).toEqual({
      code: 400,
      message: "key or keys is required",
      data: null,
    });
    expect(await get("/api/admin/setting/get?keys=,")).toEqual({
      code: 400,
      message: "keys: must name at least one setting",
      data: null,
    });
  });
});

describe("POST /api/admin/setting/save", () => {
  beforeEach(async () => {
    // Back to defaults for the keys these tests change.
    for (const d of SETTING_DEFINITIONS.filter((d) => d.key !== "token")) {
      await fixture.db.update(settings).set({ value: d.value }).where(eq(settings.key, d.key));
    }
  });

  it("saves the site group as the web UI sends it back, every column included", async () => {
    const group = (await get("/api/admin/setting/list?group=1")).data as Item[];
    const edited = group.map((item) => (item.key === "site_title" ? { ...item, value: "My Files" } : item));
    expect(await save(edited)).toEqual({ code: 200, message: "success", data: null });
    expect(await storedValue("site_title")).toBe("My Files");
    expect(await storedValue("default_role")).toBe("1");
    expect((await get("/api/public/settings", "")).data.site_title).toBe("My Files");
  });

  it("ignores the metadata a client sends: type, group, flag, options, help and index stay", async () => {
    const before = await storedRows("aria2_secret", "pagination_type");
    const reply = await save([
      { key: "aria2_secret", value: "hidden", help: "h", type: "bool", options: "a,b", group: 1, flag: 0, index: 0 },
      { key: "pagination_type", value: "load_more", options: "all,anything", flag: 2 },
    ]);
    expect(reply.code).toBe(200);
    const after = await storedRows("aria2_secret", "pagination_type");
    expect(after).toEqual(
      before.map((row) => ({ ...row, value: row.key === "aria2_secret" ? "hidden" : "load_more" })),
    );
    expect((await get("/api/public/settings", "")).data).not.toHaveProperty("aria2_secret");
  });

  it.each([
    [{ key: "default_page_size", value: "abc" }, "default_page_size: must be a number"],
    [{ key: "default_page_size", value: "" }, "default_page_size: must be a number"],
    [{ key: "default_page_size", value: "1e3" }, "default_page_size: must be a number"],
    [{ key: "default_page_size", value: " 5" }, "default_page_size: must be a number"],
    [{ key: "allow_indexed", value: "yes" }, "allow_indexed: must be true or false"],
    [{ key: "allow_indexed", value: "True" }, "allow_indexed: must be true or false"],
    [
      { key: "pagination_type", value: "infinite" },
      "pagination_type: must be one of all, pagination, load_more, auto_load_more",
    ],
    [
      { key: "sso_login_platform", value: "Facebook" },
      "sso_login_platform: must be one of Casdoor, Github, Microsoft, Google, Dingtalk, OIDC",
    ],
    [{ key: "iframe_previews", value: "{not json" }, "iframe_previews: must be a JSON object"],
    [{ key: "external_previews", value: "[]" }, "external_previews: must be a JSON object"],
    [{ key: "index_progress", value: "null" }, "index_progress: must be a JSON object"],
    [{ key: "scan_progress", value: "running" }, "scan_progress: must be a JSON object"],
    [{ key: "filename_char_mapping", value: '{"/": 1}' }, "filename_char_mapping: must be a JSON object of strings"],
    [{ key: "filename_char_mapping", value: '"/"' }, "filename_char_mapping: must be a JSON object of strings"],
    [{ key: "version", value: "v9.9.9" }, "version: is read-only"],
    [{ key: "token", value: "short" }, "token: must be 16 to 512 characters long"],
    [
      { key: "token", value: "aaaaaaaa.bbbbbbbb.cccccccc" },
      "token: must not look like a JWT (three dot-separated base64url parts)",
    ],
    [{ key: "customize_head", value: "x".repeat(65_537) }, "customize_head: must be at most 65536 characters long"],
    [{ key: "no_such_key", value: "1" }, "no_such_key: unknown setting"],
    [{ key: "default_role", value: "nobody" }, "default_role: failed get role: record not found"],
    [{ key: "default_role", value: "admin" }, "default_role: cannot set admin or guest as default role"],
  ])("refuses %j with 400 naming the key, and saves nothing from the request", async (bad, message) => {
    const before = await fixture.db.select().from(settings);
    expect(await save([{ key: "site_title", value: "Changed" }, bad])).toEqual({ code: 400, message, data: null });
    expect(await fixture.db.select().from(settings)).toEqual(before);
  });

  it("reports every problem at once", async () => {
    const reply = await save([
      { key: "allow_indexed", value: "maybe" },
      { key: "site_title", value: "ok" },
      { key: "ghost", value: "" },
    ]);
    expect(reply).toEqual({
      code: 400,
      message: "allow_indexed: must be true or false; ghost: unknown setting",
      data: null,
    });
  });

  it("refuses a key given twice", async () => {
    expect(
      await save([
        { key: "site_title", value: "a" },
        { key: "site_title", value: "b" },
      ]),
    ).toEqual({
      code: 400,
      message: "site_title: appears more than once",
      data: null,
    });
    expect(await storedValue("site_title")).toBe("AList");
  });

  it("accepts values of the right type", async () => {
    const reply = await save([
      { key: "default_page_size", value: "100" },
      { key: "max_client_download_speed", value: "-1" },
      { key: "link_expiration", value: "1.5" },
      { key: "allow_indexed", value: "true" },
      { key: "pagination_type", value: "auto_load_more" },
      { key: "sso_login_platform", value: "OIDC" },
      { key: "filename_char_mapping", value: '{"/": "|", "?": "？"}' },
      { key: "external_previews", value: '{"mp4": {"VLC": "vlc://$url"}}' },
      { key: "announcement", value: "# Welcome\nnew text" },
    ]);
    expect(reply).toEqual({ code: 200, message: "success", data: null });
    expect(Object.fromEntries((await fixture.db.select().from(settings)).map((r) => [r.key, r.value]))).toMatchObject({
      default_page_size: "100",
      link_expiration: "1.5",
      allow_indexed: "true",
      pagination_type: "auto_load_more",
      sso_login_platform: "OIDC",
      filename_char_mapping: '{"/": "|", "?": "？"}',
      announcement: "# Welcome\nnew text",
    });
  });

  it("lets a select go back to its empty default", async () => {
    await save([{ key: "sso_login_platform", value: "Github" }]);
    expect(await save([{ key: "sso_login_platform", value: "" }])).toMatchObject({ code: 200 });
    expect(await storedValue("sso_login_platform")).toBe("");
  });

  it("accepts the read-only version sent back unchanged and leaves it alone", async () => {
    expect(await save([{ key: "version", value: "v3.58.0", flag: 2, group: 1, type: "string" }])).toMatchObject({
      code: 200,
    });
    expect(await storedRows("version")).toEqual([expect.objectContaining({ value: "v3.58.0", flag: 2 })]);
  });

  it("accepts an unchanged stored value even where a new one would be refused", async () => {
    await fixture.db.update(settings).set({ value: "30 items" }).where(eq(settings.key, "default_page_size"));
    expect(await save([{ key: "default_page_size", value: "30 items" }])).toMatchObject({ code: 200 });
    expect((await save([{ key: "default_page_size", value: "40 items" }])).code).toBe(400);
  });

  it("takes default_role by name and stores the role id; list and get show the name", async () => {
    expect(await save([{ key: "default_role", value: "editor" }])).toMatchObject({ code: 200 });
    expect(await storedValue("default_role")).toBe("3");
    expect((await get("/api/admin/setting/get?key=default_role")).data).toMatchObject({
      value: "editor",
      options: "editor,viewer",
    });
    expect((await get("/api/public/settings", "")).data.default_role).toBe("3");
    // The group sent back as shown (by name) is unchanged, and nothing is written.
    expect(await save([{ key: "default_role", value: "editor" }])).toMatchObject({ code: 200 });
    expect(await save([{ key: "default_role", value: "guest" }])).toEqual({
      code: 400,
      message: "default_role: cannot set admin or guest as default role",
      data: null,
    });
    expect(await storedValue("default_role")).toBe("3");
  });

  it("moves the roles' default flag with default_role, so the role list agrees", async () => {
    expect(await save([{ key: "default_role", value: "viewer" }])).toMatchObject({ code: 200 });
    const flags = await fixture.db
      .select({ name: roles.name, isDefault: roles.isDefault })
      .from(roles)
      .orderBy(roles.id);
    expect(flags.filter((role) => role.isDefault).map((role) => role.name)).toEqual(["viewer"]);
  });

  it("creates the row of a known key that is missing, with its definition's metadata", async () => {
    await fixture.db.delete(settings).where(eq(settings.key, "thumbnail_size"));
    expect(await save([{ key: "thumbnail_size", value: "200", flag: 1, group: 9 }])).toMatchObject({ code: 200 });
    const definition = SETTING_DEFINITIONS.findIndex((d) => d.key === "thumbnail_size");
    expect(await storedRows("thumbnail_size")).toEqual([
      { ...SETTING_DEFINITIONS[definition], value: "200", index: definition },
    ]);
  });

  it("accepts an empty list", async () => {
    expect(await save([])).toEqual({ code: 200, message: "success", data: null });
  });

  it.each([
    [{ key: "site_title", value: "x" }, "json: Invalid input: expected array, received object"],
    [[{ key: "site_title" }], "0.value: Invalid input: expected string, received undefined"],
    [[{ key: "allow_indexed", value: true }], "0.value: Invalid input: expected string, received boolean"],
    [[{ value: "x" }], "0.key: Invalid input: expected string, received undefined"],
  ])("refuses the body %j with 400 naming the field", async (body, message) => {
    expect(await save(body)).toEqual({ code: 400, message, data: null });
  });

  it("refuses malformed JSON with 400", async () => {
    expect(await save("[{")).toMatchObject({ code: 400, message: expect.stringMatching(/^malformed JSON body/) });
  });
});

describe("POST /api/admin/setting/delete", () => {
  it("deletes a deprecated setting and answers an empty object", async () => {
    await fixture.db.insert(settings).values({ key: "old_feature", value: "on", flag: 3 });
    expect(await post("/api/admin/setting/delete?key=old_feature")).toEqual({
      code: 200,
      message: "success",
      data: {},
    });
    expect(await storedRows("old_feature")).toEqual([]);
  });

  it("refuses a setting that is not deprecated, and keeps it", async () => {
    expect(await post("/api/admin/setting/delete?key=site_title")).toEqual({
      code: 400,
      message: "setting [site_title] is not deprecated",
      data: null,
    });
    expect(await storedRows("site_title")).toHaveLength(1);
  });

  it("answers 404 for a key that does not exist, and 400 without a key", async () => {
    expect(await post("/api/admin/setting/delete?key=never_was")).toEqual({
      code: 404,
      message: "setting never_was not found",
      data: null,
    });
    expect(await post("/api/admin/setting/delete")).toEqual({ code: 400, message: "key: is required", data: null });
    expect(await post("/api/admin/setting/delete?key=")).toEqual({
      code: 400,
      message: "key: is required",
      data: null,
    });
  });

  it("cannot be saved to once deprecated (only known keys are)", async () => {
    await fixture.db.insert(settings).values({ key: "legacy", value: "1", flag: 3 });
    expect(await save([{ key: "legacy", value: "2" }])).toEqual({
      code: 400,
      message: "legacy: unknown setting",
      data: null,
    });
  });
});

describe("the permanent token", () => {
  const me = (token: string) => get("/api/me", token);

  it("reset_token returns a new token in AList's format; the old one stops working, the new one is the admin", async () => {
    const old = await permanentToken();
    const reply = await post("/api/admin/setting/reset_token");
    expect(reply).toEqual({
      code: 200,
      message: "success",
      data: expect.stringMatching(
        /^alist-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}[A-Za-z0-9]{64}$/,
      ),
    });
    expect(await permanentToken()).toBe(reply.data);
    expect(await me(old)).toEqual({ code: 401, message: "token is invalidated", data: null });
    expect((await me(reply.data)).data.username).toBe("admin");
    expect((await get("/api/admin/setting/list?groups=0", reply.data)).code).toBe(200);
  });

  it("reset_token called with the permanent token itself replaces it too", async () => {
    const old = await permanentToken();
    const fresh = (await post("/api/admin/setting/reset_token", undefined, old)).data as string;
    expect(fresh).not.toBe(old);
    expect((await me(old)).code).toBe(401);
    expect((await me(fresh)).code).toBe(200);
  });

  it("set_token saves the token as given (surrounding spaces trimmed) and returns it", async () => {
    const old = await permanentToken();
    const chosen = "my-own-token_0123456789!~";
    expect(await post("/api/admin/setting/set_token", { token: `  ${chosen}\n` })).toEqual({
      code: 200,
      message: "success",
      data: chosen,
    });
    expect(await storedRows("token")).toEqual([
      expect.objectContaining({ value: chosen, group: 0, flag: 1, type: "string" }),
    ]);
    expect(await me(old)).toEqual({ code: 401, message: "token is invalidated", data: null });
    expect((await me(chosen)).data.username).toBe("admin");
    expect((await me(`Bearer ${chosen}`)).data.username).toBe("admin");
  });

  it("never shows the token in the public settings", async () => {
    expect(JSON.stringify((await get("/api/public/settings", "")).data)).not.toContain(await permanentToken());
  });

  it.each([
    [{ token: "fifteen-chars-x" }, "token: must be 16 to 512 characters long"],
    [{ token: "x".repeat(513) }, "token: must be 16 to 512 characters long"],
    [{ token: "                  " }, "token: must be 16 to 512 characters long"],
    [{ token: "has a space inside it" }, "token: must be printable ASCII without spaces"],
    [{ token: "ünïcödé-tøkén-välüé" }, "token: must be printable ASCII without spaces"],
    [
      { token: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl" },
      "token: must not look like a JWT (three dot-separated base64url parts)",
    ],
    [{}, "token: Invalid input: expected string, received undefined"],
    [{ token: 1234567890123456 }, "token: Invalid input: expected string, received number"],
  ])("set_token refuses %j with 400 and keeps the old token working", async (body, message) => {
    const old = await permanentToken();
    expect(await post("/api/admin/setting/set_token", body)).toEqual({ code: 400, message, data: null });
    expect(await permanentToken()).toBe(old);
    expect((await me(old)).code).toBe(200);
  });

  it("a token saved through save works on the next request too", async () => {
    expect(await save([{ key: "token", value: "saved-through-the-settings-page" }])).toMatchObject({ code: 200 });
    expect((await me("saved-through-the-settings-page")).data.username).toBe("admin");
  });
});

describe("POST /api/admin/setting/save with very many items", () => {
  it("refuses more than 1000 items with 400, not a database error, and changes nothing", async () => {
    const before = await fixture.db.select().from(settings);
    const many = Array.from({ length: 32_767 }, (_, i) => ({ key: `k${i}`, value: "" }));
    expect(await save(many)).toEqual({
      code: 400,
      message: "json: Too big: expected array to have <=1000 items",
      data: null,
    });
    const known = Array.from({ length: 1001 }, () => ({ key: "site_title", value: "many" }));
    expect((await save(known)).code).toBe(400);
    expect(await fixture.db.select().from(settings)).toEqual(before);
  });

  it("reads only known keys: 1000 unknown ones are refused by name, without a query per key", async () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ key: `unknown_${i}`, value: "" }));
    const reply = await save(many);
    expect(reply.code).toBe(400);
    expect(reply.message).toMatch(/^unknown_0: unknown setting; unknown_1: unknown setting; /);
  });
});
