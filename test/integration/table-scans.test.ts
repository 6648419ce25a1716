// The request path reads by index: no statement of the requests every client makes over and over
// (who am I, a listing, a file, WebDAV's PROPFIND and GET, a download, the share and storage lists,
// and the writes of both sides) reads a table whole, beyond the few read whole by design. The local endpoint lists the statements whose
// plans do (`/__scans`, EXPLAIN QUERY PLAN); on Turso, such a read grows with the deployment in
// latency and in billed rows. The admin pages' own pages read by offset, which walks an index by
// design; only the storage list, the one over thousands of rows, is held here.
import { beforeAll, describe, expect, it } from "vitest";
import { dav } from "../support/dav-client.ts";
import { sql, tableScans } from "../support/libsql-http.ts";
import { callApi, fetchPath, makeUser, mountStorage, signIn } from "../support/workerd-client.ts";

/** Read whole by design: a fixed set of rows (the settings, the roles), or the metas (the file side reads them all at once). */
const READ_WHOLE = new Set(["settings", "roles", "metas"]);
/**
 * What the background of earlier test files (index builds, task units, upload sweeps) may still be
 * reading beside these requests, which read none of these tables.
 */
const BACKGROUND = new Set([
  "search_queue",
  "search_nodes",
  "search_grams",
  "tasks",
  "task_units",
  "upload_sessions",
  "upload_chunks",
]);

/** The statements `request` ran that read a table whole, beyond READ_WHOLE, by their plans' steps. */
async function scansOf(request: () => Promise<Response>): Promise<{ sql: string; scans: string[] }[]> {
  const watch = await tableScans();
  const reply = await request();
  expect(reply.status).toBeLessThan(300);
  await reply.arrayBuffer();
  const table = (step: string) => /^SCAN (\w+)/.exec(step)![1]!;
  return (await watch.since()).filter(
    (scan) =>
      scan.scans.some((step) => !READ_WHOLE.has(table(step))) &&
      !scan.scans.every((step) => BACKGROUND.has(table(step))),
  );
}

let token: string;
/** A user without the admin role: the share list reads only its own shares. */
let user: string;
let file: { name: string; sign: string };
const json = (path: string, body: unknown) => () =>
  fetchPath(path, {
    method: "POST",
    headers: { Authorization: token, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  token = await signIn("table-scans");
  await sql("DELETE FROM storages");
  // Mounts side by side under one folder, as a deployment with many storages has them.
  // Files of 1 KiB: a download reads its whole body, and the Virtual driver's sizes go to gigabytes.
  const files = { num_file: 3, num_folder: 2, min_file_size: 1024, max_file_size: 1024 };
  for (let i = 0; i < 3; i++) expect((await mountStorage(token, `/scans/${i}`, "Virtual", files)).code).toBe(200);
  expect((await mountStorage(token, "/scans/w", "R2 Binding", { root_folder_path: "/table-scans" })).code).toBe(200);
  const listed = await callApi(token, "/api/fs/list", { path: "/scans/1" });
  expect(listed.code).toBe(200);
  file = (listed.data.content as { name: string; sign: string; is_dir: boolean }[]).find((entry) => !entry.is_dir)!;
  await makeUser(token, "table-scans-user", { "/scans": 0 });
  user = await signIn("table-scans-user", "table-scans-user", "table-scans-user password");
});

describe("the request path reads no table whole", () => {
  const requests: [string, () => Promise<Response>][] = [
    ["GET /api/me", () => fetchPath("/api/me", { headers: { Authorization: token } })],
    ["GET /api/me/sessions", () => fetchPath("/api/me/sessions", { headers: { Authorization: token } })],
    ["POST /api/fs/list of a storage", json("/api/fs/list", { path: "/scans/1" })],
    ["POST /api/fs/list of the folder above the storages", json("/api/fs/list", { path: "/scans" })],
    ["POST /api/fs/get of a file", () => json("/api/fs/get", { path: `/scans/1/${file.name}` })()],
    ["POST /api/fs/get of a mount point", json("/api/fs/get", { path: "/scans/1" })],
    ["GET /d of a file", () => fetchPath(`/d/scans/1/${encodeURIComponent(file.name)}?sign=${file.sign}`)],
    ["PROPFIND Depth 1 of a storage", () => dav("PROPFIND", "/scans/1/", { headers: { Depth: "1" } })],
    ["PROPFIND Depth 0 of a mount point", () => dav("PROPFIND", "/scans/1", { headers: { Depth: "0" } })],
    ["GET /dav of a file", () => dav("GET", `/scans/1/${encodeURIComponent(file.name)}`)],
    ["GET /api/share/list as the admin", () => fetchPath("/api/share/list", { headers: { Authorization: token } })],
    ["GET /api/share/list as a user", () => fetchPath("/api/share/list", { headers: { Authorization: user } })],
  ];

  it.each(requests)("%s", async (_, request) => {
    expect(await scansOf(request)).toEqual([]);
  });

  // One after another on one folder of an R2 storage: each step works on what the one before made.
  const lock =
    '<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
  const note =
    '<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:x"><D:set><D:prop><Z:note>n</Z:note></D:prop></D:set></D:propertyupdate>';
  const to = (path: string) => ({ headers: { Destination: `http://gatehouse.test/dav${path}` } });
  const writes: [string, () => Promise<Response>][] = [
    ["MKCOL", () => dav("MKCOL", "/scans/w/folder")],
    ["PUT", () => dav("PUT", "/scans/w/folder/a.txt", { body: "a" })],
    ["PROPPATCH", () => dav("PROPPATCH", "/scans/w/folder/a.txt", { body: note })],
    ["COPY", () => dav("COPY", "/scans/w/folder/a.txt", to("/scans/w/folder/b.txt"))],
    ["MOVE", () => dav("MOVE", "/scans/w/folder/b.txt", to("/scans/w/folder/c.txt"))],
    ["DELETE of a folder", () => dav("DELETE", "/scans/w/folder")],
    ["LOCK of a new name", () => dav("LOCK", "/scans/w/locked.txt", { body: lock, headers: { Timeout: "Second-60" } })],
    ["POST /api/fs/mkdir", json("/api/fs/mkdir", { path: "/scans/w/api" })],
    ["POST /api/fs/rename", json("/api/fs/rename", { path: "/scans/w/api", name: "api2" })],
    ["POST /api/fs/remove", json("/api/fs/remove", { dir: "/scans/w", names: ["api2"] })],
  ];

  it.each(writes)("a write: %s", async (_, request) => {
    expect(await scansOf(request)).toEqual([]);
  });

  it("the storage list reads whole only to make its page (by offset, in order), not to find the unchecked storages", async () => {
    const scans = await scansOf(() =>
      fetchPath("/api/admin/storage/list?page=2&per_page=1", { headers: { Authorization: token } }),
    );
    expect(scans).toHaveLength(1);
    expect(scans[0]!.sql).toContain("json_group_array");
  });

  it("sees a read of a whole table when there is one", async () => {
    // The watch itself, on a statement that can only read the table row by row.
    const watch = await tableScans();
    await sql("SELECT mount_path FROM storages WHERE remark = ?", ["nothing"]);
    expect(await watch.since()).toEqual([
      { sql: "SELECT mount_path FROM storages WHERE remark = ?", scans: ["SCAN storages"] },
    ]);
  });
});
