// What decompress may write, inside workerd against s3rver: every folder an extraction writes into
// is held to fs/put's checks (meta passwords with the request's password, hide rules, write), all
// decided before the first write (docs/decisions.md D13.6); and the archive refusals that must leave
// nothing behind (absolute names, the cap of one request, a wrong CRC-32: D13.4, D13.5). A non-admin
// user decompresses; what landed is read back from s3rver itself, not only from the envelope.
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Addition, s3Keys, s3Put, s3Text, upstreamRequests } from "../../../test/support/upstreams.ts";
import { apiAs, type Envelope, member, mountStorage, signIn } from "../../../test/support/workerd-client.ts";

const fixtures = inject("zipFixtures");
const zip = (name: string) => Uint8Array.from(atob(fixtures[name]!.base64), (char) => char.charCodeAt(0));

const DECOMPRESS = 1 << 13;
const WRITE = 1 << 3;
const READ_ARCHIVES = 1 << 12;

let admin: string;
/** May decompress anything under /g and write anywhere there, but has no skip-password or see-hides bit. */
let writer: string;
/** May decompress under /g, and write nowhere but where a meta's write grant says. */
let granted: string;

const { post } = apiAs(() => admin);
const decompress = (token: string, body: Record<string, unknown>) =>
  post("/api/fs/archive/decompress", { src_dir: "/g/arch", ...body }, token);
/** fs/put of `text` at `path` by `token`, as the web UI sends it. */
const put = async (token: string, path: string, text: string, password = ""): Promise<Envelope> =>
  (
    await exports.default.fetch(
      new Request("http://gatehouse.test/api/fs/put", {
        method: "PUT",
        headers: {
          Authorization: token,
          "File-Path": encodeURIComponent(path),
          "Content-Length": String(text.length),
          ...(password ? { Password: password } : {}),
        },
        body: text,
      }),
    )
  ).json();
const meta = async (path: string, fields: Record<string, unknown>) =>
  expect((await post("/api/admin/meta/create", { path, ...fields })).code).toBe(200);

/** A destination `guard/<dir>` holding one file, `locked/x.txt`, before anything is extracted there. */
async function destination(dir: string) {
  await s3Put(`guard/${dir}/locked/x.txt`, "original\n");
  return `/g/${dir}`;
}
/** What s3rver holds under `guard/<dir>/`. */
const stored = (dir: string) => s3Keys(`guard/${dir}/`);

beforeAll(async () => {
  admin = await signIn("archive-guards");
  await sql("DELETE FROM storages");
  for (const name of ["planted.zip", "cp437.zip", "absolute.zip", "drive.zip", "badcrc.zip"])
    await s3Put(`guard/arch/${name}`, zip(name));
  for (const copy of ["many-a.zip", "many-b.zip"]) await s3Put(`guard/arch/${copy}`, zip("half-cap.zip"));
  const made = await mountStorage(admin, "/g", "S3", { ...s3Addition(), root_folder_path: "/guard" });
  expect(made.code, made.message).toBe(200);
  writer = await member(admin, "guard-writer", { "/g": DECOMPRESS | WRITE | READ_ARCHIVES });
  granted = await member(admin, "guard-granted", { "/g": DECOMPRESS });
});

describe("decompress writes only where fs/put may write (D13.6)", () => {
  it("a folder below the destination under a meta password refuses the whole extraction, as fs/put does: nothing written", async () => {
    const dst = await destination("pw");
    await meta(`${dst}/locked`, { password: "pw", p_sub: true });
    const refused = await put(writer, `${dst}/locked/x.txt`, "mine\n");
    expect(refused).toEqual({ code: 403, message: "password is incorrect or you have no permission", data: null });
    for (const body of [
      { dst_dir: dst, name: "planted.zip" },
      { dst_dir: dst, name: "planted.zip", inner_path: "/locked" },
      { dst_dir: dst, name: "planted.zip", put_into_new_dir: false, password: "wrong" },
      // The first archive is harmless: it is not extracted either, as the second one is refused.
      { dst_dir: dst, name: ["cp437.zip", "planted.zip"] },
    ])
      expect(await decompress(writer, body), JSON.stringify(body)).toEqual(refused);
    expect(await s3Text(`guard/pw/locked/x.txt`)).toBe("original\n");
    expect(await stored("pw")).toEqual(["guard/pw/locked/x.txt"]);
  });

  it("with the folder's password it extracts there, as fs/put then writes there", async () => {
    const dst = await destination("open");
    await meta(`${dst}/locked`, { password: "pw", p_sub: true });
    expect(await put(writer, `${dst}/locked/put.txt`, "put\n", "pw")).toMatchObject({ code: 200 });
    const reply = await decompress(writer, { dst_dir: dst, name: "planted.zip", password: "pw" });
    expect(reply.code, reply.message).toBe(200);
    expect(await s3Text("guard/open/locked/x.txt")).toBe("planted over\n");
    expect((await stored("open")).sort()).toEqual([
      "guard/open/locked/new.txt",
      "guard/open/locked/put.txt",
      "guard/open/locked/x.txt",
      "guard/open/top.txt",
    ]);
    // The same password opens the archives' own folder, as for archive/meta.
    await s3Put("guard/vault/cp437.zip", zip("cp437.zip"));
    await meta("/g/vault", { password: "pw", p_sub: true });
    const fromVault = { src_dir: "/g/vault", dst_dir: dst, name: "cp437.zip" };
    expect(await decompress(writer, fromVault)).toMatchObject({ code: 403 });
    expect(await decompress(writer, { ...fromVault, password: "pw" })).toMatchObject({ code: 200 });
    expect(await s3Text("guard/open/café.txt")).toBe("cp437\n");
  });

  it("a hidden folder below the destination is refused as fs/put refuses it: nothing written", async () => {
    const dst = await destination("hidden");
    await meta(dst, { hide: "^locked$", h_sub: false });
    const refused = await put(writer, `${dst}/locked/x.txt`, "mine\n");
    expect(refused).toEqual({ code: 403, message: "password is incorrect or you have no permission", data: null });
    for (const inner_path of ["/", "/locked"])
      expect(await decompress(writer, { dst_dir: dst, name: "planted.zip", inner_path }), inner_path).toEqual(refused);
    expect(await stored("hidden")).toEqual(["guard/hidden/locked/x.txt"]);
  });

  it("a folder below the destination where the user may not write is refused as fs/put refuses it: nothing written", async () => {
    const dst = await destination("grant");
    // A write grant for the destination itself only (no w_sub): not for the folders below it.
    await meta(dst, { write: true, w_sub: false });
    const refused = await put(granted, `${dst}/locked/x.txt`, "mine\n");
    expect(refused).toEqual({ code: 403, message: "permission denied", data: null });
    for (const inner_path of ["/", "/locked"])
      expect(await decompress(granted, { dst_dir: dst, name: "planted.zip", inner_path }), inner_path).toEqual(refused);
    expect(await stored("grant")).toEqual(["guard/grant/locked/x.txt"]);
    // The grant holds at the destination itself: a file there is extracted, as it is put.
    const one = await decompress(granted, { dst_dir: dst, name: "planted.zip", inner_path: "/top.txt" });
    expect(one.code, one.message).toBe(200);
    expect(await s3Text("guard/grant/top.txt")).toBe("top\n");
  });
});

describe("archive refusals that leave nothing behind", () => {
  it.each([
    ["absolute.zip", "/abs.txt"],
    ["drive.zip", "C:/x.txt"],
  ])(
    "an archive with an absolute entry name (%s) is refused whole, for browsing as for extracting",
    async (name, entry) => {
      const message = `the archive holds an entry whose name leaves its folder (${JSON.stringify(entry)}): the archive is refused`;
      expect(await post("/api/fs/archive/meta", { path: `/g/arch/${name}` })).toMatchObject({ code: 500, message });
      const dir = `absolute-${name}`;
      expect(await decompress(admin, { dst_dir: `/g/${dir}`, name })).toMatchObject({ code: 500, message });
      // Not even the harmless entry before it.
      expect(await stored(dir)).toEqual([]);
    },
  );

  it("one decompress never writes more than its declared cap, its archives counted together", async () => {
    const one = await decompress(admin, { dst_dir: "/g/cap-one", name: "many-a.zip" });
    expect(one.code, one.message).toBe(200);
    expect(await stored("cap-one")).toHaveLength(101);
    const both = await decompress(admin, { dst_dir: "/g/cap-both", name: ["many-a.zip", "many-b.zip"] });
    expect([both.code, both.message]).toEqual([
      500,
      "extracting this would write more than 200 files and folders: over the limit of one request",
    ]);
    expect(await stored("cap-both")).toEqual([]);
  });

  it("an entry whose bytes do not match its CRC-32 is refused when read whole; decompress leaves nothing behind", async () => {
    const reply = await decompress(admin, { dst_dir: "/g/crc", name: "badcrc.zip" });
    expect([reply.code, reply.message]).toEqual([500, "the entry's checksum does not match: the archive is damaged"]);
    expect(await stored("crc")).toEqual([]);
    // The entry is small, so it is checked whole before its write: s3rver never saw one begin.
    expect((await upstreamRequests("s3")).filter((line) => line.includes("/guard/crc/"))).toEqual([]);
    // A range of it is not read whole, so no CRC is known: it is served (docs/files.md, Archives).
    const { sign } = (await post("/api/fs/archive/meta", { path: "/g/arch/badcrc.zip" })).data;
    const query = new URLSearchParams({ inner: "/crc.txt", sign });
    const ranged = await exports.default.fetch(`http://gatehouse.test/ae/g/arch/badcrc.zip?${query}`, {
      headers: { Range: "bytes=0-6" },
    });
    expect([ranged.status, await ranged.text()]).toEqual([206, "checked"]);
  });
});
