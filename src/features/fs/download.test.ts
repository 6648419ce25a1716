// /d and /p in Node: when a storage's `enable_sign` asks for a sign, what a proxied request carries
// to the upstream and what it never does (the client's credentials, a redirect with the storage's
// credentials), Markdown filtering under Range, ranges and conditional requests on bytes served
// here, and the file name in Content-Disposition. The upstream is a small HTTP server started here
// that records every request it gets: none of the stand-ins can show what reached them.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { settings, storages } from "../../db/schema.ts";
import { signInAdmin } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";
import { contentDisposition } from "./serve.ts";
import { sanitizeMarkdown } from "./markdown.ts";

const README =
  "# Notes\n<script>alert('from the readme')</script>\nSafe text that follows the script, long enough to be cut by a range.\n";
const PLAIN = "0123456789abcdefghij";

let fixture: UnitFixture;
let admin: string;
let upstream: Server;
let origin: string;
let seen: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];

/** The recording upstream: plain files with Range, a WebDAV file whose GET redirects, and the redirect's target. */
function startUpstream(): Promise<Server> {
  const files: Record<string, string> = { "/files/plain.txt": PLAIN, "/files/readme.md": README };
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    req.resume();
    if (req.method === "PROPFIND") {
      res.writeHead(207, { "Content-Type": "application/xml" });
      res.end(
        `<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>${req.url}</D:href><D:propstat><D:prop><D:resourcetype/>` +
          "<D:getcontentlength>5</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>",
      );
      return;
    }
    if (req.url === "/dav/moved.txt") {
      res.writeHead(302, { Location: "/elsewhere/moved.txt" });
      res.end();
      return;
    }
    if (req.url === "/elsewhere/moved.txt") {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("followed");
      return;
    }
    const body = files[req.url ?? ""];
    if (body === undefined) {
      res.writeHead(404);
      res.end();
      return;
    }
    const range = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ""));
    if (range) {
      const [start, end] = [Number(range[1]), Math.min(Number(range[2]), body.length - 1)];
      res.writeHead(206, { "Content-Range": `bytes ${start}-${end}/${body.length}`, "Content-Type": "text/plain" });
      res.end(body.slice(start, end + 1));
      return;
    }
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const { post } = api(
  () => fixture,
  () => admin,
);
const fetchPath = (path: string, headers: Record<string, string> = {}) => fixture.request(path, { headers });
const setSetting = (key: string, value: string) =>
  fixture.db.update(settings).set({ value }).where(eq(settings.key, key));

async function mount(
  mountPath: string,
  driver: string,
  addition: Record<string, unknown>,
  extra: Partial<typeof storages.$inferInsert> = {},
) {
  await fixture.db.insert(storages).values({
    mountPath,
    driver,
    status: "work",
    addition: JSON.stringify(addition),
    modifiedAtMs: Date.UTC(2026, 2, 1, 8),
    ...extra,
  });
}

beforeAll(async () => {
  [fixture, upstream] = await Promise.all([createUnitFixture(), startUpstream()]);
  origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  admin = await signInAdmin(fixture);
});
afterAll(async () => {
  fixture.close();
  await new Promise((resolve) => upstream.close(resolve));
});
beforeEach(async () => {
  seen = [];
  await fixture.db.delete(storages);
  await setSetting("sign_all", "false");
});

describe("a storage's enable_sign", () => {
  it("asks for a sign on /d even with sign_all off, and lists the sign it needs", async () => {
    await mount("/plain", "Virtual", { num_file: 1, num_folder: 0, min_file_size: 10, max_file_size: 10 });
    await mount(
      "/signed",
      "Virtual",
      { num_file: 1, num_folder: 0, min_file_size: 10, max_file_size: 10 },
      { enableSign: true },
    );
    const plain = (await post("/api/fs/list", { path: "/plain" })).data.content[0];
    expect(plain.sign).toBe("");
    expect((await fetchPath(`/d/plain/${plain.name}`)).status).toBe(200);

    const signed = (await post("/api/fs/list", { path: "/signed" })).data.content[0];
    expect(signed.sign).not.toBe("");
    expect(await (await fetchPath(`/d/signed/${signed.name}`)).json()).toEqual({
      code: 401,
      message: "expire missing",
      data: null,
    });
    expect(await (await fetchPath(`/p/signed/${signed.name}`)).json()).toEqual({
      code: 401,
      message: "expire missing",
      data: null,
    });
    expect((await fetchPath(`/d/signed/${signed.name}?sign=${signed.sign}`)).status).toBe(200);
  });
});

describe("proxying to the upstream", () => {
  it("never sends the client's Authorization or Cookie to the upstream, on /p or a proxied /d", async () => {
    await mount("/links", "UrlTree", { url_structure: `plain.txt:20:${origin}/files/plain.txt` }, { webProxy: true });
    const client = {
      Authorization: "Bearer the-clients-gatehouse-token",
      Cookie: "session=the-clients-cookie",
      Range: "bytes=0-3",
      "User-Agent": "test-agent",
    };
    for (const prefix of ["/p", "/d"]) {
      const response = await fetchPath(`${prefix}/links/plain.txt`, client);
      expect(response.status, prefix).toBe(206);
      expect(await response.text(), prefix).toBe("0123");
    }
    const gets = seen.filter((request) => request.url === "/files/plain.txt");
    expect(gets).toHaveLength(2);
    for (const { headers } of gets) {
      expect(headers.authorization).toBeUndefined();
      expect(headers.cookie).toBeUndefined();
      // What is forwarded still is: the range and the agent.
      expect(headers.range).toBe("bytes=0-3");
      expect(headers["user-agent"]).toBe("test-agent");
    }
  });

  it("never follows a redirect from a link that carries the storage's credentials (WebDAV)", async () => {
    await mount("/wd", "WebDav", {
      address: `${origin}/dav`,
      username: "storage-user",
      password: "storage password",
      root_folder_path: "/",
    });
    for (const prefix of ["/p", "/d"]) {
      expect(await (await fetchPath(`${prefix}/wd/moved.txt`)).json(), prefix).toEqual({
        code: 500,
        message: `http request [${origin}/dav/moved.txt] failure,status: 302 (a redirect the credentials of this storage are not sent to)`,
        data: null,
      });
    }
    // The storage's credentials went to its own address, and nowhere else.
    expect(
      seen.find((request) => request.url === "/dav/moved.txt" && request.method === "GET")?.headers.authorization,
    ).toMatch(/^Basic /);
    expect(seen.filter((request) => request.url.startsWith("/elsewhere"))).toEqual([]);
  });

  // A copy between storages is a background task now (docs/decisions.md D15.2): without the queue
  // binding (Node) it is refused before anything is read; the task reads through the same readSource
  // (operations.ts), which follows no redirect of a link that carries credentials.
  it("nor when a copy to another storage is asked for (a task: refused here before any read)", async () => {
    await mount("/wd", "WebDav", {
      address: `${origin}/dav`,
      username: "storage-user",
      password: "storage password",
      root_folder_path: "/",
    });
    await mount("/wd2", "WebDav", {
      address: `${origin}/dav2`,
      username: "other-user",
      password: "other password",
      root_folder_path: "/",
    });
    expect(
      await post("/api/fs/copy", { src_dir: "/wd", dst_dir: "/wd2", names: ["moved.txt"], overwrite: true }),
    ).toMatchObject({ code: 500, message: expect.stringMatching(/TASK_QUEUE binding is missing/) });
    expect(seen.filter((request) => request.url.startsWith("/elsewhere") || request.method === "PUT")).toEqual([]);
  });

  it("filters scripts out of Markdown for a Range request too: the whole file, made safe, never a raw slice", async () => {
    await mount(
      "/links",
      "UrlTree",
      { url_structure: `readme.md:${README.length}:${origin}/files/readme.md` },
      { webProxy: true },
    );
    expect(README.slice(0, 60)).toContain("<script>");
    for (const headers of [{}, { Range: "bytes=0-59" }, { Range: "bytes=0-59", "If-Range": '"anything"' }] as Record<
      string,
      string
    >[]) {
      const response = await fetchPath("/p/links/readme.md", headers);
      expect(response.status, JSON.stringify(headers)).toBe(200);
      expect(response.headers.get("content-range")).toBeNull();
      const body = await response.text();
      expect(body, JSON.stringify(headers)).toBe(sanitizeMarkdown(README));
      expect(body).not.toContain("<script");
    }
    // The upstream was asked for the whole file each time.
    expect(
      seen.filter((request) => request.url === "/files/readme.md").map((request) => request.headers.range ?? null),
    ).toEqual([null, null, null]);
  });
});

describe("ranges and conditional requests on bytes served here (/p)", () => {
  async function file() {
    await mount("/v", "Virtual", { num_file: 1, num_folder: 0, min_file_size: 1000, max_file_size: 1000 });
    const entry = (await post("/api/fs/list", { path: "/v" })).data.content[0];
    const url = `/p/v/${entry.name}`;
    const whole = await fetchPath(url);
    return {
      url,
      size: 1000,
      bytes: new Uint8Array(await whole.arrayBuffer()),
      etag: whole.headers.get("etag")!,
      lastModified: whole.headers.get("last-modified")!,
    };
  }

  it("clamps a range's end to the file's size", async () => {
    const { url, size, bytes } = await file();
    const response = await fetchPath(url, { Range: "bytes=990-999999" });
    expect(response.status).toBe(206);
    expect(response.headers.get("content-range")).toBe(`bytes 990-${size - 1}/${size}`);
    expect(response.headers.get("content-length")).toBe("10");
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes.slice(990));
  });

  it("answers a suffix range longer than the file with the whole file", async () => {
    const { url, size, bytes } = await file();
    const response = await fetchPath(url, { Range: `bytes=-${size + 500}` });
    expect(response.status).toBe(206);
    expect(response.headers.get("content-range")).toBe(`bytes 0-${size - 1}/${size}`);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
  });

  it("honours If-Range: the range while the etag or date still matches, else the whole file", async () => {
    const { url, size, etag, lastModified } = await file();
    const ranged = async (ifRange: string) => {
      const response = await fetchPath(url, { Range: "bytes=0-9", "If-Range": ifRange });
      return [response.status, (await response.arrayBuffer()).byteLength];
    };
    expect(await ranged(etag)).toEqual([206, 10]);
    expect(await ranged(lastModified)).toEqual([206, 10]);
    expect(await ranged('"an-older-version"')).toEqual([200, size]);
    expect(await ranged("Sun, 01 Mar 2026 07:00:00 GMT")).toEqual([200, size]);
  });

  it("answers If-Modified-Since equal to the modification time with 304, an earlier one with the file", async () => {
    const { url, lastModified } = await file();
    expect(lastModified).toBe("Sun, 01 Mar 2026 08:00:00 GMT");
    expect((await fetchPath(url, { "If-Modified-Since": lastModified })).status).toBe(304);
    expect((await fetchPath(url, { "If-Modified-Since": "Sun, 01 Mar 2026 07:59:59 GMT" })).status).toBe(200);
  });
});

describe("Content-Disposition", () => {
  it("keeps the quoted file name to printable ASCII without quotes, backslashes or line breaks; filename* carries the real name", () => {
    expect(contentDisposition('say "hi"\\\r\nSet-Cookie: x=1 é.txt')).toBe(
      `attachment; filename="say _hi____Set-Cookie: x=1 _.txt"; filename*=UTF-8''say%20%22hi%22%5C%0D%0ASet-Cookie:%20x=1%20%C3%A9.txt`,
    );
    expect(contentDisposition("it's.txt")).toBe(`attachment; filename="it's.txt"; filename*=UTF-8''it%27s.txt`);
  });
});
