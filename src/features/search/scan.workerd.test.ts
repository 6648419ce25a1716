// The Indexes page's manual scan inside workerd, over an S3 storage (s3rver) and a WebDAV storage
// (webdav-server): progress answered before any scan, a folder's tree re-listed into the index and
// found by search, a second start refused while one runs, and a wide tree stopped mid-way.
import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../../../test/support/poll.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { davAddition, s3Addition, s3Put, upstreamDav } from "../../../test/support/upstreams.ts";
import { apiAs, type Envelope, signIn } from "../../../test/support/workerd-client.ts";

/** Folders of the WebDAV tree, each with one inside: far more steps than a stop right after the start lets run. */
const WIDE = 80;
const DAV_ROOT = "/library/scan-wide";

let admin: string;
const { post } = apiAs(() => admin);
const found = async (keywords: string) =>
  ((await post("/api/fs/search", { parent: "/", keywords })).data.content as { parent: string; name: string }[]).map(
    (item) => `${item.parent}/${item.name}`,
  );

async function progress(): Promise<Envelope> {
  const reply = await exports.default.fetch(
    new Request("http://gatehouse.test/api/admin/scan/progress", { headers: { Authorization: admin } }),
  );
  return reply.json();
}

/** Polls the progress, as the page does (each poll moves the scan on), until the scan is done. */
async function scanned(): Promise<{ obj_count: number; is_done: boolean }> {
  return (await poll(progress, (now) => now.data.is_done, { timeoutMs: 10_000, what: "scanned" })).data;
}

beforeAll(async () => {
  admin = await signIn("scan");
  await s3Put("scan/docs/alpha-scanned.txt", "alpha");
  await s3Put("scan/docs/sub/beta-scanned.txt", "beta");
  expect([201, 405]).toContain((await upstreamDav("MKCOL", DAV_ROOT)).status);
  await Promise.all(
    Array.from({ length: WIDE }, async (_, i) => {
      expect([201, 405]).toContain((await upstreamDav("MKCOL", `${DAV_ROOT}/f${i}`)).status);
      expect([201, 405]).toContain((await upstreamDav("MKCOL", `${DAV_ROOT}/f${i}/g`)).status);
      expect((await upstreamDav("PUT", `${DAV_ROOT}/f${i}/g/x${i}-wide.txt`, { body: "wide" })).status).toBeLessThan(
        300,
      );
    }),
  );
  await sql("DELETE FROM search_nodes");
  await sql("DELETE FROM search_queue");
  const made = await post("/api/admin/storage/create", {
    mount_path: "/scanned",
    driver: "S3",
    addition: JSON.stringify({ ...s3Addition(), root_folder_path: "/scan" }),
  });
  expect(made.code, made.message).toBe(200);
  const wide = await post("/api/admin/storage/create", {
    mount_path: "/scanned-wide",
    driver: "WebDav",
    addition: JSON.stringify(davAddition(DAV_ROOT)),
  });
  expect(wide.code, wide.message).toBe(200);
});

// The other suites share this database: they find search and the scan as a fresh install has them.
afterAll(async () => {
  await sql("UPDATE settings SET value = 'none' WHERE key = 'search_index'");
  await sql("UPDATE settings SET value = '{}' WHERE key IN ('scan_progress', 'index_progress')");
  await sql("DELETE FROM search_queue");
  await sql("DELETE FROM search_nodes");
  await sql("DELETE FROM storages WHERE mount_path IN ('/scanned', '/scanned-wide')");
});

describe("the manual scan", () => {
  it("answers its progress before any scan ran, even without a search engine (the page polls it on load)", async () => {
    expect(await progress()).toEqual({ code: 200, message: "success", data: { obj_count: 0, is_done: true } });
    // Starting one needs the index it writes into.
    expect(await post("/api/admin/scan/start", { path: "/scanned/docs", limit: 0 })).toEqual({
      code: 500,
      message: "search not available",
      data: null,
    });
  });

  it("re-lists a folder's whole tree into the index: its progress counts the entries, search finds them", async () => {
    await sql("UPDATE settings SET value = 'database' WHERE key = 'search_index'");
    expect(await found("scanned")).toEqual([]);
    expect(await post("/api/admin/scan/start", { path: "/scanned/docs", limit: 0 })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    // docs holds alpha and sub; sub holds beta.
    expect(await scanned()).toEqual({ obj_count: 3, is_done: true });
    expect(await found("scanned")).toEqual(["/scanned/docs/alpha-scanned.txt", "/scanned/docs/sub/beta-scanned.txt"]);
    expect(await post("/api/admin/scan/stop")).toEqual({
      code: 400,
      message: "manual scan is not running",
      data: null,
    });
  });

  it("refuses a second start while one runs, and stops mid-way: what was listed stays, nothing more is written", async () => {
    expect((await post("/api/admin/scan/start", { path: "/scanned-wide" })).code).toBe(200);
    expect(await post("/api/admin/scan/start", { path: "/scanned/docs" })).toEqual({
      code: 400,
      message: "manual scan is running, please try later",
      data: null,
    });
    expect(await post("/api/admin/scan/stop")).toEqual({ code: 200, message: "success", data: null });
    const stopped = (await progress()).data;
    expect(stopped.is_done).toBe(true);
    expect(stopped.obj_count).toBeLessThan(WIDE * 3);
    expect(await sql("SELECT count(*) FROM search_queue")).toEqual([[0]]);
    // A step still running when the stop came writes nothing: its claim is gone.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await progress()).data).toEqual(stopped);
    const listed = (await post("/api/fs/search", { parent: "/scanned-wide", keywords: "wide", per_page: 1 })).data
      .total;
    expect(listed).toBeLessThan(WIDE);
    // The earlier scan's entries are still there.
    expect(await found("alpha")).toEqual(["/scanned/docs/alpha-scanned.txt"]);
  });
});
