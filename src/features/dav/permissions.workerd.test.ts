// The permission rules of /dav, one bit at a time (AList v3.58.0 server/webdav.go:129-150, with
// docs/decisions.md D8.2): each test gives a user every bit but the one a rule needs, and reads the
// upstream to see that nothing changed; a user who holds the bit does the same thing, so the
// refusal is that bit's.
import { beforeAll, describe, expect, it } from "vitest";
import { basicOf, Bits, dav, hrefs } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { mountS3Root, s3Keys, s3Text } from "../../../test/support/upstreams.ts";
import { makeUser, signIn } from "../../../test/support/workerd-client.ts";

const ROOT = "davperm";
let admin: string;

const put = async (path: string, body: string) => expect((await dav("PUT", path, { body })).status).toBe(201);
const mkcol = async (path: string) => expect((await dav("MKCOL", path)).status).toBe(201);
const PROPPATCH_BODY =
  '<D:propertyupdate xmlns:D="DAV:" xmlns:z="urn:z"><D:set><D:prop><z:tag>t</z:tag></D:prop></D:set></D:propertyupdate>';

beforeAll(async () => {
  admin = await signIn("dav-permissions");
  await sql("DELETE FROM storages");
  await sql("DELETE FROM metas");
  await mountS3Root(admin, ROOT);
});

describe("the WebDAV manage bit: a user with every other bit changes nothing", () => {
  const EVERY_BIT_BUT_MANAGE = Bits.ALL & ~Bits.WEBDAV_MANAGE;
  let noManage: string;
  let everything: string;
  beforeAll(async () => {
    await makeUser(admin, "davperm-no-manage", { "/": EVERY_BIT_BUT_MANAGE });
    await makeUser(admin, "davperm-everything", { "/": Bits.ALL });
    noManage = basicOf("davperm-no-manage");
    everything = basicOf("davperm-everything");
    await mkcol("/s3/manage");
    await put("/s3/manage/kept.txt", "kept");
  });

  it("PUT without the manage bit is refused: no new file, no overwrite", async () => {
    const created = await dav("PUT", "/s3/manage/new.txt", { auth: noManage, body: "new" });
    expect(created.status).toBe(403);
    expect(await created.text()).toBe("no WebDAV manage permission here\n");
    expect((await dav("PUT", "/s3/manage/kept.txt", { auth: noManage, body: "overwritten" })).status).toBe(403);
    expect([await s3Text(`${ROOT}/manage/new.txt`), await s3Text(`${ROOT}/manage/kept.txt`)]).toEqual([null, "kept"]);
    expect((await dav("PUT", "/s3/manage/by-manager.txt", { auth: everything, body: "m" })).status).toBe(201);
  });

  it("MKCOL without the manage bit is refused: no folder upstream", async () => {
    const made = await dav("MKCOL", "/s3/manage/new-folder", { auth: noManage });
    expect(made.status).toBe(403);
    expect(await made.text()).toBe("no WebDAV manage permission here\n");
    expect(await s3Keys(`${ROOT}/manage/new-folder`)).toEqual([]);
    expect((await dav("MKCOL", "/s3/manage/manager-folder", { auth: everything })).status).toBe(201);
  });

  it("DELETE without the manage bit is refused: the file stays", async () => {
    const removed = await dav("DELETE", "/s3/manage/kept.txt", { auth: noManage });
    expect(removed.status).toBe(403);
    expect(await removed.text()).toBe("no WebDAV manage permission here\n");
    expect(await s3Text(`${ROOT}/manage/kept.txt`)).toBe("kept");
    await put("/s3/manage/doomed.txt", "d");
    expect((await dav("DELETE", "/s3/manage/doomed.txt", { auth: everything })).status).toBe(204);
  });

  it("PROPPATCH without the manage bit is refused: no property stored", async () => {
    const patched = await dav("PROPPATCH", "/s3/manage/kept.txt", { auth: noManage, body: PROPPATCH_BODY });
    expect(patched.status).toBe(403);
    expect(await patched.text()).toBe("no WebDAV manage permission here\n");
    expect(await sql("SELECT path FROM dav_properties WHERE path = '/s3/manage/kept.txt'")).toEqual([]);
    expect((await dav("PROPPATCH", "/s3/manage/kept.txt", { auth: everything, body: PROPPATCH_BODY })).status).toBe(
      207,
    );
    expect(await sql("SELECT path FROM dav_properties WHERE path = '/s3/manage/kept.txt'")).toEqual([
      ["/s3/manage/kept.txt"],
    ]);
  });
});

describe("COPY and MOVE need the write bit at the destination", () => {
  let user: string;
  beforeAll(async () => {
    // Every bit at `/` but write; everything in /s3/open.
    await makeUser(admin, "davperm-no-write-there", { "/": Bits.ALL & ~Bits.WRITE, "/s3/open": Bits.ALL });
    user = basicOf("davperm-no-write-there");
    await mkcol("/s3/closed");
    await mkcol("/s3/open");
    await put("/s3/source.txt", "source");
  });

  it("COPY into a folder without write is refused; into one with write it copies", async () => {
    const refused = await dav("COPY", "/s3/source.txt", {
      auth: user,
      headers: { Destination: "/dav/s3/closed/copy.txt" },
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toBe("permission denied\n");
    expect(await s3Text(`${ROOT}/closed/copy.txt`)).toBe(null);
    expect(
      (await dav("COPY", "/s3/source.txt", { auth: user, headers: { Destination: "/dav/s3/open/copy.txt" } })).status,
    ).toBe(201);
    expect(await s3Text(`${ROOT}/open/copy.txt`)).toBe("source");
  });

  it("MOVE into a folder without write is refused and leaves the source; into one with write it moves", async () => {
    const refused = await dav("MOVE", "/s3/source.txt", {
      auth: user,
      headers: { Destination: "/dav/s3/closed/moved.txt" },
    });
    expect(refused.status).toBe(403);
    expect([await s3Text(`${ROOT}/source.txt`), await s3Text(`${ROOT}/closed/moved.txt`)]).toEqual(["source", null]);
    expect(
      (await dav("MOVE", "/s3/source.txt", { auth: user, headers: { Destination: "/dav/s3/open/moved.txt" } })).status,
    ).toBe(201);
    expect([await s3Text(`${ROOT}/source.txt`), await s3Text(`${ROOT}/open/moved.txt`)]).toEqual([null, "source"]);
  });
});

describe("MOVE needs the move (or rename) bit and COPY the copy bit: neither stands in for the other", () => {
  beforeAll(async () => {
    await makeUser(admin, "davperm-copier", { "/": Bits.ALL & ~Bits.MOVE & ~Bits.RENAME });
    await makeUser(admin, "davperm-mover", { "/": Bits.ALL & ~Bits.COPY });
    await mkcol("/s3/bits");
  });

  it("a user with the copy bit but neither move nor rename cannot MOVE, and can COPY", async () => {
    await put("/s3/bits/for-copier.txt", "c");
    const copier = basicOf("davperm-copier");
    const moved = await dav("MOVE", "/s3/bits/for-copier.txt", {
      auth: copier,
      headers: { Destination: "/dav/s3/bits/copier-moved.txt" },
    });
    expect(moved.status).toBe(403);
    expect(await moved.text()).toBe("permission denied\n");
    expect([await s3Text(`${ROOT}/bits/for-copier.txt`), await s3Text(`${ROOT}/bits/copier-moved.txt`)]).toEqual([
      "c",
      null,
    ]);
    expect(
      (
        await dav("COPY", "/s3/bits/for-copier.txt", {
          auth: copier,
          headers: { Destination: "/dav/s3/bits/copier-copied.txt" },
        })
      ).status,
    ).toBe(201);
  });

  it("a user with move and rename but not copy cannot COPY, and can MOVE", async () => {
    await put("/s3/bits/for-mover.txt", "m");
    const mover = basicOf("davperm-mover");
    const copied = await dav("COPY", "/s3/bits/for-mover.txt", {
      auth: mover,
      headers: { Destination: "/dav/s3/bits/mover-copied.txt" },
    });
    expect(copied.status).toBe(403);
    expect(await s3Text(`${ROOT}/bits/mover-copied.txt`)).toBe(null);
    expect(
      (
        await dav("MOVE", "/s3/bits/for-mover.txt", {
          auth: mover,
          headers: { Destination: "/dav/s3/bits/mover-moved.txt" },
        })
      ).status,
    ).toBe(201);
    expect(await s3Text(`${ROOT}/bits/mover-moved.txt`)).toBe("m");
  });
});

describe("PROPFIND and the reach of a user's scopes", () => {
  beforeAll(async () => {
    await mkcol("/s3/reach");
    await mkcol("/s3/reach/granted");
    await mkcol("/s3/reach/sibling");
    await put("/s3/reach/granted/in.txt", "in");
  });

  it("a path-limited user cannot PROPFIND above its scope, only inside it", async () => {
    await makeUser(
      admin,
      "davperm-limited",
      { "/s3/reach/granted": Bits.WEBDAV_READ },
      { permission: Bits.PATH_LIMIT },
    );
    const limited = basicOf("davperm-limited");
    const above = await dav("PROPFIND", "/s3/reach/", { auth: limited, headers: { Depth: "1" } });
    expect(above.status).toBe(403);
    expect(await above.text()).toBe("permission denied\n");
    const inside = await dav("PROPFIND", "/s3/reach/granted/", { auth: limited, headers: { Depth: "1" } });
    expect(inside.status).toBe(207);
    expect(hrefs(await inside.text())).toEqual(["/dav/s3/reach/granted/", "/dav/s3/reach/granted/in.txt"]);
  });

  it("without the path limit, PROPFIND above a scope lists only the branch that leads to it, and GET of that folder is refused", async () => {
    await makeUser(admin, "davperm-scoped", { "/s3/reach/granted": Bits.WEBDAV_READ });
    const scoped = basicOf("davperm-scoped");
    const above = await dav("PROPFIND", "/s3/reach/", { auth: scoped, headers: { Depth: "1" } });
    expect(above.status).toBe(207);
    expect(hrefs(await above.text())).toEqual(["/dav/s3/reach/", "/dav/s3/reach/granted/"]);
    expect((await dav("PROPFIND", "/s3/reach/sibling/", { auth: scoped, headers: { Depth: "1" } })).status).toBe(403);
    expect((await dav("GET", "/s3/reach/", { auth: scoped })).status).toBe(403);
  });
});
