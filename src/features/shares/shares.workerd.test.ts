// Share links inside workerd, against s3rver and webdav-server on 127.0.0.1: management by the
// owner, the admin and a user without the share bit, in OpenList's shapes; browsing exactly the
// shared items under /@s without an account, with no way out; codes, expiry, disable, delete and
// burn-after-read holding on the next request (30 parallel downloads of a one-download share give
// one file); the creator's own limits re-checked on every use.
import { exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { davAddition, s3Put, upstreamDav } from "../../../test/support/upstreams.ts";
import {
  call as callPath,
  callApi,
  inTrips,
  makeUser,
  member,
  mountStorage,
  signIn,
} from "../../../test/support/workerd-client.ts";
import { SHARE, SHARE_CUSTOM_ID } from "./rules.ts";

const servers = inject("storageServers");

let admin: string;
let alice: string; // may share under /s3/team/a
let bob: string; // may read /s3/team but not share

const api = (token: string, path: string, body?: unknown) => callApi(token, path, body);
const anonymous = (path: string, body: unknown) =>
  callPath(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
const sd = (path: string, init: RequestInit = {}) =>
  exports.default.fetch(new Request(`http://gatehouse.test/sd/${path}`, init));
const create = (token: string, body: Record<string, unknown>) =>
  api(token, "/api/share/create", { expires: null, pwd: "", max_accessed: 0, ...body });

beforeAll(async () => {
  admin = await signIn("shares-admin");
  await s3Put("shares/team/a/one.txt", "one");
  await s3Put("shares/team/a/sub/two.txt", "two two");
  await s3Put("shares/team/a/secret.key", "hidden by a meta");
  await s3Put("shares/team/ab/other.txt", "not shared");
  await s3Put("shares/team/ab/keep", "");
  await sql("DELETE FROM storages");
  expect((await mountStorage(admin, "/s3", "S3", s3Options())).code).toBe(200);
  expect((await mountStorage(admin, "/dav", "WebDav", davAddition("/"))).code).toBe(200);
  expect((await upstreamDav("PUT", "/share-range.bin", { body: "0123456789" })).status).toBe(201);
  await makeUser(admin, "share-alice", { "/s3/team/a": SHARE }, { base_path: "/s3/team" });
  alice = await signIn("share-alice", "share-alice", "share-alice password");
  await makeUser(admin, "share-bob", { "/s3/team": 0 });
  bob = await signIn("share-bob", "share-bob", "share-bob password");
});

beforeEach(async () => {
  await sql("DELETE FROM shares");
  await sql("DELETE FROM metas");
  await sql("DELETE FROM login_failures");
});

function s3Options() {
  return {
    endpoint: servers.s3Endpoint,
    bucket: "gatehouse-bucket",
    access_key_id: "GATEHOUSEKEY",
    secret_access_key: "gatehouse-secret-key",
    placeholder: "keep",
    root_folder_path: "/shares",
  };
}

describe("managing shares", () => {
  it("lets a sharer create, read, list, change, disable, enable and delete its own share, in OpenList's shapes", async () => {
    const made = await create(alice, {
      files: ["/s3/team/a"],
      pwd: "s3cret",
      remark: "for the team",
      expires: "2099-01-02T03:04:05.000Z",
    });
    expect(made.code, made.message).toBe(200);
    expect(made.data).toMatchObject({
      expires: "2099-01-02T03:04:05Z",
      pwd: "s3cret",
      accessed: 0,
      max_accessed: 0,
      disabled: false,
      remark: "for the team",
      files: ["/s3/team/a"],
      creator: "share-alice",
      creator_role: 0,
    });
    expect(made.data.id).toMatch(/^[A-Za-z0-9]{8}$/);
    const stored = String((await sql("SELECT code_hash FROM shares WHERE id = ?", [made.data.id]))[0]![0]);
    expect(stored).toMatch(/^pbkdf2-sha256\$/);
    expect(stored).not.toContain("s3cret");

    // get and list never show the code; the UI posts the object back and the code stays.
    const got = await callPath(`/api/share/get?id=${made.data.id}`, { headers: { Authorization: alice } });
    expect(got.data.pwd).toBe("");
    expect(JSON.stringify(got.data)).not.toContain("s3cret");
    const listed = await callPath("/api/share/list", { headers: { Authorization: alice } });
    expect(listed.data.total).toBe(1);
    expect(listed.data.content[0].pwd).toBe("");
    const edited = await api(alice, "/api/share/update", { ...got.data, remark: "edited", accessed: 99 });
    expect(edited.code, edited.message).toBe(200);
    expect(edited.data).toMatchObject({ remark: "edited", accessed: 0 });
    expect((await anonymous("/api/fs/list", { path: `/@s/${made.data.id}` })).code).toBe(403);
    expect((await anonymous("/api/fs/list", { path: `/@s/${made.data.id}`, password: "s3cret" })).code).toBe(200);

    // A backup restored through the UI posts list items to create: the code comes back with it.
    const restored = await create(admin, { ...listed.data.content[0], id: "restored" });
    expect(restored.code, restored.message).toBe(200);
    expect((await anonymous("/api/fs/list", { path: "/@s/restored" })).code).toBe(403);
    expect((await anonymous("/api/fs/list", { path: "/@s/restored", password: "s3cret" })).code).toBe(200);
    // A stale login token in the visitor's browser does not send it to the sign-in page.
    const stale = await callPath("/api/fs/list", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: "stale.login.token" },
      body: JSON.stringify({ path: "/@s/restored", password: "s3cret" }),
    });
    expect(stale.code).toBe(200);

    expect((await api(alice, `/api/share/disable?id=${made.data.id}`)).code).toBe(200);
    expect(
      (await callPath(`/api/share/get?id=${made.data.id}`, { headers: { Authorization: alice } })).data.disabled,
    ).toBe(true);
    expect((await api(alice, `/api/share/enable?id=${made.data.id}`)).code).toBe(200);
    expect((await api(alice, `/api/share/delete?id=${made.data.id}`)).data).toBeNull();
    expect(await sql("SELECT id FROM shares")).toEqual([["restored"]]);
  });

  it("pages a sharer's own shares and the admin's all by id, with their totals", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create(alice, { files: ["/s3/team/a"] })).data.id);
    for (const id of ["adm-1", "adm-2"]) expect((await create(admin, { files: ["/s3/team/a"], id })).code).toBe(200);
    const page = async (token: string, number: number, size: number) => {
      const reply = await callPath(`/api/share/list?page=${number}&per_page=${size}`, {
        headers: { Authorization: token },
      });
      expect(reply.code, reply.message).toBe(200);
      return { ids: reply.data.content.map((share: { id: string }) => share.id), total: reply.data.total };
    };
    const own = [...ids].sort();
    expect(await page(alice, 1, 2)).toEqual({ ids: own.slice(0, 2), total: 3 });
    expect(await page(alice, 2, 2)).toEqual({ ids: own.slice(2), total: 3 });
    const all = [...ids, "adm-1", "adm-2"].sort();
    expect(await page(admin, 1, 3)).toEqual({ ids: all.slice(0, 3), total: 5 });
    expect(await page(admin, 2, 3)).toEqual({ ids: all.slice(3), total: 5 });
    expect(await page(bob, 1, 3)).toEqual({ ids: [], total: 0 });
  });

  it("answers someone else's share as not found, shows the admin every share, and refuses users without the bit", async () => {
    const made = await create(alice, { files: ["/s3/team/a/one.txt"] });
    for (const action of ["delete", "enable", "disable"]) {
      const reply = await api(bob, `/api/share/${action}?id=${made.data.id}`);
      expect(reply).toEqual({ code: 404, message: "sharing not found", data: null });
    }
    expect((await callPath(`/api/share/get?id=${made.data.id}`, { headers: { Authorization: bob } })).code).toBe(404);
    expect((await callPath("/api/share/list", { headers: { Authorization: bob } })).data).toEqual({
      content: [],
      total: 0,
    });
    const all = await callPath("/api/share/list", { headers: { Authorization: admin } });
    expect(all.data.content.map((s: any) => s.creator)).toEqual(["share-alice"]);
    expect((await api(admin, `/api/share/disable?id=${made.data.id}`)).code).toBe(200);

    expect(await create(bob, { files: ["/s3/team/a"] })).toEqual({
      code: 403,
      message: "permission denied",
      data: null,
    });
    expect(await create(alice, { files: ["/s3/team/ab"] })).toEqual({
      code: 403,
      message: "permission denied to share path [/s3/team/ab]",
      data: null,
    });
    expect((await create(alice, { files: ["/s3/team/a", "/dav/a"] })).message).toBe(
      "two shared items have the same name [a]: share their folder instead",
    );
    expect((await create(alice, { files: [""] })).message).toBe("must add at least 1 object");
    expect((await create(alice, { files: ["/s3/team/a"], id: "mine" })).message).toBe("permission denied");
    expect((await create(alice, { files: ["/s3/team/a"], expires: "tomorrow" })).code).toBe(400);
    const chosen = await create(admin, { files: ["/s3/team/a"], id: "team-a" });
    expect(chosen.data.id).toBe("team-a");
    expect((await create(admin, { files: ["/s3/team/a"], id: "team-a" })).message).toBe("sharing id already exists");
    expect((await create(admin, { files: ["/s3/team/a"], id: "a/b" })).code).toBe(400);

    const me = await callPath("/api/me", { headers: { Authorization: alice } });
    expect((me.data.permission >> 14) & 1).toBe(1);
    expect((me.data.permission >> 15) & 1).toBe(0);
    const bobMe = await callPath("/api/me", { headers: { Authorization: bob } });
    expect((bobMe.data.permission >> 14) & 1).toBe(0);
    expect(SHARE_CUSTOM_ID).toBe(32768);
  });
});

describe("changing a share someone else may not", () => {
  it("answers an update of another user's share as not found and changes nothing", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a"], remark: "alice's" });
    const dave = await member(admin, "share-dave", { "/s3/team": SHARE });
    const before = await sql("SELECT id, creator_id, files, remark, code_hash, max_accessed FROM shares");
    for (const body of [
      { ...share, remark: "taken over", pwd: "dave's code", max_accessed: 5 },
      { ...share, files: ["/s3/team/ab"], disabled: true },
    ])
      expect(await api(dave, "/api/share/update", body)).toEqual({
        code: 404,
        message: "sharing not found",
        data: null,
      });
    expect(await sql("SELECT id, creator_id, files, remark, code_hash, max_accessed FROM shares")).toEqual(before);
    expect((await anonymous("/api/fs/list", { path: `/@s/${share.id}` })).code).toBe(200);
  });

  it("needs the choose-id bit to give a share a new id on update, as on create", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a"] });
    expect(await api(alice, "/api/share/update", { ...share, new_id: "alice-chosen" })).toEqual({
      code: 403,
      message: "permission denied",
      data: null,
    });
    expect(await sql("SELECT id FROM shares")).toEqual([[share.id]]);
    // Keeping the id needs no bit; the admin, who has it at /, may change it.
    expect((await api(alice, "/api/share/update", { ...share, new_id: share.id, remark: "kept" })).code).toBe(200);
    const renamed = await api(admin, "/api/share/update", { ...share, new_id: "admin-chosen" });
    expect(renamed.code, renamed.message).toBe(200);
    expect(await sql("SELECT id, remark FROM shares")).toEqual([["admin-chosen", ""]]);
  });
});

describe("browsing a share without an account", () => {
  it("lists and gets exactly the shared folder's items, with no real path on the wire", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a"], readme: "hello" });
    const root = await anonymous("/api/fs/list", { path: `/@s/${share.id}` });
    expect(root.code, root.message).toBe(200);
    expect(root.data).toMatchObject({ total: 3, readme: "hello", write: false, provider: "unknown" });
    expect(root.data.content.map((e: any) => e.name).sort()).toEqual(["one.txt", "secret.key", "sub"]);
    expect(root.data.content.every((e: any) => e.path === "" && e.sign === "")).toBe(true);
    const sub = await anonymous("/api/fs/list", { path: `/@s/${share.id}/sub` });
    expect((await anonymous("/api/fs/list", { path: `/@s/${share.id}/one.txt` })).message).toBe("object not found");
    const folderLink = await sd(`${share.id}/sub`);
    expect(folderLink.status).toBe(400);
    expect(await folderLink.text()).toBe("a folder cannot be downloaded: open the share's page\n");
    expect(sub.data.content.map((e: any) => e.name)).toEqual(["two.txt"]);
    const file = await anonymous("/api/fs/get", { path: `/@s/${share.id}/sub/two.txt` });
    expect(file.data).toMatchObject({ name: "two.txt", size: 7, is_dir: false, path: "" });
    expect(file.data.raw_url).toBe(`http://gatehouse.test/sd/${share.id}/sub/two.txt`);
    const bytes = await sd(`${share.id}/sub/two.txt`);
    expect(bytes.status).toBe(200);
    expect(await bytes.text()).toBe("two two");
    expect(JSON.stringify([root, sub, file])).not.toContain("/shares/team");
  });

  it("costs one round trip for the share, one for the tree, and one more to count a download", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a"], pwd: "pw" });
    expect((await inTrips(2, () => anonymous("/api/fs/list", { path: `/@s/${share.id}`, password: "pw" }))).code).toBe(
      200,
    );
    const response = await inTrips(3, async () => {
      const reply = await sd(`${share.id}/one.txt?pwd=pw`);
      await reply.arrayBuffer();
      return reply;
    });
    expect(response.status).toBe(200);
  });

  it("leads nowhere outside the share: .., %2e%2e, backslashes, and the neighbour /team/ab", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a"] });
    for (const path of [
      `/@s/${share.id}/../ab/other.txt`,
      `/@s/${share.id}/..\\ab\\other.txt`,
      `/@s/${share.id}\\..\\ab\\other.txt`,
      `/@s/${share.id}/sub/../../ab/other.txt`,
    ]) {
      const reply = await anonymous("/api/fs/get", { path });
      expect(reply.code, path).not.toBe(200);
      expect(JSON.stringify(reply), path).not.toContain("not shared");
    }
    for (const url of [
      `${share.id}/%2e%2e/ab/other.txt`,
      `${share.id}/..%2fab%2fother.txt`,
      `${share.id}/..%5cab%5cother.txt`,
      `${share.id}%2f..%2fab%2fother.txt`,
    ]) {
      const response = await sd(url);
      expect(response.status, url).toBeGreaterThanOrEqual(400);
      expect(await response.text(), url).not.toContain("not shared");
    }
    // `/@sX` is not share X, and /@s alone names none.
    expect((await anonymous("/api/fs/list", { path: `/@s${share.id}` })).code).toBe(401);
    expect((await anonymous("/api/fs/list", { path: "/@s" })).message).toBe("invalid share id");
    expect((await anonymous("/api/fs/list", { path: "/@s/nope" })).message).toBe("the share does not exist");
    expect((await sd("nope/x")).status).toBe(404);
  });

  it("names the items of a multi-item share by their names, and keeps the creator's hide rules", async () => {
    await sql("INSERT INTO metas (path, hide, h_sub) VALUES ('/s3/team/a', '\\.key$', 1)");
    const { data: share } = await create(admin, { files: ["/s3/team/a", "/s3/team/ab/other.txt"] });
    const root = await anonymous("/api/fs/list", { path: `/@s/${share.id}` });
    expect(root.data.content.map((e: any) => e.name)).toEqual(["a", "other.txt"]);
    expect((await anonymous("/api/fs/get", { path: `/@s/${share.id}` })).data).toMatchObject({
      name: share.id,
      is_dir: true,
    });
    expect(await (await sd(`${share.id}/other.txt`)).text()).toBe("not shared");
    expect((await sd(`${share.id}/`)).status).toBe(400);
    // The admin sees hidden names, so its share shows them; alice's does not, by any path.
    const { data: alices } = await create(alice, { files: ["/s3/team/a"] });
    const listed = await anonymous("/api/fs/list", { path: `/@s/${alices.id}` });
    expect(listed.data.content.map((e: any) => e.name).sort()).toEqual(["one.txt", "sub"]);
    expect((await anonymous("/api/fs/get", { path: `/@s/${alices.id}/secret.key` })).code).toBe(404);
    expect((await sd(`${alices.id}/secret.key`)).status).toBe(404);
  });

  it("keeps a meta password's folder shut unless the creator may skip passwords", async () => {
    await sql("INSERT INTO metas (path, password, p_sub) VALUES ('/s3/team/a/sub', 'meta pw', 1)");
    const { data: share } = await create(alice, { files: ["/s3/team/a"] });
    expect((await anonymous("/api/fs/list", { path: `/@s/${share.id}/sub` })).code).toBe(404);
    expect((await sd(`${share.id}/sub/two.txt`)).status).toBe(404);
    expect((await sd(`${share.id}/one.txt`)).status).toBe(200);
  });
});

describe("a share's limits hold on the next request", () => {
  it("asks for the code, counts wrong ones, and locks out after five", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a"], pwd: "1234" });
    expect(await anonymous("/api/fs/list", { path: `/@s/${share.id}` })).toEqual({
      code: 403,
      message: "wrong share code",
      data: null,
    });
    const file = await anonymous("/api/fs/get", { path: `/@s/${share.id}/one.txt`, password: "1234" });
    expect(file.data.raw_url).toMatch(new RegExp(`/sd/${share.id}/one.txt\\?sign=`));
    expect(file.data.raw_url).not.toContain("1234");
    const signed = new URL(file.data.raw_url);
    expect(await (await sd(`${share.id}/one.txt${signed.search}`)).text()).toBe("one");
    expect((await sd(`${share.id}/sub/two.txt${signed.search}`)).status).toBe(403);
    expect(await (await sd(`${share.id}/one.txt?pwd=1234`)).text()).toBe("one");
    expect((await sd(`${share.id}/one.txt`)).status).toBe(403);

    const wrong = await Promise.all(
      Array.from({ length: 5 }, () => anonymous("/api/fs/list", { path: `/@s/${share.id}`, password: "0000" })),
    );
    expect(wrong.map((r) => r.code)).toEqual([403, 403, 403, 403, 403]);
    expect((await anonymous("/api/fs/list", { path: `/@s/${share.id}`, password: "1234" })).code).toBe(429);
    expect((await sd(`${share.id}/one.txt?pwd=1234`)).status).toBe(429);
    // A sign handed out before still works: it proves the code was given.
    expect((await sd(`${share.id}/one.txt${signed.search}`)).status).toBe(200);
  });

  it("ends browsing and links on disable, expiry and delete, the signs too", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a"], pwd: "pw" });
    const file = await anonymous("/api/fs/get", { path: `/@s/${share.id}/one.txt`, password: "pw" });
    const link = `${share.id}/one.txt${new URL(file.data.raw_url).search}`;
    expect((await sd(link)).status).toBe(200);

    await api(alice, `/api/share/disable?id=${share.id}`);
    expect((await sd(link)).status).toBe(403);
    expect((await anonymous("/api/fs/list", { path: `/@s/${share.id}`, password: "pw" })).message).toBe(
      "the share has expired or is no longer valid",
    );
    await api(alice, `/api/share/enable?id=${share.id}`);
    expect((await sd(link)).status).toBe(200);

    await sql("UPDATE shares SET expires_ms = ? WHERE id = ?", [Date.now() - 1000, share.id]);
    expect((await sd(link)).status).toBe(410);
    await sql("UPDATE shares SET expires_ms = NULL WHERE id = ?", [share.id]);

    await api(alice, `/api/share/delete?id=${share.id}`);
    expect((await sd(link)).status).toBe(404);
    // The same id made again with the same code: the old sign is still dead.
    const again = await create(admin, { files: ["/s3/team/a"], pwd: "pw", id: share.id });
    expect(again.code, again.message).toBe(200);
    expect((await sd(link)).status).toBe(403);
  });

  it("refuses an expired share to fs/list, fs/get and HEAD /sd, not only to a counted GET", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a"] });
    expect((await sd(`${share.id}/one.txt`, { method: "HEAD" })).status).toBe(200);
    await sql("UPDATE shares SET expires_ms = ? WHERE id = ?", [Date.now() - 1000, share.id]);
    const expired = { code: 500, message: "the share has expired or is no longer valid", data: null };
    expect(await anonymous("/api/fs/list", { path: `/@s/${share.id}` })).toEqual(expired);
    expect(await anonymous("/api/fs/list", { path: `/@s/${share.id}/sub` })).toEqual(expired);
    expect(await anonymous("/api/fs/get", { path: `/@s/${share.id}/one.txt` })).toEqual(expired);
    const head = await sd(`${share.id}/one.txt`, { method: "HEAD" });
    expect(head.status).toBe(410);
    expect(head.headers.get("content-length")).not.toBe("3");
    expect((await sd(`${share.id}/one.txt`)).status).toBe(410);
  });

  it("gives its count back to a download the upstream answers 416 or refuses", async () => {
    const { data: ranged } = await create(admin, { files: ["/s3/team/a/one.txt"], max_accessed: 1 });
    const past = await sd(`${ranged.id}/`, { headers: { Range: "bytes=50-" } });
    expect(past.status).toBe(416);
    await past.body?.cancel();
    expect(await sql("SELECT accessed FROM shares WHERE id = ?", [ranged.id])).toEqual([[0]]);
    // The one download it allows is still there.
    expect(await (await sd(`${ranged.id}/`)).text()).toBe("one");
    expect((await sd(`${ranged.id}/`)).status).toBe(410);

    // An S3 storage whose links point at a host that refuses them (the WebDAV server, without its credentials).
    expect(
      (await mountStorage(admin, "/s3-refusing", "S3", { ...s3Options(), custom_host: servers.webdavUrl })).code,
    ).toBe(200);
    try {
      const { data: refused } = await create(admin, { files: ["/s3-refusing/team/a/one.txt"], max_accessed: 1 });
      for (const attempt of [1, 2]) {
        const reply = await sd(`${refused.id}/`);
        expect(reply.status, `attempt ${attempt}`).toBe(502);
        expect(await reply.text()).toBe("the storage behind this share failed\n");
      }
      expect(await sql("SELECT accessed FROM shares WHERE id = ?", [refused.id])).toEqual([[0]]);
    } finally {
      await sql("DELETE FROM storages WHERE mount_path = '/s3-refusing'");
    }
  });

  it("gives exactly one of 30 parallel downloads of a one-download share, and page views use none", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a/one.txt"], max_accessed: 1 });
    expect((await anonymous("/api/fs/get", { path: `/@s/${share.id}` })).code).toBe(200);
    expect((await anonymous("/api/fs/get", { path: `/@s/${share.id}` })).data.raw_url).toBe(
      `http://gatehouse.test/sd/${share.id}/`,
    );
    expect((await sd(`${share.id}/`, { method: "HEAD" })).status).toBe(200);
    const replies = await Promise.all(Array.from({ length: 30 }, () => sd(`${share.id}/`)));
    const statuses = await Promise.all(
      replies.map(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 410)).toHaveLength(29);
    expect(await sql("SELECT accessed FROM shares WHERE id = ?", [share.id])).toEqual([[1]]);
    expect((await anonymous("/api/fs/get", { path: `/@s/${share.id}` })).message).toBe(
      "the share has expired or is no longer valid",
    );
  });

  it("previews no more than it may download: the raw_url a preview reads counts, then both links are spent", async () => {
    const { data: share } = await create(alice, { files: ["/s3/team/a/one.txt"], pwd: "pass", max_accessed: 1 });
    const got = await anonymous("/api/fs/get", { path: `/@s/${share.id}`, password: "pass" });
    const preview = got.data.raw_url as string;
    expect(preview).toMatch(new RegExp(`^http://gatehouse\\.test/sd/${share.id}/\\?sign=`));
    const first = await exports.default.fetch(new Request(preview));
    expect([first.status, await first.text()]).toEqual([200, "one"]);
    const again = await exports.default.fetch(new Request(preview));
    await again.arrayBuffer();
    expect(again.status).toBe(410);
    const download = await sd(`${share.id}/?pwd=pass`);
    await download.arrayBuffer();
    expect(download.status).toBe(410);
    expect(await sql("SELECT accessed FROM shares WHERE id = ?", [share.id])).toEqual([[1]]);
  });

  it("cuts a share off when its creator is narrowed, disabled or deleted", async () => {
    const userId = await makeUser(admin, "share-carol", { "/s3/team": SHARE });
    const carol = await signIn("share-carol", "share-carol", "share-carol password");
    const { data: share } = await create(carol, { files: ["/s3/team/a/one.txt"] });
    expect((await sd(`${share.id}/`)).status).toBe(200);
    const roleId = Number((await sql("SELECT id FROM roles WHERE name = 'share-carol-role'"))[0]![0]);
    await sql(`UPDATE roles SET permission_scopes = '[{"path":"/s3/team","permission":0}]' WHERE id = ?`, [roleId]);
    expect((await sd(`${share.id}/`)).status).toBe(403);
    await sql(`UPDATE roles SET permission_scopes = '[{"path":"/s3/team","permission":16384}]' WHERE id = ?`, [roleId]);
    await sql("UPDATE users SET base_path = '/s3/team/ab' WHERE id = ?", [userId]);
    expect((await sd(`${share.id}/`)).status).toBe(403);
    await sql("UPDATE users SET base_path = '/', disabled = 1 WHERE id = ?", [userId]);
    expect((await sd(`${share.id}/`)).status).toBe(403);
    await sql("UPDATE users SET disabled = 0 WHERE id = ?", [userId]);
    expect((await sd(`${share.id}/`)).status).toBe(200);
    expect((await api(admin, `/api/admin/user/delete?id=${userId}`)).code).toBe(200);
    expect((await sd(`${share.id}/`)).status).toBe(404);
    expect(await sql("SELECT id FROM shares")).toEqual([]);
  });

  it("proxies a WebDAV file with Range and HEAD, and counts each delivered GET", async () => {
    const { data: share } = await create(admin, { files: ["/dav/share-range.bin"] });
    const head = await sd(`${share.id}/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("10");
    const part = await sd(`${share.id}/`, { headers: { Range: "bytes=2-4" } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe("234");
    expect(await sql("SELECT accessed FROM shares WHERE id = ?", [share.id])).toEqual([[1]]);
    expect(head.headers.get("content-security-policy")).toBe("sandbox");
  });
});
