// The write side's checks in Node, on a WebDAV storage backed by webdav-server on 127.0.0.1: who
// may call fs/link, what metas allow (passwords with and without p_sub, the write grant and
// w_sub, hiding with h_sub), that renames of a password-guarded folder need the password, that
// the write bit never stands in for another, and the moves, copies and mkdir that are refused
// whoever asks. Every refusal is checked upstream too: nothing changed there.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { metas, storages } from "../../db/schema.ts";
import { signInAdmin, signInMember } from "../../../test/support/auth.ts";
import { DAV_ROOT, DAV_USER, startWebdav } from "../../../test/support/storage-servers.ts";
import { api, createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";
import { Permission } from "./rules.ts";

/** Everything this file writes upstream stays below this folder. */
const ROOT = `${DAV_ROOT}/write-rules`;
const AUTH = `Basic ${Buffer.from(`${DAV_USER.username}:${DAV_USER.password}`).toString("base64")}`;
const { WRITE, RENAME, MOVE, COPY, REMOVE, ACCESS_WITHOUT_PASSWORD } = Permission;

let fixture: UnitFixture;
let dav: Awaited<ReturnType<typeof startWebdav>>;
let admin: string;
let users = 0;

const davUrl = (path: string) => `${dav.url}${ROOT}${path.split("/").map(encodeURIComponent).join("/")}`;
const davSend = (method: string, path: string, body?: string) =>
  fetch(davUrl(path), {
    method,
    headers: { Authorization: AUTH, ...(method === "PROPFIND" ? { Depth: "0" } : {}) },
    body,
  });
/** Whether `path` (below ROOT) exists upstream. */
const upstream = async (path: string) => (await davSend("PROPFIND", path)).status === 207;
async function tree(folders: string[], files: string[]) {
  for (const folder of folders) expect((await davSend("MKCOL", folder)).status, folder).toBe(201);
  for (const file of files) expect((await davSend("PUT", file, file)).status, file).toBe(201);
}

const { post } = api(
  () => fixture,
  () => admin,
);
/** A user of one role with these bits at `/`, signed in. */
const member = (permission: number) => signInMember(fixture, `user${++users}`, [{ path: "/", permission }]);
const meta = (values: Partial<typeof metas.$inferInsert> & { path: string }) => fixture.db.insert(metas).values(values);

const DENIED = { code: 403, message: "permission denied", data: null };
const NO_ACCESS = { code: 403, message: "password is incorrect or you have no permission", data: null };
const DONE = { code: 200, message: "success", data: null };

beforeAll(async () => {
  [fixture, dav] = await Promise.all([createUnitFixture(), startWebdav()]);
  admin = await signInAdmin(fixture);
  await fixture.db.insert(storages).values({
    mountPath: "/dav",
    driver: "WebDav",
    status: "work",
    addition: JSON.stringify({
      address: dav.url,
      username: DAV_USER.username,
      password: DAV_USER.password,
      root_folder_path: ROOT,
    }),
    modifiedAtMs: Date.UTC(2026, 2, 1),
  });
});
afterAll(async () => {
  fixture.close();
  await dav.close();
});
beforeEach(async () => {
  await fixture.db.delete(metas);
  await davSend("DELETE", "");
  expect((await davSend("MKCOL", "")).status).toBe(201);
});

describe("POST /api/fs/link", () => {
  it("refuses a signed-in user who is not an admin, even for a valid path and every file bit", async () => {
    await tree([], ["/f.txt"]);
    const everything = await member(WRITE | RENAME | MOVE | COPY | REMOVE | ACCESS_WITHOUT_PASSWORD);
    expect(await post("/api/fs/link", { path: "/dav/f.txt" }, everything)).toEqual({
      code: 403,
      message: "You are not an admin",
      data: null,
    });
    const linked = await post("/api/fs/link", { path: "/dav/f.txt" });
    expect(linked.code).toBe(200);
    expect(linked.data.url).toBe(davUrl("/f.txt"));
    expect(linked.data.header).toEqual({ Authorization: AUTH });
  });
});

describe("a meta password on writes", () => {
  it("without p_sub guards the folder only: its sub-folders are read and written without it", async () => {
    await tree(["/top", "/top/sub"], ["/top/sub/f.txt"]);
    await meta({ path: "/dav/top", password: "pw", passwordSub: false });
    const user = await member(WRITE | RENAME);
    expect(await post("/api/fs/list", { path: "/dav/top" }, user)).toEqual(NO_ACCESS);
    expect((await post("/api/fs/list", { path: "/dav/top/sub" }, user)).data.content.map((e: any) => e.name)).toEqual([
      "f.txt",
    ]);
    expect(await post("/api/fs/mkdir", { path: "/dav/top/sub/made" }, user)).toEqual(DONE);
    expect(await post("/api/fs/rename", { path: "/dav/top/sub/f.txt", name: "g.txt" }, user)).toEqual(DONE);
    expect([await upstream("/top/sub/made"), await upstream("/top/sub/g.txt")]).toEqual([true, true]);
  });

  it("with p_sub guards the sub-folders too", async () => {
    await tree(["/top", "/top/sub"], ["/top/sub/f.txt"]);
    await meta({ path: "/dav/top", password: "pw", passwordSub: true });
    const user = await member(WRITE | RENAME);
    expect(await post("/api/fs/list", { path: "/dav/top/sub" }, user)).toEqual(NO_ACCESS);
    expect(await post("/api/fs/mkdir", { path: "/dav/top/sub/made" }, user)).toEqual(NO_ACCESS);
    expect(await upstream("/top/sub/made")).toBe(false);
    expect(await post("/api/fs/mkdir", { path: "/dav/top/sub/made", password: "pw" }, user)).toEqual(DONE);
  });

  it("renaming a guarded folder needs its password: rename, batch_rename and regex_rename", async () => {
    await tree(["/locked"], ["/locked/f.txt"]);
    await meta({ path: "/dav/locked", password: "pw" });
    const user = await member(RENAME);
    const refused = { code: 403, message: "Path is password-protected and cannot be renamed.", data: null };
    const renames: [string, Record<string, unknown>][] = [
      ["/api/fs/rename", { path: "/dav/locked", name: "opened" }],
      ["/api/fs/batch_rename", { src_dir: "/dav", rename_objects: [{ src_name: "locked", new_name: "opened" }] }],
      ["/api/fs/regex_rename", { src_dir: "/dav", src_name_regex: "^locked$", new_name_regex: "opened" }],
    ];
    for (const [route, body] of renames) {
      expect(await post(route, body, user), route).toEqual(refused);
      expect(await post(route, { ...body, password: "wrong" }, user), route).toEqual(refused);
      expect(await upstream("/locked/f.txt"), route).toBe(true);
    }
    for (const [route, body] of renames) {
      expect(await post(route, { ...body, password: "pw" }, user), route).toEqual(DONE);
      expect(await upstream("/opened/f.txt"), route).toBe(true);
      // Back to its name upstream, for the next route.
      expect(
        (
          await fetch(davUrl("/opened"), {
            method: "MOVE",
            headers: { Authorization: AUTH, Destination: davUrl("/locked") },
          })
        ).status,
      ).toBe(201);
    }
  });
});

describe("a meta's write grant", () => {
  it("lets a user without the write bit add to the folder, never delete, rename or move what is in it", async () => {
    await tree(["/drop"], ["/drop/keep.txt"]);
    await meta({ path: "/dav/drop", write: true, writeSub: true });
    const user = await member(0);
    expect(await post("/api/fs/mkdir", { path: "/dav/drop/made" }, user)).toEqual(DONE);
    expect(await upstream("/drop/made")).toBe(true);
    expect(await post("/api/fs/remove", { dir: "/dav/drop", names: ["keep.txt"] }, user)).toEqual(DENIED);
    expect(await post("/api/fs/rename", { path: "/dav/drop/keep.txt", name: "gone.txt" }, user)).toEqual(DENIED);
    expect(
      await post(
        "/api/fs/batch_rename",
        { src_dir: "/dav/drop", rename_objects: [{ src_name: "keep.txt", new_name: "gone.txt" }] },
        user,
      ),
    ).toEqual(DENIED);
    expect(
      await post("/api/fs/move", { src_dir: "/dav/drop", dst_dir: "/dav/drop/made", names: ["keep.txt"] }, user),
    ).toEqual(DENIED);
    expect(await post("/api/fs/remove_empty_directory", { src_dir: "/dav/drop" }, user)).toEqual(DENIED);
    expect([await upstream("/drop/keep.txt"), await upstream("/drop/gone.txt"), await upstream("/drop/made")]).toEqual([
      true,
      false,
      true,
    ]);
  });

  it("holds below the meta's folder only with w_sub", async () => {
    await tree(["/drop", "/drop/inner"], []);
    await meta({ path: "/dav/drop", write: true, writeSub: false });
    const user = await member(0);
    expect(await post("/api/fs/mkdir", { path: "/dav/drop/inner/deeper" }, user)).toEqual(DENIED);
    expect(await upstream("/drop/inner/deeper")).toBe(false);
    await fixture.db.update(metas).set({ writeSub: true });
    expect(await post("/api/fs/mkdir", { path: "/dav/drop/inner/deeper" }, user)).toEqual(DONE);
    expect(await upstream("/drop/inner/deeper")).toBe(true);
  });
});

describe("a meta's hide patterns", () => {
  it("hide in the meta's folder only, and in its sub-folders with h_sub", async () => {
    await tree(["/hid", "/hid/sub"], ["/hid/secret.txt", "/hid/plain.txt", "/hid/sub/secret.txt"]);
    await meta({ path: "/dav/hid", hide: "^secret", hideSub: false });
    const user = await member(0);
    const names = async (path: string) =>
      ((await post("/api/fs/list", { path }, user)).data.content ?? []).map((e: any) => e.name).sort();
    expect(await names("/dav/hid")).toEqual(["plain.txt", "sub"]);
    expect(await names("/dav/hid/sub")).toEqual(["secret.txt"]);
    await fixture.db.update(metas).set({ hideSub: true });
    expect(await names("/dav/hid")).toEqual(["plain.txt", "sub"]);
    expect(await names("/dav/hid/sub")).toEqual([]);
  });
});

describe("permission bits", () => {
  it("the write bit never stands in for the move, copy, remove or rename bit", async () => {
    await tree(["/src", "/dst"], ["/src/f.txt"]);
    const writer = await member(WRITE);
    const items = { src_dir: "/dav/src", dst_dir: "/dav/dst", names: ["f.txt"] };
    expect(await post("/api/fs/move", items, writer)).toEqual(DENIED);
    expect(await post("/api/fs/copy", items, writer)).toEqual(DENIED);
    expect(await post("/api/fs/recursive_move", { src_dir: "/dav/src", dst_dir: "/dav/dst" }, writer)).toEqual(DENIED);
    expect(await post("/api/fs/remove", { dir: "/dav/src", names: ["f.txt"] }, writer)).toEqual(DENIED);
    expect(await post("/api/fs/remove_empty_directory", { src_dir: "/dav/src" }, writer)).toEqual(DENIED);
    expect(await post("/api/fs/rename", { path: "/dav/src/f.txt", name: "g.txt" }, writer)).toEqual(DENIED);
    expect([await upstream("/src/f.txt"), await upstream("/dst/f.txt"), await upstream("/src/g.txt")]).toEqual([
      true,
      false,
      false,
    ]);

    // Each bit, with write at the destination, does its own operation.
    expect(await post("/api/fs/copy", items, await member(COPY | WRITE))).toEqual({
      code: 200,
      message: "success",
      data: { tasks: [] },
    });
    expect(await post("/api/fs/remove", { dir: "/dav/dst", names: ["f.txt"] }, await member(REMOVE))).toEqual(DONE);
    expect(await post("/api/fs/move", items, await member(MOVE | WRITE))).toEqual(DONE);
    expect([await upstream("/src/f.txt"), await upstream("/dst/f.txt")]).toEqual([false, true]);
  });
});

describe("refused whoever asks", () => {
  it("moves and copies of a folder into a sub-folder of itself", async () => {
    await tree(["/self", "/self/inner"], ["/self/f.txt"]);
    const items = { src_dir: "/dav", dst_dir: "/dav/self/inner", names: ["self"] };
    expect(await post("/api/fs/move", items)).toEqual({
      code: 400,
      message: "cannot move self into itself",
      data: null,
    });
    expect(await post("/api/fs/copy", items)).toEqual({
      code: 400,
      message: "cannot copy self into itself",
      data: null,
    });
    expect(await post("/api/fs/recursive_move", { src_dir: "/dav/self", dst_dir: "/dav/self/inner" })).toEqual({
      code: 400,
      message: "cannot move a folder's files into the folder itself",
      data: null,
    });
    expect([
      await upstream("/self/f.txt"),
      await upstream("/self/inner/self"),
      await upstream("/self/inner/f.txt"),
    ]).toEqual([true, false, false]);
  });

  it("mkdir of the root, however it is spelled", async () => {
    for (const path of ["/", "", "/.", "//"])
      expect(await post("/api/fs/mkdir", { path }), JSON.stringify(path)).toEqual(DENIED);
  });
});
