// The web UI's routing and page in workerd, with wrangler.toml's [assets] (webui/, unpacked by
// `npm ci`). exports.default.fetch calls the Worker itself, as the assets layer does for every path
// outside the front end's build folders; those folders are the assets layer's own (the browser test
// checks them through wrangler dev).
import { env } from "cloudflare:test";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { callApi, fetchPath, signIn } from "../../../test/support/workerd-client.ts";

const base = "http://gatehouse.test";

const PAGE_KEYS = ["site_title", "favicon", "logo", "main_color", "customize_head", "customize_body"];
let original: unknown[][];
let admin: string;
beforeAll(async () => {
  original = await sql(
    `SELECT key, value FROM settings WHERE key IN (${PAGE_KEYS.map(() => "?").join(",")})`,
    PAGE_KEYS,
  );
  admin = await signIn("webui-settings");
});
afterAll(restore);
beforeEach(restore);
// Saved as an admin saves them: the isolate keeps the page's settings a few seconds, and a save clears them.
async function restore() {
  expect(
    (
      await callApi(
        admin,
        "/api/admin/setting/save",
        original.map(([key, value]) => ({ key, value })),
      )
    ).code,
  ).toBe(200);
}
const setting = async (key: string, value: string) =>
  expect((await callApi(admin, "/api/admin/setting/save", [{ key, value }])).code).toBe(200);

/** The OPENLIST_CONFIG object literal of a page, evaluated. */
function openListConfig(html: string): Record<string, unknown> {
  const literal = /window\.OPENLIST_CONFIG = (\{[\s\S]*?\})\s*window\.__dynamic_base__/.exec(html)?.[1];
  if (!literal) throw new Error(`no OPENLIST_CONFIG in ${html.slice(0, 400)}`);
  // The literal is JS (unquoted keys); turn it into JSON the simple way it is written.
  return JSON.parse(literal.replace(/^(\s*)(\w+):/gm, '$1"$2":').replace(/,\s*\}/, "}")) as Record<string, unknown>;
}

describe("the index page", () => {
  it("renders the settings into the page in one database round trip", async () => {
    await setting("site_title", "My <Files> & more");
    await setting("favicon", "/images/fav.svg");
    await setting("logo", "/images/light.svg\n/images/dark.svg");
    await setting("main_color", "#ff5500");
    const counter = await roundTrips();
    const response = await fetchPath("/");
    const html = await response.text();
    expect(await counter.count()).toBe(1);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    expect(html).toContain("<title>My &lt;Files&gt; &amp; more</title>");
    expect(html).toMatch(/<link\s+rel="shortcut icon"\s+type="image\/ico"\s+href="\/images\/fav.svg"/);
    expect(html).toMatch(/<link rel="apple-touch-icon" href="\/images\/light.svg"\s*>/);
    expect(openListConfig(html)).toEqual({ cdn: "", base_path: "", api: base, main_color: "#ff5500" });
    expect(html).not.toContain("res.oplist.org");
    // The app's own scripts are still there.
    expect(html).toMatch(/\/assets\/index-[\w-]+\.js/);
  });

  it("puts customize_head and customize_body at their markers, except on the management pages", async () => {
    await setting("customize_head", '<meta name="from-head" content="1">');
    await setting("customize_body", "<div id=from-body></div>");
    const html = await (await fetchPath("/")).text();
    expect(html).toMatch(/<head>\s*<meta name="from-head" content="1">\s*<meta charset="utf-8" >/);
    expect(html).toMatch(/<div id="root"><\/div>\s*<div id=from-body><\/div>/);
    for (const path of ["/@manage", "/@manage/settings/site"]) {
      const manage = await (await fetchPath(path)).text();
      expect(manage).not.toContain("from-head");
      expect(manage).not.toContain("from-body");
    }
  });

  it.each([
    ["an unclosed comment", "<!-- oops"],
    ["an unclosed script", "<script>console.log(1)"],
    ["an unclosed style", "<style>body{}"],
    ["an unclosed attribute", '<meta name="x'],
    ["an unclosed noscript", "<noscript><img src=x>"],
    ["plaintext", "<plaintext>"],
  ])("leaves out a customize_head with %s, and the page still starts", async (_, snippet) => {
    await setting("customize_head", snippet);
    await setting("customize_body", snippet);
    const response = await fetchPath("/movies/");
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(html).toContain("<!-- customize_head left out: it does not end where it starts");
    expect(html).toContain("<!-- customize_body left out: it does not end where it starts");
    expect(html).not.toContain(snippet);
    expect(openListConfig(html)).toMatchObject({ api: base });
  });

  it("keeps customize_head that closes what it opens, scripts and comments included", async () => {
    const snippet =
      '<!-- analytics --><script>window.x = "</div>"</script><style>a{}</style><noscript>no js</noscript>';
    await setting("customize_head", snippet);
    expect(await (await fetchPath("/")).text()).toContain(snippet);
  });

  it("answers a conditional request with 304, until a setting changes", async () => {
    const first = await fetchPath("/");
    await first.arrayBuffer();
    const etag = first.headers.get("ETag")!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get("Cache-Control")).toBe("no-cache");

    const again = await fetchPath("/", { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("ETag")).toBe(etag);

    await setting("site_title", "Renamed");
    const changed = await fetchPath("/", { headers: { "If-None-Match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("ETag")).not.toBe(etag);
    expect(await changed.text()).toContain("<title>Renamed</title>");
  });

  it("is the page of every deep link, whatever the client says it accepts", async () => {
    for (const path of ["/@manage/storages", "/movies/a.mkv", "/@login", "/%E4%B8%AD%E6%96%87/x.txt"]) {
      const response = await fetchPath(path, { headers: { Accept: "application/json" } });
      expect(response.status, path).toBe(200);
      expect(response.headers.get("Content-Type"), path).toBe("text/html; charset=utf-8");
      expect(await response.text(), path).toContain('<div id="root"></div>');
    }
  });

  it("links a web app manifest built from the site title, logo and main colour, not the page", async () => {
    await setting("site_title", "My Files");
    await setting("logo", "/images/light.svg\n/images/dark.svg");
    await setting("main_color", "#ff5500");
    const counter = await roundTrips();
    const response = await fetchPath("/manifest.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/manifest+json");
    expect(await response.json()).toEqual({
      name: "My Files",
      short_name: "My Files",
      start_url: "/",
      scope: "/",
      display: "standalone",
      theme_color: "#ff5500",
      icons: [{ src: "/images/light.svg", sizes: "any" }],
    });
    expect(await counter.count()).toBe(1);

    await setting("logo", "");
    await setting("site_title", "");
    await setting("main_color", "");
    expect(await (await fetchPath("/manifest.json")).json()).toEqual({
      name: "Gatehouse",
      short_name: "Gatehouse",
      start_url: "/",
      scope: "/",
      display: "standalone",
      icons: [],
    });
    // Only GET and HEAD read it; a POST there is the page, as for any path outside the API.
    const posted = await fetchPath("/manifest.json", { method: "POST" });
    expect(posted.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    await posted.arrayBuffer();
  });

  it("allows the page's scripts: no default-src 'none' policy, but no framing", async () => {
    const response = await fetchPath("/");
    await response.arrayBuffer();
    expect(response.headers.get("Content-Security-Policy")).toBe("frame-ancestors 'none'");
    expect(response.headers.get("X-Frame-Options")).toBe("DENY");
    const api = await fetchPath("/api/public/settings");
    await api.arrayBuffer();
    expect(api.headers.get("Content-Security-Policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it("marks its own API requests before the app's scripts run, on every page, management pages too", async () => {
    for (const path of ["/", "/@manage/users"]) {
      const html = await (await fetchPath(path)).text();
      const config = html.indexOf("window.OPENLIST_CONFIG");
      const mark = html.indexOf('"X-Gatehouse-UI"');
      const app = html.search(/\/assets\/index-[\w-]+\.js/);
      expect(config, path).toBeGreaterThan(0);
      expect(mark, path).toBeGreaterThan(config);
      expect(app, path).toBeGreaterThan(mark);
      expect(html, path).toContain('"openlist"');
    }
    // The marked /api/me answers the admin's role as the UI reads it; unmarked, as AList's clients do.
    const me = async (headers: Record<string, string>) =>
      (
        (await (await fetchPath("/api/me", { headers: { Authorization: admin, ...headers } })).json()) as {
          data: unknown;
        }
      ).data;
    expect(await me({ "X-Gatehouse-UI": "openlist" })).toMatchObject({ role: 2 });
    expect(await me({})).toMatchObject({ role: [2] });
    // The user form's number, taken out of the body inside workerd too: an edit saves.
    const created = await callApi(admin, "/api/admin/user/create", { username: "webui-form", password: "pw" });
    expect(created.code).toBe(200);
    const { id } = created.data as { id: number };
    const edit = await fetchPath("/api/admin/user/update", {
      method: "POST",
      headers: { Authorization: admin, "Content-Type": "application/json;charset=utf-8", "X-Gatehouse-UI": "openlist" },
      body: JSON.stringify({ ...(created.data as object), base_path: "/webui-form", role: 0 }),
    });
    expect(await edit.json()).toMatchObject({ code: 200, data: { base_path: "/webui-form", role: 0 } });
    expect((await callApi(admin, `/api/admin/user/delete?id=${id}`)).code).toBe(200);
  });
});

describe("methods outside the API (AList's NoRoute)", () => {
  it("POST gets the page, other methods 405 with an empty body", async () => {
    const post = await fetchPath("/@manage/storages", { method: "POST", body: "x" });
    expect(post.status).toBe(200);
    expect(await post.text()).toContain('<div id="root"></div>');
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      const response = await fetchPath("/movies/a.mkv", { method, body: method === "DELETE" ? null : "x" });
      expect(response.status, method).toBe(405);
      expect(await response.text(), method).toBe("");
    }
  });

  it("HEAD is GET without the body", async () => {
    const response = await fetchPath("/", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("ETag")).toMatch(/^"/);
    expect(await response.text()).toBe("");
  });
});

describe("the API and file paths", () => {
  it.each(["/api/nowhere", "/api", "/d/a.txt", "/p/a.txt", "/d", "/dav", "/dav/x/y"])(
    "%s never gets HTML",
    async (path) => {
      for (const method of ["GET", "POST", "PUT", "PROPFIND"]) {
        const response = await fetchPath(path, { method, headers: { Accept: "text/html" } });
        const text = await response.text();
        expect(response.headers.get("Content-Type") ?? "", `${method} ${path}`).not.toContain("text/html");
        expect(text, `${method} ${path}`).not.toContain("<html");
      }
    },
  );

  it("/ping stays plain pong, with no database work", async () => {
    const counter = await roundTrips();
    expect(await (await fetchPath("/ping", { headers: { Accept: "text/html" } })).text()).toBe("pong");
    expect(await counter.count()).toBe(0);
  });
});

describe("the front end's files", () => {
  it("come from the assets binding when the Worker is asked, a miss is a plain 404", async () => {
    const script = /\/assets\/index-[\w-]+\.js/.exec(await (await fetchPath("/")).text())![0];
    const asset = await fetchPath(script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("Content-Type")).toMatch(/javascript/);
    await asset.arrayBuffer();

    const missing = await fetchPath("/assets/not-there-123.js");
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe("404 page not found");
    expect((await fetchPath("/assets/x.js", { method: "POST" })).status).toBe(405);
  });

  it("the unpacked folder holds the pinned front end and its license", async () => {
    expect(await (await env.ASSETS!.fetch(new Request(`${base}/VERSION`))).text()).toBe("v4.2.6");
    expect(await (await env.ASSETS!.fetch(new Request(`${base}/LICENSE`))).text()).toContain(
      "The OpenList Projects Contributors",
    );
    expect((await env.ASSETS!.fetch(new Request(`${base}/lite/index.html`))).status).toBe(404);
  });
});

describe("bad paths", () => {
  it.each([
    "/..%2f..%2fpackage.json",
    "/assets/..%2f..%2fwrangler.toml",
    "/assets/%2e%2e/%2e%2e/wrangler.toml",
    "/static/..%5c..%5cpackage.json",
    "/%00",
    "/a%00b/c",
    "/.gatehouse-webui.json",
    "/_headers",
    `/${"x/".repeat(4000)}`,
  ])("%.60s: never a file outside the front end, never a 500", async (path) => {
    const response = await fetchPath(path);
    const text = await response.text();
    expect([200, 404]).toContain(response.status);
    expect(text).not.toContain('"name": "gatehouse"');
    expect(text).not.toContain("compatibility_date");
    expect(text).not.toContain("Cache-Control: public");
    expect(text).not.toContain('"integrity"');
  });
});
