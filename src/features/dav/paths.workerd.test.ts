// Which storage and which upstream name a /dav path reaches: under nested mounts (`/a` and `/a/b`)
// the deepest mount serves, whichever was created first, over WebDAV and over /api/fs/list alike;
// only /dav and what lies below it is the WebDAV server (`/davx` is not); and a name with spaces,
// `%`, `#`, `?` or non-ASCII letters reaches a WebDAV upstream as itself, escaped once each way.
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { ADMIN_BASIC, dav, hrefs } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { escaped, s3Addition, s3Put, s3Text, upstreamDav, upstreamDavText } from "../../../test/support/upstreams.ts";
import { callApi, signIn } from "../../../test/support/workerd-client.ts";

const ROOT = "davpaths";
const UPSTREAM_ROOT = "/library/written/davpaths";
let admin: string;

const mountS3 = async (mount_path: string, root: string) => {
  const made = await callApi(admin, "/api/admin/storage/create", {
    mount_path,
    driver: "S3",
    addition: JSON.stringify({ ...s3Addition(), root_folder_path: `/${ROOT}/${root}` }),
    webdav_policy: "native_proxy",
  });
  expect(made.code, made.message).toBe(200);
};

beforeAll(async () => {
  admin = await signIn("dav-paths");
  await sql("DELETE FROM storages");
  await sql("DELETE FROM metas");
  // Each nested pair has a decoy where the outer mount would put the inner path, and the real
  // file in the inner mount's own root; one pair is created outer first, the other inner first.
  for (const [key, text] of [
    ["outer/inner/decoy.txt", "outer"],
    ["inner/real.txt", "inner"],
    ["deep-outer/inner/decoy.txt", "outer"],
    ["deep-inner/real.txt", "inner"],
  ]) {
    await s3Put(`${ROOT}/${key}`, text!);
  }
  await mountS3("/nest", "outer");
  await mountS3("/nest/inner", "inner");
  await mountS3("/deep/inner", "deep-inner");
  await mountS3("/deep", "deep-outer");

  for (const folder of ["/library/written", UPSTREAM_ROOT])
    expect([201, 405]).toContain((await upstreamDav("MKCOL", folder)).status);
  const servers = inject("storageServers");
  const made = await callApi(admin, "/api/admin/storage/create", {
    mount_path: "/up",
    driver: "WebDav",
    addition: JSON.stringify({
      address: servers.webdavUrl,
      username: "davuser",
      password: "dav password",
      root_folder_path: UPSTREAM_ROOT,
    }),
  });
  expect(made.code, made.message).toBe(200);
});

describe("nested mounts: the deepest mount serves", () => {
  for (const outer of ["/nest", "/deep"]) {
    const inner = `${outer}/inner`;
    const innerRoot = outer === "/nest" ? "inner" : "deep-inner";

    it(`over WebDAV, ${inner} is the inner storage's (${outer === "/nest" ? "outer" : "inner"} mount created first)`, async () => {
      expect(hrefs(await (await dav("PROPFIND", `${inner}/`, { headers: { Depth: "1" } })).text())).toEqual([
        `/dav${inner}/`,
        `/dav${inner}/real.txt`,
      ]);
      expect(await (await dav("GET", `${inner}/real.txt`)).text()).toBe("inner");
      expect((await dav("GET", `${inner}/decoy.txt`)).status).toBe(404);
      expect((await dav("PUT", `${inner}/new.txt`, { body: "new" })).status).toBe(201);
      expect(await s3Text(`${ROOT}/${innerRoot}/new.txt`)).toBe("new");
    });

    it(`over /api/fs/list, ${inner} is the inner storage's, and ${outer} shows it once`, async () => {
      const listed = await callApi(admin, "/api/fs/list", { path: inner });
      expect(listed.code, listed.message).toBe(200);
      const names = listed.data.content.map((entry: { name: string }) => entry.name);
      expect(names).toContain("real.txt");
      expect(names).not.toContain("decoy.txt");
      const above = await callApi(admin, "/api/fs/list", { path: outer });
      expect(above.data.content.map((entry: { name: string }) => entry.name)).toEqual(["inner"]);
    });
  }
});

describe("/dav and only /dav", () => {
  it("a Destination under /davx or /davnest is not this server's /dav: 502, nothing copied", async () => {
    for (const destination of [
      "/davx/nest/inner/copy.txt",
      "/davnest/inner/copy.txt",
      "http://gatehouse.test/davnest/inner/copy.txt",
    ]) {
      const reply = await dav("COPY", "/nest/inner/real.txt", { headers: { Destination: destination } });
      expect(reply.status, destination).toBe(502);
      expect(await reply.text()).toBe("Destination is outside /dav\n");
    }
    expect(await s3Text(`${ROOT}/inner/copy.txt`)).toBe(null);
  });

  it("a request to /davx is not a WebDAV request", async () => {
    const reply = await exports.default.fetch(
      new Request("http://gatehouse.test/davx/nest/inner/real.txt", {
        method: "PROPFIND",
        headers: { Authorization: ADMIN_BASIC, Depth: "0" },
      }),
    );
    // What any path outside the API and /dav answers a method other than GET or POST: the web
    // UI's 405 with an empty body.
    expect(reply.status).toBe(405);
    expect(await reply.text()).toBe("");
  });
});

describe("names with spaces, %, #, ? and non-ASCII letters toward a WebDAV upstream", () => {
  const folder = "dir #1 100% é";
  const file = "a b%41 #2 ?q=1&x ü.txt";
  const copy = "copy %25 #3 ?ß.txt";
  const moved = "moved 50% #4 ñ.txt";

  it("MKCOL, PUT, PROPFIND, GET, COPY, MOVE and DELETE each reach the upstream under the name itself", async () => {
    const at = (name: string) => `/up/${escaped(folder)}/${escaped(name)}`;
    expect((await dav("MKCOL", `/up/${escaped(folder)}`)).status).toBe(201);
    expect((await dav("PUT", at(file), { body: "odd" })).status).toBe(201);
    expect(await upstreamDavText(`${UPSTREAM_ROOT}/${folder}/${file}`)).toBe("odd");

    const listing = await (await dav("PROPFIND", `/up/${escaped(folder)}/`, { headers: { Depth: "1" } })).text();
    const listed = hrefs(listing);
    // An href is XML text: `&` in a name is `&amp;` there, escaped or not in the URL.
    expect(listed.map((href) => decodeURIComponent(href!.replace(/&amp;/g, "&")))).toEqual([
      `/dav/up/${folder}/`,
      `/dav/up/${folder}/${file}`,
    ]);
    for (const href of listed) expect(href).not.toMatch(/[ #?]|%(?![0-9A-F]{2})/);
    expect(listing).toContain(`<D:displayname>${file.replace(/&/g, "&amp;")}</D:displayname>`);
    expect(await (await dav("GET", at(file))).text()).toBe("odd");

    expect((await dav("COPY", at(file), { headers: { Destination: `/dav${at(copy)}` } })).status).toBe(201);
    expect(await upstreamDavText(`${UPSTREAM_ROOT}/${folder}/${copy}`)).toBe("odd");
    expect((await dav("MOVE", at(file), { headers: { Destination: `/dav${at(moved)}` } })).status).toBe(201);
    expect([
      await upstreamDavText(`${UPSTREAM_ROOT}/${folder}/${file}`),
      await upstreamDavText(`${UPSTREAM_ROOT}/${folder}/${moved}`),
    ]).toEqual([null, "odd"]);
    expect((await dav("DELETE", at(copy))).status).toBe(204);
    expect(await upstreamDavText(`${UPSTREAM_ROOT}/${folder}/${copy}`)).toBe(null);
    expect((await dav("DELETE", `/up/${escaped(folder)}`)).status).toBe(204);
    expect((await upstreamDav("PROPFIND", `${UPSTREAM_ROOT}/${folder}`, { headers: { Depth: "0" } })).status).toBe(404);
  });
});
