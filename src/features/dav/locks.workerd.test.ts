// What a WebDAV lock holds back (RFC 4918 §7, §9.10), each read back from the upstream: a lock
// deep inside a folder keeps the folder from being deleted, a depth-0 lock on a folder keeps
// members from being added to it, and only the lock's owner refreshes it.
import { beforeAll, describe, expect, it } from "vitest";
import { basicOf, Bits, dav } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { mountS3Root, s3Keys, s3Text } from "../../../test/support/upstreams.ts";
import { makeUser, signIn } from "../../../test/support/workerd-client.ts";

const ROOT = "davlock";
let admin: string;

const LOCKINFO =
  '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
/** Locks `path` as the admin (Depth infinity unless told); its token. */
async function lock(path: string, headers: Record<string, string> = {}): Promise<string> {
  const locked = await dav("LOCK", path, { headers, body: LOCKINFO });
  expect(locked.status).toBe(200);
  return /^<(urn:uuid:[0-9a-f-]+)>$/.exec(locked.headers.get("Lock-Token")!)![1]!;
}

beforeAll(async () => {
  admin = await signIn("dav-locks");
  await sql("DELETE FROM storages");
  await mountS3Root(admin, ROOT);
});

describe("DELETE of a folder", () => {
  it("is refused while a lock holds something below it, and goes ahead with that lock's token", async () => {
    for (const folder of ["/s3/tree", "/s3/tree/sub"]) expect((await dav("MKCOL", folder)).status).toBe(201);
    expect((await dav("PUT", "/s3/tree/sub/f.txt", { body: "f" })).status).toBe(201);
    const token = await lock("/s3/tree/sub/f.txt", { Depth: "0" });

    const refused = await dav("DELETE", "/s3/tree");
    expect(refused.status).toBe(423);
    expect(await refused.text()).toContain(
      "<D:lock-token-submitted><D:href>/dav/s3/tree/sub/f.txt</D:href></D:lock-token-submitted>",
    );
    expect(await s3Text(`${ROOT}/tree/sub/f.txt`)).toBe("f");

    expect((await dav("DELETE", "/s3/tree", { headers: { If: `</dav/s3/tree/sub/f.txt> (<${token}>)` } })).status).toBe(
      204,
    );
    expect(await s3Keys(`${ROOT}/tree/`)).toEqual([]);
    expect(await sql("SELECT count(*) FROM dav_locks WHERE token = ?", [token])).toEqual([[0]]);
  });
});

describe("a folder whose name has a character past U+FFFF", () => {
  // One character to SQLite, two UTF-16 units to JavaScript: the paths below it are found by
  // SQLite's own lengths (docs/decisions.md D25.9).
  const folder = "/s3/tree \u{1F332}";
  const at = (path: string) => encodeURI(path);

  it("is not deleted while a member is locked, and its dead properties move with it", async () => {
    expect((await dav("MKCOL", at(folder))).status).toBe(201);
    expect((await dav("PUT", at(`${folder}/f.txt`), { body: "f" })).status).toBe(201);
    const patched = await dav("PROPPATCH", at(`${folder}/f.txt`), {
      body: '<D:propertyupdate xmlns:D="DAV:" xmlns:z="urn:z"><D:set><D:prop><z:tag>t</z:tag></D:prop></D:set></D:propertyupdate>',
    });
    expect(patched.status).toBe(207);
    const listing = await (await dav("PROPFIND", `${at(folder)}/`, { headers: { Depth: "1" } })).text();
    expect(listing).toContain('<tag xmlns="urn:z">t</tag>');

    const token = await lock(at(`${folder}/f.txt`), { Depth: "0" });
    expect((await dav("DELETE", at(folder))).status).toBe(423);
    expect(await s3Text(`${ROOT}/tree \u{1F332}/f.txt`)).toBe("f");
    expect((await dav("UNLOCK", at(`${folder}/f.txt`), { headers: { "Lock-Token": `<${token}>` } })).status).toBe(204);

    const moved = "/s3/moved \u{1F333}";
    expect((await dav("MOVE", at(folder), { headers: { Destination: `/dav${at(moved)}` } })).status).toBe(201);
    expect(
      await sql("SELECT path FROM dav_properties WHERE path LIKE '/s3/tree %' OR path LIKE '/s3/moved %'"),
    ).toEqual([[`${moved}/f.txt`]]);
    expect((await dav("DELETE", at(moved))).status).toBe(204);
    expect(await sql("SELECT count(*) FROM dav_properties WHERE path LIKE '/s3/moved %'")).toEqual([[0]]);
  });
});

describe("a depth-0 lock on a folder", () => {
  beforeAll(async () => {
    expect((await dav("MKCOL", "/s3/flat")).status).toBe(201);
    expect((await dav("PUT", "/s3/flat/existing.txt", { body: "before" })).status).toBe(201);
  });

  it("refuses a PUT that adds a member without the folder's token, and takes one with it", async () => {
    const token = await lock("/s3/flat", { Depth: "0" });
    const refused = await dav("PUT", "/s3/flat/new.txt", { body: "new" });
    expect(refused.status).toBe(423);
    expect(await refused.text()).toContain(
      "<D:lock-token-submitted><D:href>/dav/s3/flat</D:href></D:lock-token-submitted>",
    );
    expect(await s3Text(`${ROOT}/flat/new.txt`)).toBe(null);
    // A member that exists is not locked by its folder's depth-0 lock.
    expect((await dav("PUT", "/s3/flat/existing.txt", { body: "after" })).status).toBe(204);
    expect(await s3Text(`${ROOT}/flat/existing.txt`)).toBe("after");
    expect(
      (await dav("PUT", "/s3/flat/new.txt", { body: "new", headers: { If: `</dav/s3/flat> (<${token}>)` } })).status,
    ).toBe(201);
    expect(await s3Text(`${ROOT}/flat/new.txt`)).toBe("new");
    expect((await dav("UNLOCK", "/s3/flat", { headers: { "Lock-Token": `<${token}>` } })).status).toBe(204);
  });

  it("refuses a MKCOL that adds a member without the folder's token", async () => {
    expect((await dav("MKCOL", "/s3/flat-too")).status).toBe(201);
    const token = await lock("/s3/flat-too", { Depth: "0" });
    expect((await dav("MKCOL", "/s3/flat-too/new-folder")).status).toBe(423);
    expect(await s3Keys(`${ROOT}/flat-too/new-folder`)).toEqual([]);
    expect(
      (await dav("MKCOL", "/s3/flat-too/new-folder", { headers: { If: `</dav/s3/flat-too> (<${token}>)` } })).status,
    ).toBe(201);
  });
});

describe("a lock refresh", () => {
  it("by another user who names the token answers 403 and leaves the lock's timeout; the owner's refresh renews it", async () => {
    await makeUser(admin, "davlock-other", { "/": Bits.ALL });
    expect((await dav("PUT", "/s3/refresh.txt", { body: "r" })).status).toBe(201);
    const token = await lock("/s3/refresh.txt", { Timeout: "Second-600" });
    const refresh = (auth?: string) =>
      dav("LOCK", "/s3/refresh.txt", {
        ...(auth ? { auth } : {}),
        headers: { If: `(<${token}>)`, Timeout: "Second-3600" },
      });

    const other = await refresh(basicOf("davlock-other"));
    expect(other.status).toBe(403);
    expect(await other.text()).toBe("the lock belongs to another user\n");
    expect(await sql("SELECT timeout_seconds, user_id FROM dav_locks WHERE token = ?", [token])).toEqual([
      [600, expect.any(Number)],
    ]);

    const own = await refresh();
    expect(own.status).toBe(200);
    expect(await own.text()).toContain("<D:timeout>Second-3600</D:timeout>");
    expect(await sql("SELECT timeout_seconds FROM dav_locks WHERE token = ?", [token])).toEqual([[3600]]);
  });
});
