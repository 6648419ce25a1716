// ZIPs inside share links, inside workerd against s3rver: a signed-out visitor browses a shared ZIP
// (archive/meta, archive/list under /@s) and opens its entries at the link the web UI builds
// (/ae/<share id>/…) and at /sad, byte-exact, each entry a counted download of the share. Every
// guard of the share holds first (setting, code, expiry, downloads left, the creator's
// read-archives bit), and no path leads out of the share.
import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Addition, s3Put } from "../../../test/support/upstreams.ts";
import { call, callApi, makeUser, mountStorage, signIn } from "../../../test/support/workerd-client.ts";
import { SHARE } from "./rules.ts";

const fixtures = inject("zipFixtures");
const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
const zip = (name: string) => bytesOf(fixtures[name]!.base64);
const entryBytes = (zipName: string, entry: string) =>
  bytesOf(fixtures[zipName]!.oracle.entries.find((e) => e.name === entry)!.content!);
const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);

const READ_ARCHIVES = 1 << 12;

let admin: string;
let carol: string; // may share and read archives under /s3/pub
let dan: string; // may share under /s3/pub, not read archives

const anonymous = (path: string, body: unknown) =>
  call(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
const get = (path: string, init: RequestInit = {}) =>
  exports.default.fetch(new Request(`http://gatehouse.test${path}`, init));
const create = async (token: string, body: Record<string, unknown>) => {
  const made = await callApi(token, "/api/share/create", { expires: null, pwd: "", max_accessed: 0, ...body });
  expect(made.code, made.message).toBe(200);
  return made.data as { id: string };
};
const setPreview = async (on: boolean) => {
  const saved = await callApi(admin, "/api/admin/setting/save", [{ key: "share_archive_preview", value: String(on) }]);
  expect(saved.code, saved.message).toBe(200);
};
const accessed = async (id: string) => Number((await sql("SELECT accessed FROM shares WHERE id = ?", [id]))[0]![0]);
const readme = entryBytes("tree.zip", "readme.txt");

beforeAll(async () => {
  admin = await signIn("shares-archive-admin");
  await s3Put("sharch/pub/tree.zip", zip("tree.zip"));
  await s3Put("sharch/pub/plain.txt", "not a zip");
  await s3Put("sharch/private/tree.zip", zip("tree.zip"));
  await sql("DELETE FROM storages");
  const made = await mountStorage(admin, "/s3", "S3", { ...s3Addition(), root_folder_path: "/sharch" });
  expect(made.code, made.message).toBe(200);
  await makeUser(admin, "sharch-carol", { "/s3/pub": SHARE | READ_ARCHIVES });
  carol = await signIn("sharch-carol", "sharch-carol", "sharch-carol password");
  await makeUser(admin, "sharch-dan", { "/s3/pub": SHARE });
  dan = await signIn("sharch-dan", "sharch-dan", "sharch-dan password");
});

beforeEach(async () => {
  await sql("DELETE FROM shares");
  await sql("DELETE FROM login_failures");
  await setPreview(true);
});

afterAll(async () => {
  await setPreview(false);
});

describe("a ZIP inside a share", () => {
  it("lets a signed-out visitor browse it and open an entry byte-exact, at the web UI's /ae link and at /sad, each a counted download", async () => {
    const share = await create(carol, { files: ["/s3/pub"], pwd: "pw" });
    const meta = await anonymous("/api/fs/archive/meta", { path: `/@s/${share.id}/tree.zip`, password: "pw" });
    expect(meta.code, meta.message).toBe(200);
    const rootNames = new Set(
      fixtures["tree.zip"]!.oracle.entries.map((e) => e.name.split("/")[0]!).filter((name) => name !== ""),
    );
    expect(new Set(meta.data.content.map((item: { name: string }) => item.name))).toEqual(rootNames);
    expect(meta.data.sign).toBe("");
    // No code in the link it gives (the share's sign instead), and no real path.
    expect(meta.data.raw_url).toMatch(new RegExp(`/sad/${share.id}/tree\\.zip\\?sign=`));
    expect(JSON.stringify(meta)).not.toContain("/s3/pub");

    const list = await anonymous("/api/fs/archive/list", {
      path: `/@s/${share.id}/tree.zip`,
      password: "pw",
      inner_path: "/",
    });
    expect(list.code, list.message).toBe(200);
    expect(list.data.total).toBe(rootNames.size);
    expect(list.data.content.find((item: { name: string }) => item.name === "readme.txt")).toMatchObject({
      size: readme.length,
      is_dir: false,
      path: "",
    });
    expect(await accessed(share.id)).toBe(0);

    // What OpenList 4.2.6's UI builds: /ae + the page's folder minus /@s + the archive, ?pwd=<code>&inner=.
    const ui = await get(`/ae/${share.id}/tree.zip?pwd=pw&inner=/readme.txt`);
    expect(ui.status).toBe(200);
    expect(same(new Uint8Array(await ui.arrayBuffer()), readme)).toBe(true);
    const sad = await get(`/sad/${share.id}/tree.zip?inner=${encodeURIComponent("/readme.txt")}&pwd=pw`);
    expect(sad.status).toBe(200);
    expect(same(new Uint8Array(await sad.arrayBuffer()), readme)).toBe(true);
    const signed = await get(
      `${new URL(meta.data.raw_url).pathname}${new URL(meta.data.raw_url).search}&inner=/readme.txt`,
    );
    expect(signed.status).toBe(200);
    expect(await signed.text()).toBe(new TextDecoder().decode(readme));
    const ranged = await get(`/sad/${share.id}/tree.zip?inner=/readme.txt&pwd=pw`, { headers: { Range: "bytes=0-4" } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe(new TextDecoder().decode(readme.slice(0, 5)));
    expect((await get(`/sad/${share.id}/tree.zip?inner=/readme.txt&pwd=pw`, { method: "HEAD" })).status).toBe(200);
    expect(await accessed(share.id)).toBe(4);
  });

  it("is refused while share_archive_preview is off, and the setting is a public one the UI reads", async () => {
    const share = await create(carol, { files: ["/s3/pub"] });
    await setPreview(false);
    const settings = await call("/api/public/settings");
    expect(settings.data.share_archive_preview).toBe("false");
    const off = { code: 403, message: "sharing archives previewing is not allowed", data: null };
    expect(await anonymous("/api/fs/archive/meta", { path: `/@s/${share.id}/tree.zip` })).toEqual(off);
    expect(await anonymous("/api/fs/archive/list", { path: `/@s/${share.id}/tree.zip` })).toEqual(off);
    const sad = await get(`/sad/${share.id}/tree.zip?inner=/readme.txt`);
    expect([sad.status, await sad.text()]).toEqual([403, "sharing archives previewing is not allowed\n"]);
    expect((await get(`/ae/${share.id}/tree.zip?inner=/readme.txt`)).status).toBe(403);
    await setPreview(true);
    expect((await call("/api/public/settings")).data.share_archive_preview).toBe("true");
    expect(await accessed(share.id)).toBe(0);
  });

  it("holds the share's own guards: its code, its expiry, its downloads left", async () => {
    const coded = await create(carol, { files: ["/s3/pub"], pwd: "pw" });
    const wrong = await anonymous("/api/fs/archive/meta", { path: `/@s/${coded.id}/tree.zip`, password: "nope" });
    expect([wrong.code, wrong.message]).toEqual([403, "wrong share code"]);
    expect((await anonymous("/api/fs/archive/list", { path: `/@s/${coded.id}/tree.zip` })).code).toBe(403);
    expect((await get(`/ae/${coded.id}/tree.zip?inner=/readme.txt`)).status).toBe(403);
    expect((await get(`/sad/${coded.id}/tree.zip?inner=/readme.txt&pwd=nope`)).status).toBe(403);

    const expiring = await create(carol, { files: ["/s3/pub"] });
    await sql("UPDATE shares SET expires_ms = ? WHERE id = ?", [Date.now() - 1000, expiring.id]);
    const expired = { code: 500, message: "the share has expired or is no longer valid", data: null };
    expect(await anonymous("/api/fs/archive/meta", { path: `/@s/${expiring.id}/tree.zip` })).toEqual(expired);
    expect((await get(`/sad/${expiring.id}/tree.zip?inner=/readme.txt`)).status).toBe(410);
    expect((await get(`/ae/${expiring.id}/tree.zip?inner=/readme.txt`)).status).toBe(410);

    const once = await create(carol, { files: ["/s3/pub"], max_accessed: 1 });
    expect((await anonymous("/api/fs/archive/meta", { path: `/@s/${once.id}/tree.zip` })).code).toBe(200);
    expect((await get(`/ae/${once.id}/tree.zip?inner=/readme.txt`)).status).toBe(200);
    expect((await get(`/ae/${once.id}/tree.zip?inner=/readme.txt`)).status).toBe(410);
    expect((await get(`/sad/${once.id}/tree.zip?inner=/readme.txt`)).status).toBe(410);
    expect(await anonymous("/api/fs/archive/list", { path: `/@s/${once.id}/tree.zip` })).toEqual(expired);
    expect(await accessed(once.id)).toBe(1);
  });

  it("leads nowhere outside the share, and opens no more than its creator may", async () => {
    const share = await create(carol, { files: ["/s3/pub"] });
    const outside = { code: 404, message: "object not found", data: null };
    for (const path of [`/@s/${share.id}/../private/tree.zip`, `/@s/${share.id}/%2e%2e/private/tree.zip`])
      expect(await anonymous("/api/fs/archive/meta", { path })).toEqual(outside);
    expect((await get(`/sad/${share.id}/..%2Fprivate/tree.zip?inner=/readme.txt`)).status).toBe(404);
    expect((await get(`/sad/${share.id}/%2e%2e/private/tree.zip?inner=/readme.txt`)).status).toBe(404);
    // The URL parser resolves this one to /ae/private/tree.zip before Gatehouse sees it: the file side's refusal.
    const resolved = await get(`/ae/${share.id}/%2e%2e/private/tree.zip?inner=/readme.txt`);
    expect((await resolved.json<{ code: number }>()).code).not.toBe(200);
    expect((await get(`/sad/${share.id}/tree.zip?inner=/../../private/tree.zip`)).status).toBe(404);
    expect(await accessed(share.id)).toBe(0);

    const plain = await anonymous("/api/fs/archive/meta", { path: `/@s/${share.id}/plain.txt` });
    expect(plain.code).not.toBe(200);
    expect(plain.message).not.toContain("/s3");

    const withoutBit = await create(dan, { files: ["/s3/pub"] });
    const refused = await anonymous("/api/fs/archive/meta", { path: `/@s/${withoutBit.id}/tree.zip` });
    expect([refused.code, refused.message]).toEqual([
      403,
      "archives cannot be opened in this share: download the file instead",
    ]);
    expect((await get(`/ae/${withoutBit.id}/tree.zip?inner=/readme.txt`)).status).toBe(403);
  });

  it("leaves /ae of a path no share names, or a signed one, to the file side", async () => {
    const reply = await get("/ae/no-such-share/tree.zip?inner=/readme.txt");
    expect(reply.headers.get("Content-Type")).toContain("json");
    expect((await reply.json<{ code: number }>()).code).not.toBe(200);
    // The web UI never signs a share's entry link; a signed /ae link is a storage path's.
    const share = await create(carol, { files: ["/s3/pub"] });
    const signed = await get(`/ae/${share.id}/tree.zip?inner=/readme.txt&sign=anything`);
    expect(signed.headers.get("Content-Type")).toContain("json");
    expect((await signed.json<{ code: number }>()).code).not.toBe(200);
    expect(await accessed(share.id)).toBe(0);
  });
});
