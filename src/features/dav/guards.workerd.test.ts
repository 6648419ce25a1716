// The file API's guards held over WebDAV at /dav inside workerd, against the real upstreams: a
// COPY, MOVE or DELETE of a folder needs every meta password inside it, hidden names stay
// unreachable and are never carried out, anchored folders (base path, scope roots, mount points)
// stay put, a write meta opens only its own folder, and an Alias holds its targets' metas.
import { beforeAll, describe, expect, it } from "vitest";
import { basic, type DavInit, dav, hrefs } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Addition, s3Text } from "../../../test/support/upstreams.ts";
import { apiAs, makeUser as makeUserWith } from "../../../test/support/workerd-client.ts";
import { MANAGE, READ, setUpDav } from "./workerd-fixture.ts";

let admin: string;
const { post } = apiAs(() => admin);

/** A user with one role whose scope at `/` has `permission`; its id. */
const makeUser = (username: string, permission: number, extra: Record<string, unknown> = {}) =>
  makeUserWith(admin, username, { "/": permission }, extra);

beforeAll(async () => {
  admin = await setUpDav("dav-guards");
});

describe("subtrees, hidden paths, anchored folders and write metas", () => {
  const as =
    (username: string) =>
    (method: string, path: string, init: DavInit = {}) =>
      dav(method, path, { auth: basic(username, `${username} password`), ...init });

  it("COPY, MOVE and DELETE of a folder need the skip-password bit for every meta password inside it", async () => {
    for (const folder of ["/s3/dg", "/s3/dg/locked"]) expect((await dav("MKCOL", folder)).status).toBe(201);
    expect((await dav("PUT", "/s3/dg/locked/in.txt", { body: "in" })).status).toBe(201);
    expect((await post("/api/admin/meta/create", { path: "/s3/dg/locked", password: "pw", p_sub: false })).code).toBe(
      200,
    );
    await makeUser("dav-subtree", MANAGE);
    const user = as("dav-subtree");
    expect((await user("DELETE", "/s3/dg")).status).toBe(403);
    expect((await user("MOVE", "/s3/dg", { headers: { Destination: "/dav/s3/dg-moved" } })).status).toBe(403);
    const copied = await user("COPY", "/s3/dg", { headers: { Destination: "/dav/s3/dg-copy" } });
    expect(copied.status).toBe(403);
    expect(await copied.text()).toBe("dg is or holds a password-protected folder: give its password\n");
    expect([
      await s3Text("davs/dg/locked/in.txt"),
      await s3Text("davs/dg-copy/locked/in.txt"),
      await s3Text("davs/dg-moved/locked/in.txt"),
    ]).toEqual(["in", null, null]);
    // The admin may skip passwords.
    expect((await dav("COPY", "/s3/dg", { headers: { Destination: "/dav/s3/dg-copy" } })).status).toBe(201);
    expect(await s3Text("davs/dg-copy/locked/in.txt")).toBe("in");
    for (const folder of ["/s3/dg", "/s3/dg-copy"]) expect((await dav("DELETE", folder)).status).toBe(204);
    await sql("DELETE FROM metas");
  });

  it("refuses every method below a hidden name to a user who may not see hides", async () => {
    for (const folder of ["/s3/dh", "/s3/dh/secret"]) expect((await dav("MKCOL", folder)).status).toBe(201);
    expect((await dav("PUT", "/s3/dh/secret/in.txt", { body: "in" })).status).toBe(201);
    expect((await post("/api/admin/meta/create", { path: "/s3/dh", hide: "^secret$", h_sub: false })).code).toBe(200);
    await makeUser("dav-unseeing", MANAGE);
    const user = as("dav-unseeing");
    expect((await user("GET", "/s3/dh/secret/in.txt")).status).toBe(403);
    expect((await user("PROPFIND", "/s3/dh/secret/in.txt", { headers: { Depth: "0" } })).status).toBe(403);
    expect((await user("PROPFIND", "/s3/dh/secret/", { headers: { Depth: "1" } })).status).toBe(403);
    expect((await user("PUT", "/s3/dh/secret/new.txt", { body: "new" })).status).toBe(403);
    expect((await user("DELETE", "/s3/dh/secret/in.txt")).status).toBe(403);
    expect(
      (await user("MOVE", "/s3/dh/secret/in.txt", { headers: { Destination: "/dav/s3/dh/out.txt" } })).status,
    ).toBe(403);
    expect(
      (await user("COPY", "/s3/dh/secret/in.txt", { headers: { Destination: "/dav/s3/dh/out.txt" } })).status,
    ).toBe(403);
    expect([
      await s3Text("davs/dh/secret/in.txt"),
      await s3Text("davs/dh/secret/new.txt"),
      await s3Text("davs/dh/out.txt"),
    ]).toEqual(["in", null, null]);
    expect(await (await dav("GET", "/s3/dh/secret/in.txt")).text()).toBe("in");
    expect((await dav("DELETE", "/s3/dh")).status).toBe(204);
    await sql("DELETE FROM metas");
  });

  it("COPY and MOVE of a folder never carry hidden names out from under the rule that hides them", async () => {
    for (const folder of ["/s3/dhc", "/s3/dhc/hh"]) expect((await dav("MKCOL", folder)).status).toBe(201);
    expect((await dav("PUT", "/s3/dhc/hh/x.txt", { body: "x" })).status).toBe(201);
    expect((await post("/api/admin/meta/create", { path: "/s3/dhc", hide: "^hh$", h_sub: false })).code).toBe(200);
    await makeUser("dav-hide-carrier", MANAGE);
    const user = as("dav-hide-carrier");
    const copied = await user("COPY", "/s3/dhc", { headers: { Destination: "/dav/s3/dhc-copy" } });
    expect(copied.status).toBe(403);
    expect(await copied.text()).toBe(
      "dhc holds hidden items: only a user who may see hidden items can copy, move or rename it\n",
    );
    expect((await user("MOVE", "/s3/dhc", { headers: { Destination: "/dav/s3/dhc-moved" } })).status).toBe(403);
    expect([
      await s3Text("davs/dhc/hh/x.txt"),
      await s3Text("davs/dhc-copy/hh/x.txt"),
      await s3Text("davs/dhc-moved/hh/x.txt"),
    ]).toEqual(["x", null, null]);
    // The admin sees hidden names, and may.
    expect((await dav("COPY", "/s3/dhc", { headers: { Destination: "/dav/s3/dhc-copy" } })).status).toBe(201);
    for (const folder of ["/s3/dhc", "/s3/dhc-copy"]) expect((await dav("DELETE", folder)).status).toBe(204);
    await sql("DELETE FROM metas");
  });

  it("answers 403 to a MOVE or DELETE of the caller's base path, a scope root, a mount point or a folder holding one", async () => {
    for (const folder of ["/s3/dbase", "/s3/dbase/team"]) expect((await dav("MKCOL", folder)).status).toBe(201);
    expect((await dav("PUT", "/s3/dbase/team/f.txt", { body: "f" })).status).toBe(201);
    const role = await post("/api/admin/role/create", {
      name: "dav-anchored-role",
      permission_scopes: [
        { path: "/", permission: MANAGE },
        { path: "/s3/dbase/team", permission: MANAGE },
      ],
    });
    expect(
      (
        await post("/api/admin/user/create", {
          username: "dav-anchored",
          password: "dav-anchored password",
          role: [role.data.id],
          base_path: "/s3/dbase",
        })
      ).code,
    ).toBe(200);
    const user = as("dav-anchored");
    const deleted = await user("DELETE", "/");
    expect(deleted.status).toBe(403);
    expect(await deleted.text()).toBe("your base path and the folders above it cannot be renamed, moved or removed\n");
    expect((await user("DELETE", "/team")).status).toBe(403);
    expect((await user("MOVE", "/team", { headers: { Destination: "/dav/crew" } })).status).toBe(403);
    expect(await s3Text("davs/dbase/team/f.txt")).toBe("f");

    expect((await dav("MKCOL", "/s3/dmnt")).status).toBe(201);
    expect((await dav("PUT", "/s3/dmnt/keep.txt", { body: "keep" })).status).toBe(201);
    expect(
      (
        await post("/api/admin/storage/create", {
          mount_path: "/s3/dmnt/inner",
          driver: "S3",
          addition: JSON.stringify({ ...s3Addition(), root_folder_path: "/davs-inner" }),
        })
      ).code,
    ).toBe(200);
    expect((await dav("DELETE", "/s3/dmnt")).status).toBe(403);
    expect((await dav("MOVE", "/s3/dmnt", { headers: { Destination: "/dav/s3/dmnt2" } })).status).toBe(403);
    // An existing destination is deleted before a COPY lands: the same refusal.
    expect(
      (await dav("COPY", "/s3/dbase/team/f.txt", { headers: { Destination: "/dav/s3/dmnt", Overwrite: "T" } })).status,
    ).toBe(403);
    expect((await dav("DELETE", "/s3/dmnt/inner")).status).toBe(403);
    expect(await s3Text("davs/dmnt/keep.txt")).toBe("keep");
    await sql("DELETE FROM storages WHERE mount_path = '/s3/dmnt/inner'");
    for (const folder of ["/s3/dmnt", "/s3/dbase"]) expect((await dav("DELETE", folder)).status).toBe(204);
  });

  it("a write meta without w_sub lets PUT and MKCOL into its own folder, not the folders below", async () => {
    expect((await dav("MKCOL", "/s3/dw")).status).toBe(201);
    expect((await post("/api/admin/meta/create", { path: "/s3/dw", write: true, w_sub: false })).code).toBe(200);
    await makeUser("dav-meta-writer", READ | 512);
    const user = as("dav-meta-writer");
    expect((await user("PUT", "/s3/dw/a.txt", { body: "a" })).status).toBe(201);
    expect(await s3Text("davs/dw/a.txt")).toBe("a");
    expect((await user("MKCOL", "/s3/dw/d")).status).toBe(201);
    expect((await user("PUT", "/s3/dw/d/b.txt", { body: "b" })).status).toBe(403);
    expect((await user("MKCOL", "/s3/dw/d/e")).status).toBe(403);
    expect((await user("PUT", "/s3/beside.txt", { body: "x" })).status).toBe(403);
    expect((await user("DELETE", "/s3/dw/a.txt")).status).toBe(403);
    expect([await s3Text("davs/dw/a.txt"), await s3Text("davs/dw/d/b.txt"), await s3Text("davs/beside.txt")]).toEqual([
      "a",
      null,
      null,
    ]);
    expect((await dav("DELETE", "/s3/dw")).status).toBe(204);
    await sql("DELETE FROM metas");
  });
});

describe("Alias: its targets' metas hold over WebDAV", () => {
  it("refuses a password-guarded target and keeps hidden names hidden through an alias, as on the target", async () => {
    await makeUser("dav-alias", MANAGE);
    expect((await dav("MKCOL", "/s3/aliased")).status).toBe(201);
    expect((await dav("MKCOL", "/s3/aliased/guarded")).status).toBe(201);
    for (const [path, body] of [
      ["secret.txt", "s"],
      ["open.txt", "open"],
      ["guarded/in.txt", "in"],
    ])
      expect((await dav("PUT", `/s3/aliased/${path}`, { body })).status).toBe(201);
    expect(
      (
        await post("/api/admin/storage/create", {
          mount_path: "/al",
          driver: "Alias",
          addition: JSON.stringify({ paths: "/s3/aliased" }),
          webdav_policy: "native_proxy",
        })
      ).code,
    ).toBe(200);
    expect((await post("/api/admin/meta/create", { path: "/s3/aliased", hide: "^secret", h_sub: false })).code).toBe(
      200,
    );
    expect(
      (await post("/api/admin/meta/create", { path: "/s3/aliased/guarded", password: "pw", p_sub: true })).code,
    ).toBe(200);
    const user = (method: string, path: string, init: DavInit = {}) =>
      dav(method, path, { auth: basic("dav-alias", "dav-alias password"), ...init });
    try {
      const listed = hrefs(await (await user("PROPFIND", "/al/", { headers: { Depth: "1" } })).text());
      expect(listed.sort()).toEqual(["/dav/al/", "/dav/al/guarded/", "/dav/al/open.txt"]);
      expect((await user("GET", "/al/secret.txt")).status).toBe(403);
      expect((await user("GET", "/al/guarded/in.txt")).status).toBe(403);
      expect((await user("PROPFIND", "/al/guarded/", { headers: { Depth: "1" } })).status).toBe(403);
      expect(await (await user("GET", "/al/open.txt")).text()).toBe("open");
      // The admin skips passwords and sees hidden names, through the alias as on the target.
      expect(await (await dav("GET", "/al/guarded/in.txt")).text()).toBe("in");
      expect((await dav("GET", "/al/secret.txt")).status).toBe(200);
    } finally {
      await sql("DELETE FROM metas");
      await sql("DELETE FROM storages WHERE mount_path = '/al'");
    }
  });
});
