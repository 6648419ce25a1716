// The file side on WebDAV inside workerd, against webdav-server on 127.0.0.1: PROPFIND listings
// and lookups, /d and /p proxied with the upstream's credentials kept server-side and Range passed
// through, and the errors a WebDAV upstream gives. Files are written straight to the server.
import { exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { apiAs, signIn } from "../../../test/support/workerd-client.ts";

const servers = inject("storageServers");
const BASIC = `Basic ${btoa("davuser:dav password")}`;
const davUrl = (path: string) => `${servers.webdavUrl}/library${path.split("/").map(encodeURIComponent).join("/")}`;

let admin: string;
const { post } = apiAs(() => admin);
const mount = (mountPath: string, extra: Record<string, unknown> = {}) =>
  post("/api/admin/storage/create", {
    mount_path: mountPath,
    driver: "WebDav",
    addition: JSON.stringify({
      address: servers.webdavUrl,
      username: "davuser",
      password: "dav password",
      root_folder_path: "/library",
      ...extra,
    }),
  });

beforeAll(async () => {
  admin = await signIn("fs-dav");
  expect((await fetch(davUrl("/sub"), { method: "MKCOL", headers: { Authorization: BASIC } })).status).toBe(201);
  for (const [path, body] of [
    ["/sub/a b+é.txt", "0123456789abcdef"],
    ["/notes.md", "# Notes\n<script>alert(1)</script>\n[x](javascript:alert(2))\n"],
  ]) {
    expect((await fetch(davUrl(path!), { method: "PUT", headers: { Authorization: BASIC }, body })).status).toBe(201);
  }
});
beforeEach(async () => {
  await sql("DELETE FROM storages");
});

describe("WebDAV reads", () => {
  it("through an Alias, serves a WebDAV file through this server: its credentials never let /d redirect", async () => {
    expect((await mount("/dav")).code).toBe(200);
    const alias = await post("/api/admin/storage/create", {
      mount_path: "/alw",
      driver: "Alias",
      addition: JSON.stringify({ paths: "/dav/sub" }),
    });
    expect(alias.code, alias.message).toBe(200);
    const got = await post("/api/fs/get", { path: "/alw/a b+é.txt" });
    expect(got.data.raw_url).toBe(`http://gatehouse.test/p/alw/a%20b+%C3%A9.txt?sign=${got.data.sign}`);
    const url = `http://gatehouse.test/d/alw/${encodeURIComponent("a b+é.txt")}?sign=${got.data.sign}`;
    const served = await exports.default.fetch(url, { redirect: "manual" });
    expect(served.status).toBe(200);
    expect(served.headers.get("Location")).toBeNull();
    expect(await served.text()).toBe("0123456789abcdef");
  });

  it("lists the root and a subfolder, with names decoded and sizes", async () => {
    expect((await mount("/dav")).code).toBe(200);
    const root = await post("/api/fs/list", { path: "/dav" });
    expect(root.data.provider).toBe("WebDav");
    const byName = Object.fromEntries(root.data.content.map((e: any) => [e.name, e]));
    // Other test files share this WebDAV root and work in folders of their own ("written",
    // "searched", "tasks", …), in whatever order the files run: only the fixture's names are held.
    expect(
      Object.keys(byName)
        .filter((name) => !byName[name].is_dir || name === "sub")
        .sort(),
    ).toEqual(["notes.md", "readme.txt", "sub"]);
    expect(byName.sub).toMatchObject({ is_dir: true, size: 0, type: 1 });
    const sub = await post("/api/fs/list", { path: "/dav/sub" });
    expect(sub.data.content).toEqual([
      expect.objectContaining({ name: "a b+é.txt", size: 16, is_dir: false, path: "/library/sub/a b+é.txt" }),
    ]);
  });

  it("gets one object with one PROPFIND, and says what is missing or not a folder", async () => {
    await mount("/dav");
    expect((await post("/api/fs/get", { path: "/dav/sub/a b+é.txt" })).data).toMatchObject({
      name: "a b+é.txt",
      size: 16,
      is_dir: false,
      provider: "WebDav",
    });
    expect((await post("/api/fs/list", { path: "/dav/nope" })).message).toBe(
      "failed get objs: failed get dir: object not found",
    );
    expect((await post("/api/fs/list", { path: "/dav/readme.txt" })).message).toBe("failed get objs: not a folder");
  });

  it("proxies /d with Range, keeping the upstream's credentials on the server", async () => {
    await mount("/dav");
    const file = (await post("/api/fs/list", { path: "/dav/sub" })).data.content[0];
    const url = `http://gatehouse.test/d/dav/sub/${encodeURIComponent(file.name)}?sign=${file.sign}`;
    const whole = await exports.default.fetch(url);
    expect(whole.status).toBe(200);
    expect(await whole.text()).toBe("0123456789abcdef");
    const ranged = await exports.default.fetch(url, { headers: { Range: "bytes=10-" } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe("abcdef");
    expect(JSON.stringify([...ranged.headers])).not.toContain("Basic");
    const got = await post("/api/fs/get", { path: "/dav/sub/a b+é.txt" });
    expect(got.data.raw_url).toBe(`http://gatehouse.test/p/dav/sub/a%20b+%C3%A9.txt?sign=${got.data.sign}`);
  });

  it("serves Markdown through /p without script", async () => {
    await mount("/dav");
    const file = (await post("/api/fs/get", { path: "/dav/notes.md" })).data;
    const text = await (await exports.default.fetch(`http://gatehouse.test/p/dav/notes.md?sign=${file.sign}`)).text();
    expect(text).toContain("# Notes");
    expect(text).not.toContain("<script");
    expect(text).not.toContain("javascript:");
  });

  it("reports wrong credentials without the password, and a server that is down", async () => {
    await mount("/wrong", { password: "not-the-password" });
    await sql("UPDATE storages SET status = 'work' WHERE mount_path = '/wrong'");
    const wrong = await post("/api/fs/list", { path: "/wrong" });
    expect(wrong.message).toBe(
      `failed get objs: 127.0.0.1:${new URL(servers.webdavUrl).port} refused the credentials of davuser (HTTP 401)`,
    );
    await mount("/down", { address: `http://127.0.0.1:${servers.deadPort}` });
    await sql("UPDATE storages SET status = 'work' WHERE mount_path = '/down'");
    expect((await post("/api/fs/list", { path: "/down" })).message).toMatch(
      new RegExp(`^failed get objs: cannot reach 127\\.0\\.0\\.1:${servers.deadPort}: `),
    );
  });
});

describe("Range checked before the upstream is asked", () => {
  it("serves the whole file through /d for an inverted range (bytes=5-2), as for the other invalid spellings", async () => {
    await mount("/dav");
    const file = (await post("/api/fs/get", { path: "/dav/sub/a b+é.txt" })).data;
    const url = `http://gatehouse.test/d/dav/sub/${encodeURIComponent(file.name)}?sign=${file.sign}`;
    for (const range of ["bytes=5-2", "bytes=-", "items=0-1"]) {
      const reply = await exports.default.fetch(url, { headers: { Range: range } });
      expect([reply.status, await reply.text()], range).toEqual([200, "0123456789abcdef"]);
    }
  });
});
