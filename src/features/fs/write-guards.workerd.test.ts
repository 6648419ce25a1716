import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Addition, s3Text } from "../../../test/support/upstreams.ts";
import { member } from "../../../test/support/workerd-client.ts";
import { mountWrites, setUpWrites, writesAs } from "./workerd-fixture.ts";

let admin: string;
const { post, upload, create } = writesAs(() => admin);

beforeAll(async () => {
  admin = await setUpWrites("fs-write-guards");
});
beforeEach(() => mountWrites(admin));

describe("writes that take a subtree, hidden paths, anchored folders and write metas", () => {
  const EVERY_CHANGE = 8 | 16 | 32 | 64 | 128;
  beforeEach(() => sql("DELETE FROM metas"));

  it("a copy or move out of an Alias holds its target to the target's meta password", async () => {
    await upload("/s3/vault/secret.txt", "secret", { "Content-Length": "6" });
    await post("/api/fs/mkdir", { path: "/s3/out" });
    expect((await create("/al", "Alias", { paths: "/s3/vault" })).code).toBe(200);
    expect((await post("/api/admin/meta/create", { path: "/s3/vault", password: "pw", p_sub: true })).code).toBe(200);
    // Every change bit at / (so the alias itself is no obstacle), but not the skip-password bit.
    const token = await member(admin, "alias-copier", { "/": EVERY_CHANGE });
    const refused = { code: 403, message: "password is incorrect or you have no permission", data: null };
    for (const route of ["/api/fs/copy", "/api/fs/move"]) {
      expect(await post(route, { src_dir: "/al", dst_dir: "/s3/out", names: ["secret.txt"] }, token), route).toEqual(
        refused,
      );
    }
    expect([await s3Text("w/vault/secret.txt"), await s3Text("w/out/secret.txt")]).toEqual(["secret", null]);
    // With the target's password the copy goes through.
    expect(
      (await post("/api/fs/copy", { src_dir: "/al", dst_dir: "/s3/out", names: ["secret.txt"], password: "pw" }, token))
        .code,
    ).toBe(200);
    expect(await s3Text("w/out/secret.txt")).toBe("secret");
  });

  it("a copy, move, remove or rename that takes a folder needs every meta password inside it, also when named from its parent", async () => {
    await upload("/s3/g/locked/in.txt", "in", { "Content-Length": "2" });
    await post("/api/fs/mkdir", { path: "/s3/g2" });
    expect((await post("/api/admin/meta/create", { path: "/s3/g/locked", password: "pw", p_sub: false })).code).toBe(
      200,
    );
    const token = await member(admin, "subtree", { "/": EVERY_CHANGE });
    const refused = {
      code: 403,
      message: "locked is or holds a password-protected folder: give its password",
      data: null,
    };
    for (const route of ["/api/fs/copy", "/api/fs/move"]) {
      expect(await post(route, { src_dir: "/s3/g", dst_dir: "/s3/g2", names: ["locked"] }, token), route).toEqual(
        refused,
      );
      expect(
        await post(route, { src_dir: "/s3/g", dst_dir: "/s3/g2", names: ["locked"], password: "wrong" }, token),
        route,
      ).toEqual(refused);
    }
    expect(await post("/api/fs/remove", { dir: "/s3/g", names: ["locked"] }, token)).toEqual(refused);
    const renameRefused = { code: 403, message: "Path is password-protected and cannot be renamed.", data: null };
    expect(await post("/api/fs/rename", { path: "/s3/g", name: "g3" }, token)).toEqual(renameRefused);
    expect(
      await post(
        "/api/fs/batch_rename",
        { src_dir: "/s3", rename_objects: [{ src_name: "g", new_name: "g3" }] },
        token,
      ),
    ).toEqual(renameRefused);
    expect((await post("/api/fs/remove_empty_directory", { src_dir: "/s3/g" }, token)).message).toBe(
      "g is or holds a password-protected folder: give its password",
    );
    expect([
      await s3Text("w/g/locked/in.txt"),
      await s3Text("w/g2/locked/in.txt"),
      await s3Text("w/g3/locked/in.txt"),
    ]).toEqual(["in", null, null]);
    // With the password, or as the admin (who may skip passwords), the same requests go through.
    expect(
      (await post("/api/fs/copy", { src_dir: "/s3/g", dst_dir: "/s3/g2", names: ["locked"], password: "pw" }, token))
        .code,
    ).toBe(200);
    expect(await s3Text("w/g2/locked/in.txt")).toBe("in");
    expect((await post("/api/fs/remove", { dir: "/s3", names: ["g", "g2"] })).code).toBe(200);
    expect(await s3Text("w/g/locked/in.txt")).toBeNull();
  });

  it("a user without the see-hides bit reaches nothing below a hidden name, to read or to write", async () => {
    await upload("/s3/h/secret/in.txt", "in", { "Content-Length": "2" });
    await upload("/s3/h/shown.txt", "shown", { "Content-Length": "5" });
    expect((await post("/api/admin/meta/create", { path: "/s3/h", hide: "^secret$", h_sub: false })).code).toBe(200);
    const token = await member(admin, "unseeing", { "/": EVERY_CHANGE });
    const denied = { code: 403, message: "password is incorrect or you have no permission", data: null };
    expect(await post("/api/fs/get", { path: "/s3/h/secret/in.txt" }, token)).toEqual(denied);
    expect(await upload("/s3/h/secret/new.txt", "new", { "Content-Length": "3" }, token)).toEqual(denied);
    expect(await upload("/s3/h/secret", "x", { "Content-Length": "1" }, token)).toEqual(denied);
    expect(await post("/api/fs/remove", { dir: "/s3/h", names: ["secret"] }, token)).toEqual(denied);
    expect(await post("/api/fs/copy", { src_dir: "/s3/h", dst_dir: "/s3", names: ["secret"] }, token)).toEqual(denied);
    expect(await post("/api/fs/move", { src_dir: "/s3/h/secret", dst_dir: "/s3", names: ["in.txt"] }, token)).toEqual(
      denied,
    );
    expect(await post("/api/fs/rename", { path: "/s3/h/secret/in.txt", name: "out.txt" }, token)).toEqual(denied);
    // Nor may a name be renamed onto a hidden one.
    expect(await post("/api/fs/rename", { path: "/s3/h/shown.txt", name: "secret", overwrite: true }, token)).toEqual(
      denied,
    );
    expect([
      await s3Text("w/h/secret/in.txt"),
      await s3Text("w/h/secret/new.txt"),
      await s3Text("w/secret/in.txt"),
      await s3Text("w/h/shown.txt"),
    ]).toEqual(["in", null, null, "shown"]);
    // The admin sees hidden names.
    expect((await post("/api/fs/get", { path: "/s3/h/secret/in.txt" })).code).toBe(200);
    expect((await post("/api/fs/remove", { dir: "/s3", names: ["h"] })).code).toBe(200);
  });

  it("a copy, move or rename of a folder never carries hidden names out from under the rule that hides them", async () => {
    await upload("/s3/hs/hh/x.txt", "x", { "Content-Length": "1" });
    await upload("/s3/hs/shown.txt", "shown", { "Content-Length": "5" });
    await post("/api/fs/mkdir", { path: "/s3/out" });
    // The rule sits on the folder itself: a copy or the moved folder would be under it no more.
    expect((await post("/api/admin/meta/create", { path: "/s3/hs", hide: "^hh$", h_sub: false })).code).toBe(200);
    const token = await member(admin, "hide-carrier", { "/": EVERY_CHANGE });
    const refused = {
      code: 403,
      message: "hs holds hidden items: only a user who may see hidden items can copy, move or rename it",
      data: null,
    };
    for (const route of ["/api/fs/copy", "/api/fs/move"])
      expect(await post(route, { src_dir: "/s3", dst_dir: "/s3/out", names: ["hs"] }, token), route).toEqual(refused);
    expect(await post("/api/fs/rename", { path: "/s3/hs", name: "hs2" }, token)).toEqual(refused);
    expect(
      await post(
        "/api/fs/batch_rename",
        { src_dir: "/s3", rename_objects: [{ src_name: "hs", new_name: "hs2" }] },
        token,
      ),
    ).toEqual(refused);
    expect(await post("/api/fs/recursive_move", { src_dir: "/s3/hs", dst_dir: "/s3/out" }, token)).toEqual(refused);
    expect([await s3Text("w/hs/hh/x.txt"), await s3Text("w/out/hs/hh/x.txt"), await s3Text("w/hs2/hh/x.txt")]).toEqual([
      "x",
      null,
      null,
    ]);
    // A file beside the rule takes nothing hidden with it; a see-hides holder may take the folder.
    expect(
      (await post("/api/fs/copy", { src_dir: "/s3/hs", dst_dir: "/s3/out", names: ["shown.txt"] }, token)).code,
    ).toBe(200);
    const seer = await member(admin, "hide-seer", { "/": EVERY_CHANGE | 1 });
    expect((await post("/api/fs/copy", { src_dir: "/s3", dst_dir: "/s3/out", names: ["hs"] }, seer)).code).toBe(200);
    expect(await s3Text("w/out/hs/hh/x.txt")).toBe("x");
    // A rule inherited from above (h_sub) that also covers the destination hides the copy there too.
    await sql("DELETE FROM metas");
    expect((await post("/api/admin/meta/create", { path: "/s3", hide: "^hh$", h_sub: true })).code).toBe(200);
    expect(
      (await post("/api/fs/copy", { src_dir: "/s3", dst_dir: "/s3/out", names: ["hs"], overwrite: true }, token)).code,
    ).toBe(200);
    expect((await post("/api/fs/remove", { dir: "/s3", names: ["hs", "out"] })).code).toBe(200);
  });

  it("refuses renaming, moving or removing the caller's base path, its scope roots, a mount point and a folder holding one", async () => {
    await upload("/s3/home/team/f.txt", "f", { "Content-Length": "1" });
    await post("/api/fs/mkdir", { path: "/s3/home/sub" });
    const token = await member(
      admin,
      "anchored",
      { "/": EVERY_CHANGE, "/s3/home/team": EVERY_CHANGE },
      { base_path: "/s3/home" },
    );
    const base = "your base path and the folders above it cannot be renamed, moved or removed";
    const scope = "a folder your permissions start at (and the folders above it) cannot be renamed, moved or removed";
    expect(await post("/api/fs/rename", { path: "/", name: "elsewhere" }, token)).toEqual({
      code: 403,
      message: base,
      data: null,
    });
    expect((await post("/api/fs/rename", { path: "/team", name: "crew" }, token)).message).toBe(scope);
    expect((await post("/api/fs/move", { src_dir: "/", dst_dir: "/sub", names: ["team"] }, token)).message).toBe(scope);
    expect((await post("/api/fs/remove", { dir: "/", names: ["team"] }, token)).message).toBe(scope);
    expect(await s3Text("w/home/team/f.txt")).toBe("f");

    expect((await create("/s3/mnt/inner", "S3", { ...s3Addition(), root_folder_path: "/inner-w" })).code).toBe(200);
    await upload("/s3/mnt/keep.txt", "keep", { "Content-Length": "4" });
    const holds =
      "a folder holding a storage's mount point cannot be renamed, moved or removed: change the storage's mount path on the storage page";
    expect(await post("/api/fs/remove", { dir: "/s3", names: ["mnt"] })).toEqual({
      code: 403,
      message: holds,
      data: null,
    });
    expect((await post("/api/fs/rename", { path: "/s3/mnt", name: "mount" })).message).toBe(holds);
    expect((await post("/api/fs/move", { src_dir: "/s3", dst_dir: "/s3/home", names: ["mnt"] })).message).toBe(holds);
    expect(
      (await post("/api/fs/batch_rename", { src_dir: "/s3", rename_objects: [{ src_name: "mnt", new_name: "mount" }] }))
        .message,
    ).toBe(holds);
    expect((await post("/api/fs/remove", { dir: "/s3/mnt", names: ["inner"] })).message).toBe(
      "delete root folder is not allowed, please goto the manage page to delete the storage instead",
    );
    expect((await post("/api/fs/rename", { path: "/s3/mnt/inner", name: "x" })).message).toBe(
      "a storage's root is renamed by changing its mount path",
    );
    expect(await s3Text("w/mnt/keep.txt")).toBe("keep");
    // A copy changes nothing at its source: it goes through.
    expect((await post("/api/fs/copy", { src_dir: "/s3", dst_dir: "/s3/home", names: ["mnt"] })).code).toBe(200);
    expect(await s3Text("w/home/mnt/keep.txt")).toBe("keep");
    await sql("DELETE FROM storages WHERE mount_path = '/s3/mnt/inner'");
    expect((await post("/api/fs/remove", { dir: "/s3", names: ["home", "mnt"] })).code).toBe(200);
  });

  it("a write meta without w_sub opens its own folder to uploads and new folders, not the folders below: as fs/list's write flag says", async () => {
    await post("/api/fs/mkdir", { path: "/s3/open" });
    expect((await post("/api/admin/meta/create", { path: "/s3/open", write: true, w_sub: false })).code).toBe(200);
    const token = await member(admin, "meta-writer", { "/": 0 });
    expect((await post("/api/fs/list", { path: "/s3/open" }, token)).data.write).toBe(true);
    expect(await upload("/s3/open/a.txt", "a", { "Content-Length": "1" }, token)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await s3Text("w/open/a.txt")).toBe("a");
    expect((await post("/api/fs/mkdir", { path: "/s3/open/d" }, token)).code).toBe(200);
    expect((await post("/api/fs/list", { path: "/s3/open/d" }, token)).data.write).toBe(false);
    expect((await upload("/s3/open/d/b.txt", "b", { "Content-Length": "1" }, token)).message).toBe("permission denied");
    expect((await post("/api/fs/mkdir", { path: "/s3/open/d/e" }, token)).message).toBe("permission denied");
    expect((await post("/api/fs/list", { path: "/s3" }, token)).data.write).toBe(false);
    expect((await upload("/s3/beside.txt", "x", { "Content-Length": "1" }, token)).message).toBe("permission denied");
    // The grant writes; it neither removes nor renames.
    expect((await post("/api/fs/remove", { dir: "/s3/open", names: ["a.txt"] }, token)).message).toBe(
      "permission denied",
    );
    expect((await post("/api/fs/rename", { path: "/s3/open/a.txt", name: "b.txt" }, token)).message).toBe(
      "permission denied",
    );
    expect([await s3Text("w/open/a.txt"), await s3Text("w/open/d/b.txt"), await s3Text("w/beside.txt")]).toEqual([
      "a",
      null,
      null,
    ]);
    expect((await post("/api/fs/remove", { dir: "/s3", names: ["open"] })).code).toBe(200);
  });
});
