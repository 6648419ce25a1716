// Search inside workerd against the real servers: a build over an S3 storage (s3rver) and a WebDAV
// storage (webdav-server) through the admin routes, then what each kind of caller finds, the
// changes Gatehouse's own writes make to the index, clear, and who may build.
import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { dav } from "../../../test/support/dav-client.ts";
import { poll } from "../../../test/support/poll.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { davAddition, s3Addition, s3Put, upstreamDav } from "../../../test/support/upstreams.ts";
import { apiAs, type Envelope, inTrips, member, signIn } from "../../../test/support/workerd-client.ts";

const DAV_ROOT = "/library/searched";

let admin: string;
const { post } = apiAs(() => admin);
const search = (body: Record<string, unknown>, token = admin) => post("/api/fs/search", body, token);
const found = (reply: Envelope) => reply.data.content.map((item: any) => `${item.parent}/${item.name}`);

async function progress(): Promise<any> {
  const reply = await exports.default.fetch(
    new Request("http://gatehouse.test/api/admin/index/progress", { headers: { Authorization: admin } }),
  );
  return ((await reply.json()) as Envelope).data;
}

/** Polls the progress (each poll also moves the build on) until the build is done. */
async function builtIndex(): Promise<any> {
  return poll(progress, (now) => now.is_done, { timeoutMs: 10_000, everyMs: 100, what: "built" });
}

const upload = async (path: string, body: string): Promise<Envelope> =>
  (
    await exports.default.fetch(
      new Request("http://gatehouse.test/api/fs/put", {
        method: "PUT",
        headers: { Authorization: admin, "File-Path": encodeURIComponent(path) },
        body,
      }),
    )
  ).json();

beforeAll(async () => {
  admin = await signIn("search");
  await s3Put("search/reports/annual-report-2026.pdf", "pdf");
  await s3Put("search/reports/Quarterly REPORT q1.txt", "quarterly");
  await s3Put("search/private/salary-report.xlsx", "xlsx");
  await s3Put("search/hidden/report-hidden.txt", "hidden");
  await s3Put("search/team/team-report.md", "# team");
  await s3Put("search/日本/日本語.txt", "nihongo");
  for (const folder of [DAV_ROOT, `${DAV_ROOT}/docs`])
    expect([201, 405]).toContain((await upstreamDav("MKCOL", folder)).status);
  expect((await upstreamDav("PUT", `${DAV_ROOT}/docs/dav-report.txt`, { body: "dav" })).status).toBeLessThan(300);
  expect((await upstreamDav("PUT", `${DAV_ROOT}/docs/notes.md`, { body: "notes" })).status).toBeLessThan(300);

  await sql("DELETE FROM storages");
  await sql("DELETE FROM metas");
  await sql("UPDATE settings SET value = 'database' WHERE key = 'search_index'");
  await sql("UPDATE settings SET value = 'true' WHERE key = 'auto_update_index'");
  const s3 = await post("/api/admin/storage/create", {
    mount_path: "/s3",
    driver: "S3",
    addition: JSON.stringify({ ...s3Addition(), root_folder_path: "/search" }),
  });
  expect(s3.code, s3.message).toBe(200);
  const dav = await post("/api/admin/storage/create", {
    mount_path: "/dav",
    driver: "WebDav",
    addition: JSON.stringify(davAddition(DAV_ROOT)),
  });
  expect(dav.code, dav.message).toBe(200);
  expect(await post("/api/admin/index/build", { paths: ["/"], max_depth: -1 })).toEqual({
    code: 200,
    message: "success",
    data: null,
  });
  const done = await builtIndex();
  expect(done).toMatchObject({ is_done: true, error: "" });
  expect(done.obj_count).toBeGreaterThanOrEqual(16);
});

// The other suites share this database: they find search as a fresh install has it.
afterAll(async () => {
  await sql("UPDATE settings SET value = 'none' WHERE key = 'search_index'");
  await sql("UPDATE settings SET value = 'false' WHERE key = 'auto_update_index'");
  await sql("UPDATE settings SET value = '{}' WHERE key = 'index_progress'");
  await sql("DELETE FROM search_nodes");
});

describe("after a build over S3 and WebDAV", () => {
  it("finds substrings across both storages, in AList's shape, by name", async () => {
    const reply = await search({ parent: "/", keywords: "report" });
    expect(reply.code).toBe(200);
    // By name in byte order, as AList's `ORDER BY name` on SQLite.
    expect(found(reply)).toEqual([
      "/s3/reports/Quarterly REPORT q1.txt",
      "/s3/reports/annual-report-2026.pdf",
      "/dav/docs/dav-report.txt",
      "/s3/hidden/report-hidden.txt",
      "/s3/reports",
      "/s3/private/salary-report.xlsx",
      "/s3/team/team-report.md",
    ]);
    expect(reply.data.total).toBe(7);
    expect(reply.data.content[1]).toEqual({
      parent: "/s3/reports",
      name: "annual-report-2026.pdf",
      is_dir: false,
      size: 3,
      type: 0,
    });
    expect(reply.data.content[4]).toEqual({ parent: "/s3", name: "reports", is_dir: true, size: 0, type: 1 });
  });

  it("needs every keyword, folds case, finds two-character names, and pages with the same total", async () => {
    expect(found(await search({ keywords: "report 2026" }))).toEqual(["/s3/reports/annual-report-2026.pdf"]);
    expect(found(await search({ keywords: "quarterly report" }))).toEqual(["/s3/reports/Quarterly REPORT q1.txt"]);
    expect(found(await search({ keywords: "日本" }))).toEqual(["/s3/日本", "/s3/日本/日本語.txt"]);
    expect(found(await search({ parent: "/dav", keywords: "report", scope: 2 }))).toEqual(["/dav/docs/dav-report.txt"]);
    // A NUL cut FTS5's query short (an internal error): keywords with control characters are refused.
    expect(await search({ keywords: "report\u0000" })).toEqual({
      code: 400,
      message: "keywords must not contain control characters or unpaired surrogates",
      data: null,
    });
    expect(found(await search({ keywords: 'report"OR"日本' }))).toEqual([]);
    const pages = [];
    for (const page of [1, 2, 3]) pages.push(await search({ keywords: "report", page, per_page: 3 }));
    expect(pages.map((p) => p.data.total)).toEqual([7, 7, 7]);
    expect(pages.flatMap(found)).toEqual(found(await search({ keywords: "report" })));
  });

  it("costs two round trips: the caller with the metas and settings, then the page with its count", async () => {
    await inTrips(2, () => search({ keywords: "report" }));
  });

  it("shows a base-path user its part only, relative to its base path", async () => {
    const user = await member(admin, "search-based", { "/": 0 }, { base_path: "/s3/team" });
    const reply = await search({ keywords: "report" }, user);
    expect(reply.data).toEqual({
      content: [{ parent: "/", name: "team-report.md", is_dir: false, size: 6, type: 4 }],
      total: 1,
    });
  });

  it("shows a scoped role its scope and nothing beside it", async () => {
    const user = await member(admin, "search-scoped", { "/dav": 0 });
    const reply = await search({ keywords: "report" }, user);
    expect(found(reply)).toEqual(["/dav/docs/dav-report.txt"]);
    expect(reply.data.total).toBe(1);
  });

  it("hides a password folder's files without its password, and a hidden folder's subtree", async () => {
    await sql("INSERT INTO metas (path, password) VALUES ('/s3/private', 'payroll')");
    await sql("INSERT INTO metas (path, hide) VALUES ('/s3', '^hidden$')");
    const user = await member(admin, "search-reader", { "/": 0 });
    const reply = await search({ keywords: "report", per_page: 2 }, user);
    expect(reply.data.total).toBe(5);
    const all = [];
    for (const page of [1, 2, 3]) all.push(...found(await search({ keywords: "report", page, per_page: 2 }, user)));
    expect(all).not.toContain("/s3/private/salary-report.xlsx");
    expect(all).not.toContain("/s3/hidden/report-hidden.txt");
    expect(all).toHaveLength(5);
    expect(found(await search({ keywords: "report", password: "payroll" }, user))).toContain(
      "/s3/private/salary-report.xlsx",
    );
    expect((await search({ keywords: "hidden" }, user)).data.total).toBe(0);
    await sql("DELETE FROM metas");
  });
});

describe("the index follows Gatehouse's own writes", () => {
  it("finds an upload, a new folder, a rename, a move, a copy, and loses a removal, without a rebuild", async () => {
    expect((await upload("/s3/reports/fresh-upload.txt", "fresh")).code).toBe(200);
    expect((await search({ keywords: "fresh" })).data.content).toEqual([
      { parent: "/s3/reports", name: "fresh-upload.txt", is_dir: false, size: 5, type: 4 },
    ]);
    // The index's changes are the one write after the request's read.
    await inTrips(2, async () =>
      expect((await post("/api/fs/mkdir", { path: "/dav/docs/archive-2026" })).code).toBe(200),
    );
    expect(found(await search({ keywords: "archive", scope: 1 }))).toEqual(["/dav/docs/archive-2026"]);

    expect((await post("/api/fs/rename", { path: "/dav/docs/notes.md", name: "minutes.md" })).code).toBe(200);
    expect(found(await search({ keywords: "notes" }))).toEqual([]);
    expect(found(await search({ keywords: "minutes" }))).toEqual(["/dav/docs/minutes.md"]);

    const moved = await post("/api/fs/move", {
      src_dir: "/dav/docs",
      dst_dir: "/dav/docs/archive-2026",
      names: ["minutes.md"],
    });
    expect(moved.code, moved.message).toBe(200);
    expect(found(await search({ keywords: "minutes" }))).toEqual(["/dav/docs/archive-2026/minutes.md"]);

    const copied = await post("/api/fs/copy", { src_dir: "/s3", dst_dir: "/s3/team", names: ["reports"] });
    expect(copied.code, copied.message).toBe(200);
    expect(found(await search({ keywords: "fresh" }))).toEqual([
      "/s3/reports/fresh-upload.txt",
      "/s3/team/reports/fresh-upload.txt",
    ]);

    expect((await post("/api/fs/remove", { dir: "/s3/team", names: ["reports"] })).code).toBe(200);
    expect(found(await search({ keywords: "fresh" }))).toEqual(["/s3/reports/fresh-upload.txt"]);
  });

  it("finds what Gatehouse's WebDAV server wrote, and loses what it deleted", async () => {
    expect((await dav("PUT", "/dav/docs/over-webdav.txt", { body: "dav" })).status).toBe(201);
    expect(found(await search({ keywords: "over-webdav" }))).toEqual(["/dav/docs/over-webdav.txt"]);
    const moved = await dav("MOVE", "/dav/docs/over-webdav.txt", {
      headers: { Destination: "http://gatehouse.test/dav/dav/docs/archive-2026/moved-webdav.txt" },
    });
    expect(moved.status).toBe(201);
    expect(found(await search({ keywords: "webdav" }))).toEqual(["/dav/docs/archive-2026/moved-webdav.txt"]);
    expect((await dav("DELETE", "/dav/docs/archive-2026/moved-webdav.txt")).status).toBe(204);
    expect(found(await search({ keywords: "webdav" }))).toEqual([]);
  });

  it("finds what a background copy, move or offline download wrote, as its units settle", async () => {
    // Made behind Gatehouse's back: the index knows nothing of the source.
    for (const folder of [`${DAV_ROOT}/crossing`, `${DAV_ROOT}/crossing/deep`])
      expect((await upstreamDav("MKCOL", folder)).status).toBe(201);
    for (const file of ["crossing/ledger-alpha.txt", "crossing/deep/ledger-beta.txt"])
      expect((await upstreamDav("PUT", `${DAV_ROOT}/${file}`, { body: "ledger" })).status).toBe(201);
    const finished = async (kind: string, reply: Envelope) => {
      expect(reply.code, reply.message).toBe(200);
      const id = reply.data.tasks[0].id;
      const info = await poll(
        () => post(`/api/task/${kind}/info?tid=${id}`),
        (info) => [2, 4, 7].includes(info.data.state),
        { timeoutMs: 20_000, what: `task ${id} finished` },
      );
      expect(info.data).toMatchObject({ state: 2, error: "" });
    };
    await finished("copy", await post("/api/fs/copy", { src_dir: "/dav", dst_dir: "/s3", names: ["crossing"] }));
    expect(found(await search({ keywords: "ledger" })).sort()).toEqual([
      "/s3/crossing/deep/ledger-beta.txt",
      "/s3/crossing/ledger-alpha.txt",
    ]);
    expect(found(await search({ keywords: "deep", scope: 1 }))).toEqual(["/s3/crossing/deep"]);
    // A move: the files at their new place only, once the source is removed.
    await finished("move", await post("/api/fs/move", { src_dir: "/s3", dst_dir: "/dav/docs", names: ["crossing"] }));
    expect(found(await search({ keywords: "ledger" })).sort()).toEqual([
      "/dav/docs/crossing/deep/ledger-beta.txt",
      "/dav/docs/crossing/ledger-alpha.txt",
    ]);
    expect(found(await search({ keywords: "crossing", scope: 1 }))).toEqual(["/dav/docs/crossing"]);
    expect((await post("/api/fs/remove", { dir: "/dav/docs", names: ["crossing"] })).code).toBe(200);
    expect([200, 204]).toContain((await upstreamDav("DELETE", `${DAV_ROOT}/crossing`)).status);
    // An offline download too, named by its URL.
    const downloads = inject("storageServers").downloadsUrl;
    await finished(
      "offline_download",
      await post("/api/fs/add_offline_download", {
        path: "/s3/fetched",
        urls: [`${downloads}/bytes/1000/ledger-gamma.bin`],
        tool: "SimpleHttp",
        delete_policy: "delete_on_upload_succeed",
      }),
    );
    expect((await search({ keywords: "ledger" })).data.content).toEqual([
      { parent: "/s3/fetched", name: "ledger-gamma.bin", is_dir: false, size: 1000, type: 0 },
    ]);
    expect((await post("/api/fs/remove", { dir: "/s3", names: ["fetched"] })).code).toBe(200);
  }, 45_000);

  it("update re-reads a folder changed behind Gatehouse's back", async () => {
    await s3Put("search/reports/behind-the-back.txt", "x");
    expect((await search({ keywords: "behind" })).data.total).toBe(0);
    expect((await post("/api/admin/index/update", { paths: ["/s3/reports"], max_depth: -1 })).code).toBe(200);
    // Each progress poll moves the update on, as the web UI's polls do.
    for (let i = 0; i < 50 && (await search({ keywords: "behind" })).data.total === 0; i++) {
      await progress();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(found(await search({ keywords: "behind" }))).toEqual(["/s3/reports/behind-the-back.txt"]);
  });
});

describe("the index admin routes", () => {
  it("are refused to a non-admin; clear empties the index", async () => {
    const user = await member(admin, "search-nonadmin", { "/": 0xffff });
    expect(await post("/api/admin/index/build", {}, user)).toEqual({
      code: 403,
      message: "You are not an admin",
      data: null,
    });
    expect(await post("/api/admin/index/clear", {}, user)).toMatchObject({ code: 403 });
    expect((await search({ keywords: "report" })).data.total).toBeGreaterThan(0);
    expect(await post("/api/admin/index/clear")).toEqual({ code: 200, message: "success", data: null });
    expect(await search({ keywords: "report" })).toEqual({
      code: 200,
      message: "success",
      data: { content: [], total: 0 },
    });
    expect(await sql("SELECT count(*) FROM search_nodes")).toEqual([[0]]);
    expect(await progress()).toEqual({ obj_count: 0, is_done: true, last_done_time: null, error: "" });
  });
});
