// The WebDAV server at /dav inside workerd, against the real upstreams (s3rver, webdav-server,
// ftp-srv) and R2 through the Worker's binding: every method on each, each write read back from the
// upstream itself; the sign-in rules (app passwords, no 2FA bypass, the shared lockout, disabled
// users and changed passwords on the next request); permissions, metas and base paths; locks; Range;
// bodies cut short; and one database round trip per request. refusals.workerd.test.ts has the
// refusals RFC 4918 names, guards.workerd.test.ts the file API's guards held over WebDAV.
import { env, exports } from "cloudflare:workers";
import { TOTP } from "otpauth";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { basic, type DavInit, dav, hrefs } from "../../../test/support/dav-client.ts";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { BUCKET, s3Text, upstreamDavText as upstreamText } from "../../../test/support/upstreams.ts";
import {
  apiAs,
  cutBody,
  makeUser as makeUserWith,
  member,
  R2_SIMULATOR_CUT_READ,
  runtimeLog,
  signIn,
} from "../../../test/support/workerd-client.ts";
import { MANAGE, READ, setUpDav, UPSTREAM_DAV_ROOT } from "./workerd-fixture.ts";

const servers = inject("storageServers");
const upstreamDavText = (path: string) => upstreamText(`${UPSTREAM_DAV_ROOT}${path}`);

/** Each test speaks from an address of its own, so the lockout of one never reaches another. */
let address = 0;
const freshAddress = () => `198.51.100.${++address}`;

let admin: string;
const { post } = apiAs(() => admin);

/** A user with one role whose scope at `/` has `permission`; its id. */
const makeUser = (username: string, permission: number, extra: Record<string, unknown> = {}) =>
  makeUserWith(admin, username, { "/": permission }, extra);

beforeAll(async () => {
  admin = await setUpDav("dav-server");
});

describe("OPTIONS and sign-in", () => {
  it("answers OPTIONS without credentials, and asks for Basic credentials for anything else", async () => {
    const options = await dav("OPTIONS", "/", { auth: null });
    expect(options.status).toBe(200);
    expect(options.headers.get("DAV")).toBe("1, 2");
    expect(options.headers.get("Allow")).toContain("PROPFIND");
    expect(options.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(options.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    const anonymous = await dav("PROPFIND", "/", { auth: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("WWW-Authenticate")).toMatch(/^Basic realm=/);
  });

  it("refuses a wrong password, counts it toward the sign-in lockout, and locks /api/auth/login too", async () => {
    const ip = freshAddress();
    await makeUser("dav-locked", READ);
    for (let i = 0; i < 5; i++)
      expect((await dav("PROPFIND", "/", { auth: basic("dav-locked", "wrong"), ip })).status).toBe(401);
    const locked = await dav("PROPFIND", "/", { auth: basic("dav-locked", "dav-locked password"), ip });
    expect(locked.status).toBe(429);
    expect(await locked.text()).toMatch(/^Too many unsuccessful sign-in attempts/);
    const login = await exports.default.fetch(
      new Request("http://gatehouse.test/api/auth/login", {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip },
        body: JSON.stringify({ username: "dav-locked", password: "dav-locked password" }),
      }),
    );
    expect((await login.json<{ code: number }>()).code).toBe(429);
    expect(await sql("SELECT count FROM login_failures WHERE scope = 'ip' AND subject = ?", [ip])).toEqual([[6]]);
    // From a clean address the owner still gets in, and the success clears the user's count.
    expect(
      (
        await dav("PROPFIND", "/", {
          auth: basic("dav-locked", "dav-locked password"),
          ip: freshAddress(),
          headers: { Depth: "0" },
        })
      ).status,
    ).toBe(207);
    expect(await sql("SELECT count FROM login_failures WHERE scope = 'user' AND subject = 'dav-locked'")).toEqual([]);
  });

  it("never takes a bare password from a user with two-factor on; an app password works until revoked", async () => {
    const token = await member(admin, "dav-twofa", { "/": READ });
    const secret = (await post("/api/auth/2fa/generate", undefined, token)).data.secret as string;
    const code = new TOTP({ secret }).generate();
    expect((await post("/api/auth/2fa/verify", { code, secret }, token)).code).toBe(200);

    const bare = await dav("PROPFIND", "/", {
      auth: basic("dav-twofa", "dav-twofa password"),
      ip: freshAddress(),
      headers: { Depth: "0" },
    });
    expect(bare.status).toBe(401);
    expect(await bare.text()).toMatch(/two-factor authentication on: sign in to WebDAV with an app password/);

    const made = await post("/api/me/app_password/create", { name: "rclone" }, token);
    expect(made).toMatchObject({
      code: 200,
      data: { name: "rclone", last_used: null, password: expect.stringMatching(/^gh-app-[A-Za-z0-9]{32}$/) },
    });
    const stored = await sql("SELECT hash FROM app_passwords WHERE id = ?", [made.data.id]);
    expect(stored[0]![0]).toMatch(/^[0-9a-f]{64}$/);
    expect(stored[0]![0]).not.toContain(made.data.password);
    const withApp = await dav("PROPFIND", "/", {
      auth: basic("dav-twofa", made.data.password),
      headers: { Depth: "0" },
    });
    expect(withApp.status).toBe(207);
    const listed = await (
      await exports.default.fetch(
        new Request("http://gatehouse.test/api/me/app_password/list", { headers: { Authorization: token } }),
      )
    ).json<{ data: unknown }>();
    expect(listed.data).toEqual([
      { id: made.data.id, name: "rclone", created: expect.any(String), last_used: expect.stringMatching(/^\d{4}-/) },
    ]);
    expect(JSON.stringify(listed)).not.toContain(made.data.password);

    expect((await post(`/api/me/app_password/delete?id=${made.data.id}`, undefined, admin)).code).toBe(404);
    expect((await post(`/api/me/app_password/delete?id=${made.data.id}`, undefined, token)).code).toBe(200);
    expect(
      (
        await dav("PROPFIND", "/", {
          auth: basic("dav-twofa", made.data.password),
          headers: { Depth: "0" },
          ip: freshAddress(),
        })
      ).status,
    ).toBe(401);
  });

  it("stops a disabled user and a changed password on the next request, app passwords included", async () => {
    const id = await makeUser("dav-changing", READ);
    const token = await signIn("dav-changing", "dav-changing", "dav-changing password");
    const app = (await post("/api/me/app_password/create", { name: "phone" }, token)).data.password as string;
    const ip = freshAddress();
    const propfind = (password: string) =>
      dav("PROPFIND", "/", { auth: basic("dav-changing", password), headers: { Depth: "0" }, ip });
    expect((await propfind("dav-changing password")).status).toBe(207);
    expect((await propfind(app)).status).toBe(207);

    expect((await post("/api/admin/user/update", { id, disabled: true })).code).toBe(200);
    expect((await propfind("dav-changing password")).status).toBe(403);
    expect((await post("/api/admin/user/update", { id, disabled: false })).code).toBe(200);
    expect((await propfind("dav-changing password")).status).toBe(207);

    expect((await post("/api/admin/user/update", { id, password: "a new password" })).code).toBe(200);
    expect((await propfind("dav-changing password")).status).toBe(401);
    expect((await propfind(app)).status).toBe(401);
    expect((await propfind("a new password")).status).toBe(207);
  });

  it("takes the permanent token as Bearer for the admin, and refuses any other", async () => {
    const token = (await sql("SELECT value FROM settings WHERE key = 'token'"))[0]![0] as string;
    expect((await dav("PROPFIND", "/", { auth: `Bearer ${token}`, headers: { Depth: "0" } })).status).toBe(207);
    expect((await dav("PROPFIND", "/", { auth: "Bearer not-the-token", headers: { Depth: "0" } })).status).toBe(401);
  });
});

describe("files on each upstream", () => {
  const upstreams = [
    { mount: "/s3", read: (path: string) => s3Text(`davs${path}`) },
    { mount: "/up", read: upstreamDavText },
    {
      mount: "/ftp",
      read: async (path: string) => {
        const found = await post("/api/fs/get", { path: `/ftp${path}` });
        if (found.code !== 200) return null;
        return (await exports.default.fetch(`http://gatehouse.test/d/ftp${path}?sign=${found.data.sign}`)).text();
      },
    },
    { mount: "/r2", read: async (path: string) => (await env.BUCKET!.get(`davs${path}`))?.text() ?? null },
  ];
  for (const { mount, read } of upstreams) {
    it(`MKCOL, PUT, GET with Range, COPY, MOVE and DELETE on ${mount}, each seen upstream`, async () => {
      const base = `${mount}/tree`;
      expect((await dav("PUT", `${base}/a.txt`, { body: "x" })).status).toBe(409);
      expect((await dav("MKCOL", base)).status).toBe(201);
      expect((await dav("MKCOL", base)).status).toBe(405);
      expect((await dav("PUT", `${base}/a.txt`, { body: "0123456789" })).status).toBe(201);
      expect(await read("/tree/a.txt")).toBe("0123456789");
      expect((await dav("PUT", `${base}/a.txt`, { body: "abcdefghij" })).status).toBe(204);
      expect(await read("/tree/a.txt")).toBe("abcdefghij");

      const whole = await dav("GET", `${base}/a.txt`);
      expect(whole.status).toBe(200);
      expect(await whole.text()).toBe("abcdefghij");
      const etag = whole.headers.get("Etag")!;
      const ranged = await dav("GET", `${base}/a.txt`, { headers: { Range: "bytes=4-6" } });
      expect(ranged.status).toBe(206);
      expect(await ranged.text()).toBe("efg");
      expect((await dav("GET", `${base}/a.txt`, { headers: { "If-None-Match": etag } })).status).toBe(304);
      const listing = await (await dav("PROPFIND", `${base}/`, { headers: { Depth: "1" } })).text();
      expect(hrefs(listing)).toEqual([`/dav${base}/`, `/dav${base}/a.txt`]);
      expect(listing).toContain(`<D:getetag>${etag}</D:getetag>`);
      expect(listing).toContain("<D:getcontentlength>10</D:getcontentlength>");

      expect(
        (
          await dav("COPY", `${base}/a.txt`, {
            headers: { Destination: `http://gatehouse.test/dav${base}/b%20copy.txt` },
          })
        ).status,
      ).toBe(201);
      expect(await read("/tree/b copy.txt")).toBe("abcdefghij");
      expect(
        (await dav("COPY", `${base}/a.txt`, { headers: { Destination: `/dav${base}/b%20copy.txt`, Overwrite: "F" } }))
          .status,
      ).toBe(412);
      expect((await dav("MKCOL", `${base}/sub`)).status).toBe(201);
      expect(
        (await dav("MOVE", `${base}/b%20copy.txt`, { headers: { Destination: `/dav${base}/sub/c.txt` } })).status,
      ).toBe(201);
      expect([await read("/tree/b copy.txt"), await read("/tree/sub/c.txt")]).toEqual([null, "abcdefghij"]);
      expect((await dav("MOVE", `${base}/sub/c.txt`, { headers: { Destination: `/dav${base}/a.txt` } })).status).toBe(
        204,
      );

      expect((await dav("DELETE", base)).status).toBe(204);
      expect(await read("/tree/a.txt")).toBe(null);
      expect((await dav("DELETE", base)).status).toBe(404);
      // FTP opens a connection per operation: some twenty logins, seconds on a busy machine.
    }, 20_000);
  }

  it("copies and moves across storages, file by file", async () => {
    expect((await dav("MKCOL", "/s3/across")).status).toBe(201);
    expect((await dav("PUT", "/s3/across/one.txt", { body: "one" })).status).toBe(201);
    expect((await dav("COPY", "/s3/across", { headers: { Destination: "/dav/up/across" } })).status).toBe(201);
    expect(await upstreamDavText("/across/one.txt")).toBe("one");
    expect((await dav("MOVE", "/up/across", { headers: { Destination: "/dav/ftp/across" } })).status).toBe(201);
    expect(await upstreamDavText("/across/one.txt")).toBe(null);
    expect(
      (await post("/api/fs/list", { path: "/ftp/across" })).data.content.map((e: { name: string }) => e.name),
    ).toEqual(["one.txt"]);
    for (const path of ["/s3/across", "/ftp/across"]) expect((await dav("DELETE", path)).status).toBe(204);
  });

  it("sends GET to the upstream's own link when the storage's webdav_policy is 302_redirect", async () => {
    expect((await dav("PUT", "/s3/redirected.txt", { body: "bytes" })).status).toBe(201);
    const reply = await dav("GET", "/s3-redirect/redirected.txt");
    expect(reply.status).toBe(302);
    const location = reply.headers.get("Location")!;
    expect(location).toMatch(new RegExp(`^${servers.s3Endpoint}/${BUCKET}/davs/redirected\\.txt\\?.*X-Amz-Signature=`));
    expect(await (await fetch(location)).text()).toBe("bytes");
  });

  it("answers one database round trip per request once the caller's password is known", async () => {
    expect((await dav("PUT", "/s3/counted.txt", { body: "counted" })).status).toBe(201);
    for (const [method, path, headers] of [
      ["PROPFIND", "/s3/", { Depth: "1" }],
      ["GET", "/s3/counted.txt", {}],
      ["PUT", "/s3/counted.txt", {}],
      ["MKCOL", "/s3/counted-dir", {}],
      ["DELETE", "/s3/counted-dir", {}],
    ] as const) {
      const counter = await roundTrips();
      const reply = await dav(method, path, { headers, ...(method === "PUT" ? { body: "again" } : {}) });
      await reply.arrayBuffer();
      expect(reply.status, `${method} ${path}`).toBeLessThan(300);
      expect(await counter.count(), `${method} ${path}`).toBe(1);
    }
  });
});

describe("permissions, metas and base paths", () => {
  it("refuses without the WebDAV bits: no read, read without manage", async () => {
    await makeUser("dav-none", 8);
    await makeUser("dav-reader", READ);
    const none = (method: string, path: string) =>
      dav(method, path, { auth: basic("dav-none", "dav-none password"), headers: { Depth: "0" } });
    const reader = (method: string, path: string, init: DavInit = {}) =>
      dav(method, path, { auth: basic("dav-reader", "dav-reader password"), ...init });
    expect((await none("PROPFIND", "/")).status).toBe(403);
    expect((await reader("PROPFIND", "/s3/", { headers: { Depth: "1" } })).status).toBe(207);
    expect((await reader("PUT", "/s3/reader.txt", { body: "no" })).status).toBe(403);
    expect((await reader("MKCOL", "/s3/reader")).status).toBe(403);
    expect((await dav("PUT", "/s3/kept.txt", { body: "kept" })).status).toBe(201);
    expect((await reader("DELETE", "/s3/kept.txt")).status).toBe(403);
    expect((await reader("MOVE", "/s3/kept.txt", { headers: { Destination: "/dav/s3/moved.txt" } })).status).toBe(403);
    expect(await s3Text("davs/kept.txt")).toBe("kept");
    expect(await s3Text("davs/reader.txt")).toBe(null);
  });

  it("hides what a meta hides, and refuses a password-guarded folder to callers who cannot skip passwords", async () => {
    await makeUser("dav-viewer", MANAGE);
    expect((await dav("MKCOL", "/s3/metas")).status).toBe(201);
    expect((await dav("MKCOL", "/s3/metas/guarded")).status).toBe(201);
    expect((await dav("PUT", "/s3/metas/secret.txt", { body: "s" })).status).toBe(201);
    expect((await dav("PUT", "/s3/metas/guarded/in.txt", { body: "in" })).status).toBe(201);
    expect((await post("/api/admin/meta/create", { path: "/s3/metas", hide: "^secret", h_sub: false })).code).toBe(200);
    expect(
      (await post("/api/admin/meta/create", { path: "/s3/metas/guarded", password: "pw", p_sub: true })).code,
    ).toBe(200);
    const viewer = (method: string, path: string, init: DavInit = {}) =>
      dav(method, path, { auth: basic("dav-viewer", "dav-viewer password"), ...init });

    const listed = hrefs(await (await viewer("PROPFIND", "/s3/metas/", { headers: { Depth: "1" } })).text());
    expect(listed).toEqual(["/dav/s3/metas/", "/dav/s3/metas/guarded/"]);
    expect((await viewer("GET", "/s3/metas/secret.txt")).status).toBe(403);
    expect((await viewer("GET", "/s3/metas/guarded/in.txt")).status).toBe(403);
    expect((await viewer("PUT", "/s3/metas/guarded/new.txt", { body: "x" })).status).toBe(403);
    // The admin may see hidden names and skip passwords.
    expect(hrefs(await (await dav("PROPFIND", "/s3/metas/", { headers: { Depth: "1" } })).text())).toContain(
      "/dav/s3/metas/secret.txt",
    );
    expect(await (await dav("GET", "/s3/metas/guarded/in.txt")).text()).toBe("in");
    await sql("DELETE FROM metas");
  });

  it("keeps a user with a base path inside it, whatever the spelling of the path or the Destination", async () => {
    expect((await dav("MKCOL", "/s3/based")).status).toBe(201);
    expect((await dav("PUT", "/s3/outside.txt", { body: "outside" })).status).toBe(201);
    await makeUser("dav-based", MANAGE, { base_path: "/s3/based" });
    const based = (method: string, path: string, init: DavInit = {}) =>
      dav(method, path, { auth: basic("dav-based", "dav-based password"), ...init });
    expect((await based("PUT", "/mine.txt", { body: "mine" })).status).toBe(201);
    expect(await s3Text("davs/based/mine.txt")).toBe("mine");
    expect(hrefs(await (await based("PROPFIND", "/", { headers: { Depth: "1" } })).text())).toEqual([
      "/dav/",
      "/dav/mine.txt",
    ]);
    // `..` and `%2e%2e` are resolved by the URL parser before any server sees them; an escaped slash is not.
    expect((await based("GET", "/..%2Foutside.txt")).status).toBe(404);
    expect((await based("GET", "/sub%2F..%2F..%2F..%2Foutside.txt")).status).toBe(404);
    expect((await based("COPY", "/mine.txt", { headers: { Destination: "/dav/..%2F..%2Foutside.txt" } })).status).toBe(
      201,
    );
    expect(await s3Text("davs/outside.txt")).toBe("outside");
    expect(await s3Text("davs/based/outside.txt")).toBe("mine");
  });
});

describe("locks", () => {
  it("locks a new name as an empty file, refuses changes without the token or from another user, and unlocks", async () => {
    await makeUser("dav-other", MANAGE);
    const locked = await dav("LOCK", "/s3/locked.txt", {
      headers: { Timeout: "Second-600" },
      body: '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner><D:href>me</D:href></D:owner></D:lockinfo>',
    });
    expect(locked.status).toBe(201);
    const token = /^<(urn:uuid:[0-9a-f-]+)>$/.exec(locked.headers.get("Lock-Token")!)![1]!;
    const body = await locked.text();
    expect(body).toContain(`<D:locktoken><D:href>${token}</D:href></D:locktoken>`);
    expect(body).toContain("<D:timeout>Second-600</D:timeout>");
    expect(await s3Text("davs/locked.txt")).toBe("");
    expect(await sql("SELECT path, depth, exclusive FROM dav_locks WHERE token = ?", [token])).toEqual([
      ["/s3/locked.txt", -1, 1],
    ]);

    const refused = await dav("PUT", "/s3/locked.txt", { body: "no token" });
    expect(refused.status).toBe(423);
    expect(await refused.text()).toContain(
      "<D:lock-token-submitted><D:href>/dav/s3/locked.txt</D:href></D:lock-token-submitted>",
    );
    const other = basic("dav-other", "dav-other password");
    expect(
      (await dav("PUT", "/s3/locked.txt", { auth: other, body: "not mine", headers: { If: `(<${token}>)` } })).status,
    ).toBe(423);
    expect(
      (
        await dav("LOCK", "/s3/locked.txt", {
          auth: other,
          body: '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>',
        })
      ).status,
    ).toBe(423);
    expect((await dav("PUT", "/s3/locked.txt", { body: "with token", headers: { If: `(<${token}>)` } })).status).toBe(
      204,
    );
    expect(await s3Text("davs/locked.txt")).toBe("with token");
    expect(
      (
        await dav("PUT", "/s3/locked.txt", {
          body: "x",
          headers: { If: "(<urn:uuid:00000000-0000-0000-0000-000000000000>)" },
        })
      ).status,
    ).toBe(412);

    const discovered = await (
      await dav("PROPFIND", "/s3/locked.txt", {
        headers: { Depth: "0" },
        body: '<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>',
      })
    ).text();
    expect(discovered).toContain(token);
    expect(
      (await dav("UNLOCK", "/s3/locked.txt", { auth: other, headers: { "Lock-Token": `<${token}>` } })).status,
    ).toBe(403);
    expect((await dav("UNLOCK", "/s3/locked.txt", { headers: { "Lock-Token": `<${token}>` } })).status).toBe(204);
    expect(await sql("SELECT count(*) FROM dav_locks WHERE token = ?", [token])).toEqual([[0]]);
    expect((await dav("UNLOCK", "/s3/locked.txt", { headers: { "Lock-Token": `<${token}>` } })).status).toBe(409);
    expect((await dav("DELETE", "/s3/locked.txt")).status).toBe(204);
  });
});

describe("Range checked before any upstream call", () => {
  it("serves the whole file for an inverted range (bytes=5-2), as for the other invalid spellings, on every upstream", async () => {
    for (const mount of ["/up", "/ftp", "/s3", "/r2"]) {
      expect((await dav("PUT", `${mount}/inverted.txt`, { body: "0123456789" })).status, mount).toBe(201);
      for (const range of ["bytes=5-2", "bytes=x-1", "bytes=-"]) {
        const reply = await dav("GET", `${mount}/inverted.txt`, { headers: { Range: range } });
        expect(reply.status, `${mount} ${range}`).toBe(200);
        expect(await reply.text(), `${mount} ${range}`).toBe("0123456789");
      }
      const valid = await dav("GET", `${mount}/inverted.txt`, { headers: { Range: "bytes=2-5" } });
      expect([valid.status, await valid.text()], mount).toEqual([206, "2345"]);
      expect((await dav("DELETE", `${mount}/inverted.txt`)).status, mount).toBe(204);
    }
  });
});

describe("PUT whose body ends before its Content-Length", () => {
  for (const mount of ["/up", "/ftp", "/r2"]) {
    it(`answers a 5xx and leaves no partial file and no uncaught error in the log on ${mount}`, async () => {
      const logged = await runtimeLog();
      for (const how of ["error", "close"] as const) {
        const reply = await dav("PUT", `${mount}/cut-${how}.txt`, {
          body: cutBody(how),
          headers: { "Content-Length": "200000" },
        });
        expect(reply.status, how).toBeGreaterThanOrEqual(500);
        // The bytes that came before an error may be lost on the way in: only a body that ends counts them all.
        expect(await reply.text(), how).toMatch(
          how === "close"
            ? /^the upload ended early: 100000 of its 200000 bytes arrived\n$/
            : /^the upload ended early: \d+ of its 200000 bytes arrived\n$/,
        );
        expect((await post("/api/fs/get", { path: `${mount}/cut-${how}.txt` })).message, how).toBe("object not found");
      }
      const listed = (await post("/api/fs/list", { path: mount })).data.content ?? [];
      expect(
        listed.map((entry: { name: string }) => entry.name).filter((name: string) => name.startsWith("cut-")),
      ).toEqual([]);
      // A body that ends early aborts the upload's request rather than failing it, so workerd logs
      // no uncaught error (docs/decisions.md D12.8). Miniflare's R2 is a Worker of its own that reads
      // the put's body and logs the cut read itself: not ours.
      const uncaught = (await runtimeLog(logged.next)).uncaught;
      expect(uncaught.filter((line) => !line.includes(R2_SIMULATOR_CUT_READ))).toEqual([]);
    });
  }
});
