// Archives inside workerd against s3rver and webdav-server: ZIPs made by Python's zipfile are put
// straight into the upstreams, then browsed (archive/meta, archive/list), streamed (/ae with Range)
// and extracted (archive/decompress) through Gatehouse, and the upstream is read back to see what
// landed. Every refusal a user meets is asserted as the envelope says it.
import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import {
  davAddition,
  davReadFaults,
  s3Addition,
  s3Keys,
  s3Object,
  s3Put,
  upstreamDav,
  upstreamRequests,
} from "../../../test/support/upstreams.ts";
import { apiAs, call as get, inTrips, member, mountStorage, signIn } from "../../../test/support/workerd-client.ts";

const fixtures = inject("zipFixtures");
const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
const zip = (name: string) => bytesOf(fixtures[name]!.base64);
const oracle = (name: string) => fixtures[name]!.oracle;
const content = (zipName: string, entry: string) =>
  bytesOf(oracle(zipName).entries.find((e) => e.name === entry)!.content!);

const READ_ARCHIVES = 1 << 12;
const DECOMPRESS = 1 << 13;
const WRITE = 1 << 3;

let admin: string;
const { post } = apiAs(() => admin);
const ae = (path: string, query: Record<string, string>, headers: Record<string, string> = {}) =>
  exports.default.fetch(
    `http://gatehouse.test/ae${path.split("/").map(encodeURIComponent).join("/")}?${new URLSearchParams(query)}`,
    { headers },
  );
const bytes = async (response: Response) => new Uint8Array(await response.arrayBuffer());
/** Compares whole buffers: vitest's deep equality walks big arrays byte by byte. */
const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);

const davPut = async (path: string, body: Uint8Array) =>
  expect((await upstreamDav("PUT", `/arch${path}`, { body })).status).toBeLessThan(300);

/** The files and folders of a meta tree, as `path size` lines. */
function flattenTree(items: any[], prefix = ""): string[] {
  return items.flatMap((item) => {
    const path = `${prefix}${item.name}`;
    return item.is_dir ? [`${path}/`, ...flattenTree(item.children, `${path}/`)] : [`${path} ${item.size}`];
  });
}

/** What a meta tree of the oracle's entries is: every file with its size, every folder (explicit or implied). */
function expectedTree(name: string): string[] {
  const lines = new Set<string>();
  for (const entry of oracle(name).entries) {
    const segments = entry.name.split("/").filter(Boolean);
    for (let i = 1; i < segments.length; i++) lines.add(`${segments.slice(0, i).join("/")}/`);
    lines.add(entry.dir ? `${segments.join("/")}/` : `${segments.join("/")} ${entry.size}`);
  }
  return [...lines].sort();
}

afterAll(async () => {
  await sql("UPDATE settings SET value = 'true' WHERE key = 'sign_all'");
});
beforeAll(async () => {
  admin = await signIn("archives");
  await sql("DELETE FROM storages");
  // Links unsigned unless a test asks for signs (the sign test turns sign_all on).
  await sql("UPDATE settings SET value = 'false' WHERE key = 'sign_all'");
  await upstreamDav("MKCOL", "/arch");
  await upstreamDav("MKCOL", "/arch/out");
  await upstreamDav("MKCOL", "/arch/pub");
  for (const name of Object.keys(fixtures)) {
    await s3Put(`arch/${name}`, zip(name));
    await davPut(`/${name}`, zip(name));
  }
  await s3Put("arch/pub/tree.zip", zip("tree.zip"));
  await s3Put("arch/other.rar", "not really");
  await s3Put("arch/out/keep", "");
  for (const [mountPath, driver, addition] of [
    ["/s3", "S3", { ...s3Addition(), root_folder_path: "/arch" }],
    ["/dav", "WebDav", davAddition("/arch")],
  ] as const) {
    const made = await mountStorage(admin, mountPath, driver, addition);
    expect(made.code, made.message).toBe(200);
  }
});

describe("browsing a zip", () => {
  it.each(["/s3", "/dav"])("%s: archive/meta gives the whole tree as Python's zipfile lists it", async (root) => {
    for (const name of ["tree.zip", "zip64.zip", "cp437.zip"]) {
      const meta = await post("/api/fs/archive/meta", { path: `${root}/${name}` });
      expect(meta.code, meta.message).toBe(200);
      expect(flattenTree(meta.data.content).sort()).toEqual(expectedTree(name));
      expect(meta.data).toMatchObject({
        comment: oracle(name).comment,
        encrypted: false,
        raw_url: `http://gatehouse.test/ae${root}/${name}`,
        sign: "",
        sort: { order_by: "", order_direction: "", extract_folder: "" },
      });
    }
    const readme = (await post("/api/fs/archive/meta", { path: `${root}/tree.zip` })).data.content[0];
    expect(readme).toEqual({
      id: "",
      path: "",
      name: "readme.txt",
      size: 26,
      is_dir: false,
      modified: "2024-05-06T07:08:10Z",
      created: "2024-05-06T07:08:10Z",
      sign: "",
      thumb: "",
      type: 4,
      hashinfo: "null",
      hash_info: null,
      children: null,
    });
  });

  it("costs one database round trip for meta, list, /ae and decompress alike", async () => {
    expect((await inTrips(1, () => post("/api/fs/archive/meta", { path: "/s3/tree.zip" }))).code).toBe(200);
    expect((await inTrips(1, () => post("/api/fs/archive/list", { path: "/dav/tree.zip" }))).code).toBe(200);
    const entry = await inTrips(1, async () => (await ae("/s3/tree.zip", { inner: "/readme.txt" })).text());
    expect(entry).toBe("hello from inside the zip\n");
    const body = { src_dir: "/s3", dst_dir: "/s3/out/trips", name: "cp437.zip" };
    expect((await inTrips(1, () => post("/api/fs/archive/decompress", body))).code).toBe(200);
  });

  it("archive/list shows one folder, implicit folders included, paged; a missing folder is object not found", async () => {
    const root = await post("/api/fs/archive/list", { path: "/s3/tree.zip", inner_path: "/" });
    expect(root.data.content.map((e: any) => e.name)).toEqual(["readme.txt", "docs", "deep", "données", "data"]);
    expect(root.data.total).toBe(5);
    const deep = await post("/api/fs/archive/list", { path: "/s3/tree.zip", inner_path: "/deep/er" });
    expect(deep.data.content).toMatchObject([{ name: "still", is_dir: true, type: 1 }]);
    const paged = await post("/api/fs/archive/list", { path: "/dav/tree.zip", inner_path: "/", page: 2, per_page: 2 });
    expect(paged.data).toMatchObject({ total: 5, content: [{ name: "deep" }, { name: "données" }] });
    const missing = await post("/api/fs/archive/list", { path: "/s3/tree.zip", inner_path: "/nope" });
    expect([missing.code, missing.message]).toEqual([500, "object not found"]);
  });

  it("says which archives it cannot open, and what is no zip, without server paths", async () => {
    expect(await get("/api/public/archive_extensions")).toMatchObject({ code: 200, data: [".zip"] });
    const rar = await post("/api/fs/archive/meta", { path: "/s3/other.rar" });
    expect([rar.code, rar.message]).toEqual([
      500,
      "other.rar: only .zip archives can be opened (rar, 7z, tar and compressed files are not supported)",
    ]);
    await s3Put("arch/fake.zip", "this is no zip");
    const fake = await post("/api/fs/archive/meta", { path: "/s3/fake.zip" });
    expect([fake.code, fake.message]).toEqual([500, "zip: not a valid zip file"]);
    const secret = await post("/api/fs/archive/meta", { path: "/dav/secret.zip" });
    expect(secret.data.encrypted).toBe(true);
  });
});

describe("/ae", () => {
  it.each(["/s3", "/dav"])("%s: streams entries byte-exact, whole and with Range", async (root) => {
    const readme = await ae(`${root}/tree.zip`, { inner: "/readme.txt" });
    expect(readme.status).toBe(200);
    expect(readme.headers.get("Content-Disposition")).toBe(
      `attachment; filename="readme.txt"; filename*=UTF-8''readme.txt`,
    );
    expect(await readme.text()).toBe("hello from inside the zip\n");
    // webdav-server 2.x cuts a ranged reply longer than its stream buffer (Get.js ends the response
    // when the file is read, before its RangedStream is drained): the big entry's read is taken up again.
    for (const entry of ["data/random.bin", "docs/stored.bin", "données/été.txt", "docs/guide.txt"]) {
      const expected = content("tree.zip", entry);
      const whole = await ae(`${root}/tree.zip`, { inner: `/${entry}` });
      expect(whole.headers.get("Content-Length")).toBe(String(expected.length));
      expect(same(await bytes(whole), expected), entry).toBe(true);
      const ranged = await ae(`${root}/tree.zip`, { inner: `/${entry}` }, { Range: "bytes=3-1002" });
      expect(ranged.status).toBe(206);
      expect(ranged.headers.get("Content-Range")).toBe(
        `bytes 3-${Math.min(1002, expected.length - 1)}/${expected.length}`,
      );
      expect(same(await bytes(ranged), expected.slice(3, 1003)), entry).toBe(true);
    }
    const tail = await ae(`${root}/tree.zip`, { inner: "/docs/guide.txt" }, { Range: "bytes=-10" });
    expect(same(await bytes(tail), content("tree.zip", "docs/guide.txt").slice(-10))).toBe(true);
    const past = await ae(`${root}/tree.zip`, { inner: "/readme.txt" }, { Range: "bytes=500-" });
    expect([past.status, past.headers.get("Content-Range")]).toEqual([416, "bytes */26"]);
  });

  it("opens ZipCrypto with pass; a wrong one, AES and a missing entry are refused", async () => {
    const secret = await ae("/s3/secret.zip", { inner: "/secret.txt", pass: "open sesame" });
    expect(same(await bytes(secret), content("secret.zip", "secret.txt"))).toBe(true);
    const wrong = await (await ae("/s3/secret.zip", { inner: "/secret.txt", pass: "nope" })).json();
    expect(wrong).toMatchObject({ code: 500, message: "wrong archive password" });
    const aes: any = await (await ae("/s3/aes.zip", { inner: "/aes.txt", pass: "x" })).json();
    expect(aes.message).toMatch(/AES-encrypted/);
    const missing = await (await ae("/s3/tree.zip", { inner: "/nope.txt" })).json();
    expect(missing).toMatchObject({ code: 500, message: "object not found" });
  });

  it("needs the archive sign when /d would need one; a /d sign does not open /ae", async () => {
    await sql("UPDATE settings SET value = 'true' WHERE key = 'sign_all'");
    try {
      const meta = await post("/api/fs/archive/meta", { path: "/s3/tree.zip" });
      expect(meta.data.sign).toMatch(/^[\w-]+=*:0$/);
      const unsigned = await (await ae("/s3/tree.zip", { inner: "/readme.txt" })).json();
      expect(unsigned).toMatchObject({ code: 401, message: "expire missing" });
      const signed = await ae("/s3/tree.zip", { inner: "/readme.txt", sign: meta.data.sign });
      expect(await signed.text()).toBe("hello from inside the zip\n");
      const fileSign = (await post("/api/fs/get", { path: "/s3/tree.zip" })).data.sign;
      const wrongKey = await (await ae("/s3/tree.zip", { inner: "/readme.txt", sign: fileSign })).json();
      expect(wrongKey).toMatchObject({ code: 401, message: "sign invalid" });
    } finally {
      await sql("UPDATE settings SET value = 'false' WHERE key = 'sign_all'");
    }
  });

  it("refuses an escaping archive and a bomb; a lying entry never gives more than it declares", async () => {
    const evil: any = await (await ae("/s3/evil.zip", { inner: "/fine.txt" })).json();
    expect(evil.message).toBe(
      'the archive holds an entry whose name leaves its folder ("../escape.txt"): the archive is refused',
    );
    expect((await post("/api/fs/archive/meta", { path: "/dav/backslash.zip" })).message).toMatch(/leaves its folder/);
    const bomb: any = await (await ae("/s3/bomb.zip", { inner: "/zeros.bin" })).json();
    expect(bomb.message).toMatch(/^the entry "zeros.bin" expands to 20971520 bytes, over 100 times/);
    const liar = await ae("/s3/liar.zip", { inner: "/liar.txt" });
    expect(liar.headers.get("Content-Length")).toBe("10");
    const received = await liar.arrayBuffer().then(
      (buffer) => buffer.byteLength,
      () => 0,
    );
    expect(received).toBeLessThanOrEqual(10);
  });
});

describe("archive/decompress", () => {
  it("extracts S3 into WebDAV byte-exact, into a new folder; the task says what it wrote, not the password", async () => {
    const reply = await post("/api/fs/archive/decompress", {
      src_dir: "/s3",
      dst_dir: "/dav/out",
      name: ["tree.zip"],
      archive_pass: "",
      inner_path: "/",
      cache_full: false,
      put_into_new_dir: true,
      overwrite: true,
    });
    expect(reply.code, reply.message).toBe(200);
    expect(reply.data.task).toMatchObject([
      { state: 2, progress: 100, error: "", name: "decompress [/s3/tree.zip](/) to [/dav/out]" },
    ]);
    for (const entry of oracle("tree.zip").entries.filter((e) => !e.dir)) {
      const upstream = await upstreamDav("GET", `/arch/out/tree/${entry.name}`);
      expect(upstream.status, entry.name).toBe(200);
      expect(same(await bytes(upstream), bytesOf(entry.content!)), entry.name).toBe(true);
    }
  });

  it("extracts one folder of a WebDAV zip into S3, and ZipCrypto with its password", async () => {
    const folder = await post("/api/fs/archive/decompress", {
      src_dir: "/dav",
      dst_dir: "/s3/out",
      name: "tree.zip",
      inner_path: "/docs",
    });
    expect(folder.code, folder.message).toBe(200);
    // `keep` is the S3 storage's folder placeholder.
    expect((await s3Keys("arch/out/docs/")).sort()).toEqual([
      "arch/out/docs/guide.txt",
      "arch/out/docs/keep",
      "arch/out/docs/stored.bin",
    ]);
    const guide = await s3Object("arch/out/docs/guide.txt");
    expect(same(await bytes(guide), content("tree.zip", "docs/guide.txt"))).toBe(true);
    const secret = await post("/api/fs/archive/decompress", {
      src_dir: "/dav",
      dst_dir: "/s3/out",
      name: "secret.zip",
      archive_pass: "open sesame",
    });
    expect(secret.code, secret.message).toBe(200);
    expect(same(await bytes(await s3Object("arch/out/secret.txt")), content("secret.zip", "secret.txt"))).toBe(true);
  });

  it("refuses escaping names, bombs and liars, leaving nothing behind", async () => {
    for (const [name, message] of [
      ["evil.zip", /leaves its folder/],
      ["bomb.zip", /zip bomb/],
      ["liar.zip", /more than the 10 bytes/],
    ] as const) {
      const reply = await post("/api/fs/archive/decompress", { src_dir: "/s3", dst_dir: "/s3/out/refused", name });
      expect(reply.code, name).toBe(500);
      expect(reply.message).toMatch(message);
    }
    expect(await s3Keys("arch/out/refused/")).toEqual([]);
    expect(await s3Keys("arch/escape.txt")).toEqual([]);
    // The liar is small, so it is checked whole before its write: S3 never saw it begin.
    expect((await upstreamRequests("s3")).filter((line) => line.includes("/refused/"))).toEqual([]);
  });
});

describe("who may", () => {
  it("a user without access to the archive's folder, or without its meta password, is refused", async () => {
    const token = await member(admin, "arch-outsider", { "/s3/pub": READ_ARCHIVES | DECOMPRESS | WRITE });
    expect(await post("/api/fs/archive/meta", { path: "/s3/pub/tree.zip" }, token)).toMatchObject({ code: 200 });
    for (const [route, body] of [
      ["/api/fs/archive/meta", { path: "/s3/tree.zip" }],
      ["/api/fs/archive/list", { path: "/dav/tree.zip" }],
      ["/api/fs/archive/decompress", { src_dir: "/s3", dst_dir: "/s3/pub", name: "tree.zip" }],
    ] as const) {
      expect(await post(route, body, token), route).toMatchObject({ code: 403, message: "permission denied" });
    }
    // Every archive bit, but a meta password on the folder and no skip-password bit.
    expect((await post("/api/admin/meta/create", { path: "/s3/pub", password: "pw", p_sub: true })).code).toBe(200);
    const guarded = await member(admin, "arch-guarded", { "/": READ_ARCHIVES | DECOMPRESS | WRITE });
    const denied = { code: 403, message: "password is incorrect or you have no permission" };
    expect(await post("/api/fs/archive/meta", { path: "/s3/pub/tree.zip" }, guarded)).toMatchObject(denied);
    expect(await post("/api/fs/archive/list", { path: "/s3/pub/tree.zip" }, guarded)).toMatchObject(denied);
    expect(
      await post("/api/fs/archive/decompress", { src_dir: "/s3/pub", dst_dir: "/s3/out", name: "tree.zip" }, guarded),
    ).toMatchObject(denied);
    const opened = await post("/api/fs/archive/meta", { path: "/s3/pub/tree.zip", password: "pw" }, guarded);
    expect(opened.code).toBe(200);
    // Its entries need the archive sign, as /d needs one there.
    expect(opened.data.sign).not.toBe("");
    const unsigned = await (await ae("/s3/pub/tree.zip", { inner: "/readme.txt" })).json();
    expect(unsigned).toMatchObject({ code: 401, message: "expire missing" });
    const signed = await ae("/s3/pub/tree.zip", { inner: "/readme.txt", sign: opened.data.sign });
    expect(await signed.text()).toBe("hello from inside the zip\n");
  });

  it("reading a zip needs the read-archives bit; decompress needs its bit and write at the destination", async () => {
    const noBit = await member(admin, "arch-nobit", { "/s3": WRITE });
    expect(await post("/api/fs/archive/meta", { path: "/s3/tree.zip" }, noBit)).toMatchObject({
      code: 403,
      message: "permission denied",
    });
    expect(
      await post("/api/fs/archive/decompress", { src_dir: "/s3", dst_dir: "/s3/out", name: "tree.zip" }, noBit),
    ).toMatchObject({ code: 403, message: "permission denied" });
    const noWrite = await member(admin, "arch-nowrite", { "/": READ_ARCHIVES | DECOMPRESS });
    const refused = await post(
      "/api/fs/archive/decompress",
      { src_dir: "/s3", dst_dir: "/dav/out", name: "tree.zip" },
      noWrite,
    );
    expect(refused).toMatchObject({ code: 403, message: "permission denied" });
  });
});

describe("limits", () => {
  const refusedEverywhere = async (root: string, name: string, message: string) => {
    const path = `${root}/${name}`;
    const meta = await post("/api/fs/archive/meta", { path });
    expect([meta.code, meta.message], `meta ${path}`).toEqual([500, message]);
    const list = await post("/api/fs/archive/list", { path, inner_path: "/" });
    expect([list.code, list.message], `list ${path}`).toEqual([500, message]);
    const entry: any = await (await ae(path, { inner: "/000.bin" })).json();
    expect([entry.code, entry.message], `/ae ${path}`).toEqual([500, message]);
    const out = `/s3/out/refused-${name}`;
    const decompress = await post("/api/fs/archive/decompress", { src_dir: root, dst_dir: out, name });
    expect([decompress.code, decompress.message], `decompress ${path}`).toEqual([500, message]);
  };

  it.each(["/s3", "/dav"])(
    "%s: an overlap bomb (entries sharing or quoting each other's data) is refused everywhere, writing nothing",
    async (root) => {
      // 11 KB, 190 entries of 1 MiB each on one kernel: each passes the ratio check, the whole is 190 MiB.
      expect(zip("overlap.zip").length).toBeLessThan(12_000);
      await refusedEverywhere(
        root,
        "overlap.zip",
        'the entries "000.bin" and "001.bin" share their data in the archive: refused as a zip bomb',
      );
      await refusedEverywhere(
        root,
        "quoted.zip",
        'the entries "q00.txt" and "q01.txt" share their data in the archive: refused as a zip bomb',
      );
      expect(await s3Keys("arch/out/refused-")).toEqual([]);
    },
  );

  it("an archive of more than 10,000 files and folders is refused everywhere; one of 10,000 is listed", async () => {
    const tooMany = "zip: the archive holds more than 10000 files and folders: too many to list or open here";
    await refusedEverywhere("/s3", "many.zip", tooMany);
    // One entry whose name implies 10,001 folders.
    await refusedEverywhere("/dav", "deep.zip", tooMany);
    const meta = await post("/api/fs/archive/meta", { path: "/s3/tenthousand.zip" });
    expect(meta.code, meta.message).toBe(200);
    expect(meta.data.content).toHaveLength(10_000);
    expect(meta.data.content[9_999]).toMatchObject({ name: "f09999.txt", size: 0, is_dir: false, children: null });
    const page = await post("/api/fs/archive/list", {
      path: "/dav/tenthousand.zip",
      inner_path: "/",
      page: 100,
      per_page: 100,
    });
    expect(page.code, page.message).toBe(200);
    expect(page.data.total).toBe(10_000);
    expect(page.data.content.map((item: any) => item.name)).toEqual(
      Array.from({ length: 100 }, (_, i) => `f${String(9_900 + i).padStart(5, "0")}.txt`),
    );
    const entry = await ae("/s3/tenthousand.zip", { inner: "/f05000.txt" });
    expect([entry.status, await entry.text()]).toEqual([200, ""]);
  });

  describe("a zip on a WebDAV storage whose reads break off", () => {
    const upstreamPath = "/arch/broken/tree.zip";
    beforeAll(async () => {
      await upstreamDav("MKCOL", "/arch/broken");
      await davPut("/broken/tree.zip", zip("tree.zip"));
    });
    afterAll(() => davReadFaults.clear(upstreamPath));

    it("is browsed, streamed and extracted byte-exact: each read broken off is taken up again", async () => {
      const size = zip("tree.zip").length;
      const tail = size - 65557;
      const seen = (await upstreamRequests("dav")).length;
      // The next three reads of the archive each stop after 1,000 bytes, the connection dropped.
      await davReadFaults.arm(upstreamPath, { after: 1000, count: 3 });
      const meta = await post("/api/fs/archive/meta", { path: "/dav/broken/tree.zip" });
      expect(meta.code, meta.message).toBe(200);
      expect(flattenTree(meta.data.content).sort()).toEqual(expectedTree("tree.zip"));
      // The tail's read, taken up again three times where it stopped.
      const reads = (await upstreamRequests("dav"))
        .slice(seen)
        .filter((line) => line.startsWith(`GET ${upstreamPath} `));
      expect(reads).toEqual(
        [0, 1000, 2000, 3000].map((from) => `GET ${upstreamPath} bytes=${tail + from}-${size - 1}`),
      );
      await davReadFaults.arm(upstreamPath, { after: 1000, count: 3 });
      const entry = await ae("/dav/broken/tree.zip", { inner: "/data/random.bin" });
      expect(same(await bytes(entry), content("tree.zip", "data/random.bin"))).toBe(true);
      await davReadFaults.arm(upstreamPath, { after: 1000, count: 5 });
      const reply = await post("/api/fs/archive/decompress", {
        src_dir: "/dav/broken",
        dst_dir: "/s3/out/broken",
        name: "tree.zip",
      });
      expect(reply.code, reply.message).toBe(200);
      for (const file of oracle("tree.zip").entries.filter((e) => !e.dir)) {
        const landed = await s3Object(`arch/out/broken/${file.name}`);
        expect(landed.status, file.name).toBe(200);
        expect(same(await bytes(landed), bytesOf(file.content!)), file.name).toBe(true);
      }
    });

    it("that fails for good answers the storage's failure on meta, list, /ae and decompress, not an internal error", async () => {
      const size = zip("tree.zip").length;
      const tail = size - 65557;
      // Every read gives its headers and no byte.
      await davReadFaults.arm(upstreamPath, { after: 0, count: -1 });
      try {
        const brokenOff = `the storage broke off a read of tree.zip at byte ${tail} of ${size}`;
        const path = "/dav/broken/tree.zip";
        expect(await post("/api/fs/archive/meta", { path })).toMatchObject({ code: 500, message: brokenOff });
        expect(await post("/api/fs/archive/list", { path })).toMatchObject({ code: 500, message: brokenOff });
        expect(await (await ae(path, { inner: "/readme.txt" })).json()).toMatchObject({
          code: 500,
          message: brokenOff,
        });
        const decompress = await post("/api/fs/archive/decompress", {
          src_dir: "/dav/broken",
          dst_dir: "/s3/out/failed",
          name: "tree.zip",
        });
        expect(decompress).toMatchObject({ code: 500, message: brokenOff });
        // One that keeps breaking off after 1,000 bytes is taken up again 8 times, then given up.
        await davReadFaults.arm(upstreamPath, { after: 1000, count: -1 });
        expect(await post("/api/fs/archive/meta", { path })).toMatchObject({
          code: 500,
          message: `the storage broke off a read of tree.zip at byte ${tail + 9000} of ${size}`,
        });
        // A storage that answers an error status is named by it.
        await davReadFaults.arm(upstreamPath, { status: 503, count: -1 });
        expect(await post("/api/fs/archive/meta", { path })).toMatchObject({
          code: 500,
          message: "the storage answered HTTP 503 to a read of tree.zip",
        });
        expect(await s3Keys("arch/out/failed/")).toEqual([]);
      } finally {
        await davReadFaults.clear(upstreamPath);
      }
    });
  });
});
