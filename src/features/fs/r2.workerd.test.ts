// The file side on R2 through the Worker's binding inside workerd (miniflare's R2, bound by
// wrangler.toml's [[r2_buckets]] as in `npm start`): listings with paging, lookups, /d and /p served
// here with Range and conditional requests, every write seen in the bucket itself (read with the
// binding, not through Gatehouse), a 64 MiB upload in R2's multipart upload back byte-exact, the
// upload-in-parts interface, permissions, and a storage naming a binding the Worker lacks.
import { env, exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useBindings } from "../../drivers/bindings.ts";
import { partSizeFor, R2_PART_BYTES, r2Files } from "../../drivers/r2.ts";
import { readAddition } from "../../drivers/addition.ts";
import { findDriver } from "../../drivers/index.ts";
import type { StorageFs } from "../../drivers/types.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { DEFAULT_STORAGE } from "../../db/seed.ts";
import {
  apiAs,
  call as callPath,
  type Envelope,
  inTrips,
  member,
  signIn,
} from "../../../test/support/workerd-client.ts";

const bucket = env.BUCKET!;
let admin: string;
const { post } = apiAs(() => admin);
const mount = (mountPath: string, addition: Record<string, unknown> = {}) =>
  post("/api/admin/storage/create", {
    mount_path: mountPath,
    driver: "R2 Binding",
    addition: JSON.stringify({ root_folder_path: "/fs", ...addition }),
  });
const upload = async (path: string, body: BodyInit, size: number, token = admin): Promise<Envelope> =>
  (
    await exports.default.fetch(
      new Request("http://gatehouse.test/api/fs/put", {
        method: "PUT",
        headers: { Authorization: token, "File-Path": encodeURIComponent(path), "Content-Length": String(size) },
        body,
      }),
    )
  ).json();
const stored = async (key: string) => (await bucket.get(key))?.text() ?? null;
const keysUnder = async (prefix: string) => (await bucket.list({ prefix })).objects.map((o) => o.key).sort();
const download = (path: string, sign: string, headers: Record<string, string> = {}, kind = "d") =>
  exports.default.fetch(`http://gatehouse.test/${kind}${path}?sign=${sign}`, { headers });

/** A body of `size` bytes made as it is read (byte i is i mod 251): nothing holds it whole. */
function generated(size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = new Uint8Array(Math.min(1 << 20, size - sent)).map((_, i) => (sent + i) % 251);
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

async function sha256(stream: ReadableStream<Uint8Array>): Promise<string> {
  const digest = new crypto.DigestStream("SHA-256");
  await stream.pipeTo(digest);
  return [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

beforeAll(async () => {
  admin = await signIn("fs-r2");
  await bucket.put("fs/readme.txt", "hello from r2\n");
  await bucket.put("fs/docs/a b+é.txt", "0123456789abcdef");
  await bucket.put("fs/docs/.alist", "");
  await bucket.put("fs/empty/.alist", "");
  await bucket.put("fs/movie.mkv", "mkv");
  await bucket.put("fs/movie.srt", "srt");
});
beforeEach(async () => {
  await sql("DELETE FROM storages");
});

describe("R2 reads", () => {
  it("lists a folder: prefixes as folders, objects as files, the placeholder hidden", async () => {
    expect((await mount("/r2")).code).toBe(200);
    const root = await post("/api/fs/list", { path: "/r2" });
    expect(root.code, root.message).toBe(200);
    expect(root.data.provider).toBe("R2 Binding");
    const byName = Object.fromEntries(root.data.content.map((e: any) => [e.name, e]));
    expect(Object.keys(byName).sort()).toEqual(["docs", "empty", "movie.mkv", "movie.srt", "readme.txt"]);
    expect(byName.docs).toMatchObject({ is_dir: true, size: 0, path: "/fs/docs", type: 1 });
    expect(byName["readme.txt"]).toMatchObject({ is_dir: false, size: 14, path: "/fs/readme.txt", type: 4 });
    expect((await post("/api/fs/list", { path: "/r2/docs" })).data.content.map((e: any) => e.name)).toEqual([
      "a b+é.txt",
    ]);
    expect((await post("/api/fs/list", { path: "/r2/empty" })).data).toMatchObject({ content: null, total: 0 });
  });

  it("answers a missing folder, a file listed as a folder and a missing file with AList's texts", async () => {
    await mount("/r2");
    expect((await post("/api/fs/list", { path: "/r2/nope" })).message).toBe(
      "failed get objs: failed get dir: object not found",
    );
    expect((await post("/api/fs/list", { path: "/r2/readme.txt" })).message).toBe("failed get objs: not a folder");
    expect((await post("/api/fs/get", { path: "/r2/nope.txt" })).message).toBe("object not found");
    expect((await post("/api/fs/get", { path: "/r2/docs" })).data).toMatchObject({ name: "docs", is_dir: true });
    // A root folder with nothing under it yet is an empty folder, not a missing one.
    await mount("/fresh", { root_folder_path: "/not-yet-written" });
    expect((await post("/api/fs/list", { path: "/fresh" })).data).toMatchObject({ content: null, total: 0 });
  });

  // About 8 s are the 1,001 puts into miniflare's R2, not Gatehouse.
  it("pages a folder of 1,001 objects fully (R2 lists at most 1,000 a page), and removes it page by page", {
    timeout: 30_000,
  }, async () => {
    const names = Array.from({ length: 1001 }, (_, i) => `f${String(i).padStart(4, "0")}`);
    for (let i = 0; i < names.length; i += 100)
      await Promise.all(names.slice(i, i + 100).map((name) => bucket.put(`many/big/${name}`, "x")));
    await mount("/many", { root_folder_path: "/many" });
    const listed = await post("/api/fs/list", { path: "/many/big", per_page: 500, page: 3 });
    expect(listed.data.total).toBe(1001);
    expect(listed.data.content.map((e: any) => e.name)).toEqual(["f1000"]);
    expect((await post("/api/fs/remove", { dir: "/many", names: ["big"] })).code).toBe(200);
    expect(await keysUnder("many/")).toEqual([]);
  });

  it("serves /d and /p from the binding with Range, ETag, Last-Modified, If-None-Match → 304 and If-Range", async () => {
    await mount("/r2");
    const file = (await post("/api/fs/get", { path: "/r2/docs/a b+é.txt" })).data;
    expect(file).toMatchObject({ size: 16, provider: "R2 Binding" });
    const path = `/r2/docs/${encodeURIComponent("a b+é.txt")}`;
    for (const kind of ["d", "p"]) {
      const whole = await download(path, file.sign, {}, kind);
      expect([whole.status, await whole.text()], kind).toEqual([200, "0123456789abcdef"]);
      const etag = whole.headers.get("etag")!;
      expect(etag).toMatch(/^"[0-9a-f]+-10"$/);
      expect(new Date(whole.headers.get("last-modified")!).getTime()).toBeGreaterThan(0);
      const ranged = await download(path, file.sign, { Range: "bytes=4-7" }, kind);
      expect([ranged.status, ranged.headers.get("content-range"), await ranged.text()]).toEqual([
        206,
        "bytes 4-7/16",
        "4567",
      ]);
      const suffix = await download(path, file.sign, { Range: "bytes=-3" }, kind);
      expect(await suffix.text()).toBe("def");
      expect((await download(path, file.sign, { "If-None-Match": etag }, kind)).status).toBe(304);
      const stale = await download(path, file.sign, { Range: "bytes=0-1", "If-Range": '"other"' }, kind);
      expect([stale.status, await stale.text()]).toEqual([200, "0123456789abcdef"]);
      expect((await download(path, file.sign, { Range: "bytes=99-" }, kind)).status).toBe(416);
    }
    // R2 gives no URL to send a client to: /d never redirects.
    const direct = await exports.default.fetch(`http://gatehouse.test/d${path}?sign=${file.sign}`, {
      redirect: "manual",
    });
    expect(direct.status).toBe(200);
    await direct.body?.cancel();
  });
});

describe("R2 writes, each seen in the bucket", () => {
  it("uploads, makes folders, renames, moves, copies and removes files and folders", async () => {
    await mount("/r2", { root_folder_path: "/w" });
    expect(await upload("/r2/up/deep/a.txt", "first", 5)).toEqual({ code: 200, message: "success", data: null });
    expect(await stored("w/up/deep/a.txt")).toBe("first");
    expect((await upload("/r2/up/deep/a.txt", "second", 6)).code).toBe(200);
    expect(await stored("w/up/deep/a.txt")).toBe("second");
    expect((await post("/api/fs/mkdir", { path: "/r2/made/inner" })).code).toBe(200);
    expect(await keysUnder("w/made/")).toEqual(["w/made/.alist", "w/made/inner/.alist"]);
    expect((await post("/api/fs/list", { path: "/r2/made/inner" })).data.content).toBeNull();

    expect((await post("/api/fs/rename", { path: "/r2/up/deep/a.txt", name: "b é.txt" })).code).toBe(200);
    expect([await stored("w/up/deep/a.txt"), await stored("w/up/deep/b é.txt")]).toEqual([null, "second"]);
    expect((await post("/api/fs/copy", { src_dir: "/r2/up", dst_dir: "/r2/made", names: ["deep"] })).code).toBe(200);
    expect(await stored("w/made/deep/b é.txt")).toBe("second");
    expect((await post("/api/fs/move", { src_dir: "/r2/made", dst_dir: "/r2/up", names: ["inner"] })).code).toBe(200);
    // The upload made the folders on its way (fs layer), each with its placeholder.
    const moved = [
      "w/made/.alist",
      "w/made/deep/.alist",
      "w/made/deep/b é.txt",
      "w/up/.alist",
      "w/up/deep/.alist",
      "w/up/deep/b é.txt",
      "w/up/inner/.alist",
    ];
    expect(await keysUnder("w/")).toEqual(moved);
    expect((await post("/api/fs/rename", { path: "/r2/up", name: "renamed" })).code).toBe(200);
    expect(await keysUnder("w/")).toEqual(moved.map((key) => key.replace("w/up/", "w/renamed/")));
    expect((await post("/api/fs/remove", { dir: "/r2", names: ["renamed", "made", "never there"] })).code).toBe(200);
    expect(await keysUnder("w/")).toEqual([]);
  });

  it("a reader changes nothing: uploads, folders and removals need their bits", async () => {
    await mount("/r2", { root_folder_path: "/perm" });
    await bucket.put("perm/kept.txt", "kept");
    const reader = await member(admin, "r2-reader", { "/r2": 1 });
    expect((await post("/api/fs/list", { path: "/r2" }, reader)).data.content.map((e: any) => e.name)).toEqual([
      "kept.txt",
    ]);
    expect((await upload("/r2/theirs.txt", "x", 1, reader)).message).toBe("permission denied");
    expect((await post("/api/fs/mkdir", { path: "/r2/made" }, reader)).message).toBe("permission denied");
    expect((await post("/api/fs/remove", { dir: "/r2", names: ["kept.txt"] }, reader)).message).toBe(
      "permission denied",
    );
    expect(await keysUnder("perm/")).toEqual(["perm/kept.txt"]);
  });

  it("hides what a meta hides, and asks for a meta's password", async () => {
    await mount("/r2", { root_folder_path: "/meta" });
    await bucket.put("meta/open.txt", "open");
    await bucket.put("meta/secret.txt", "secret");
    await bucket.put("meta/locked/inside.txt", "inside");
    await sql("DELETE FROM metas");
    try {
      expect((await post("/api/admin/meta/create", { path: "/r2", hide: "secret" })).code).toBe(200);
      expect((await post("/api/admin/meta/create", { path: "/r2/locked", password: "pw" })).code).toBe(200);
      const user = await member(admin, "r2-meta", { "/": 0 });
      expect((await post("/api/fs/list", { path: "/r2" }, user)).data.content.map((e: any) => e.name)).toEqual([
        "locked",
        "open.txt",
      ]);
      expect((await post("/api/fs/list", { path: "/r2/locked" }, user)).code).toBe(403);
      expect(
        (await post("/api/fs/list", { path: "/r2/locked", password: "pw" }, user)).data.content.map((e: any) => e.name),
      ).toEqual(["inside.txt"]);
    } finally {
      await sql("DELETE FROM metas");
    }
  });
});

describe("big files in R2's multipart upload", () => {
  it("takes 64 MiB + 17 bytes through /api/fs/put in parts and gives it back byte-exact through /d, whole and ranged", {
    timeout: 60_000,
  }, async () => {
    const size = 64 * 1024 * 1024 + 17;
    expect(partSizeFor(size)).toBe(R2_PART_BYTES);
    await mount("/r2", { root_folder_path: "/big" });
    expect(await upload("/r2/big.bin", generated(size), size)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    const object = await bucket.head("big/big.bin");
    expect(object?.size).toBe(size);
    // A multipart object's ETag ends with its part count.
    expect(object?.etag).toMatch(/-5$/);

    const file = (await post("/api/fs/get", { path: "/r2/big.bin" })).data;
    const whole = await download("/r2/big.bin", file.sign);
    expect(whole.headers.get("content-length")).toBe(String(size));
    expect(await sha256(whole.body!)).toBe(await sha256(generated(size)));
    // Across the first part boundary, and the last bytes.
    const across = R2_PART_BYTES - 2;
    const ranged = await download("/r2/big.bin", file.sign, { Range: `bytes=${across}-${across + 4}` });
    expect([...new Uint8Array(await ranged.arrayBuffer())]).toEqual([0, 1, 2, 3, 4].map((i) => (across + i) % 251));
    const tail = await download("/r2/big.bin", file.sign, { Range: "bytes=-2" });
    expect([...new Uint8Array(await tail.arrayBuffer())]).toEqual([(size - 2) % 251, (size - 1) % 251]);

    expect((await post("/api/fs/remove", { dir: "/r2", names: ["big.bin"] })).code).toBe(200);
    expect(await keysUnder("big/")).toEqual([]);
  });

  it("copies a file of more than one part by streaming it through R2's multipart upload (R2 has no server-side copy)", {
    timeout: 30_000,
  }, async () => {
    const size = R2_PART_BYTES + 1;
    await bucket.put(
      "copy/one.bin",
      new Uint8Array(size).map((_, i) => i % 251),
    );
    await mount("/r2", { root_folder_path: "/copy" });
    expect((await post("/api/fs/copy", { src_dir: "/r2", dst_dir: "/r2/to", names: ["one.bin"] })).code).toBe(200);
    const copied = await bucket.get("copy/to/one.bin");
    expect([copied?.size, copied?.etag.endsWith("-2")]).toEqual([size, true]);
    const bytes = new Uint8Array(await copied!.arrayBuffer());
    expect([bytes[0], bytes[size - 2], bytes[size - 1]]).toEqual([0, (size - 2) % 251, (size - 1) % 251]);
    expect((await post("/api/fs/remove", { dir: "/r2", names: ["one.bin", "to"] })).code).toBe(200);
    expect(await keysUnder("copy/")).toEqual([]);
  });

  it("fails an upload that ends before its Content-Length, and leaves nothing under the name", async () => {
    await mount("/r2", { root_folder_path: "/cut" });
    const size = R2_PART_BYTES + 10;
    const short = generated(size - 5);
    const reply = await exports.default.fetch(
      new Request("http://gatehouse.test/api/fs/put", {
        method: "PUT",
        headers: {
          Authorization: admin,
          "File-Path": encodeURIComponent("/r2/cut.bin"),
          "Content-Length": String(size),
        },
        body: short,
      }),
    );
    expect((await reply.json<Envelope>()).code).toBe(500);
    expect(await keysUnder("cut/")).toEqual([]);
  });

  it("uploads in parts sent one at a time, each from a fresh backend (as another isolate would), and aborts", async () => {
    useBindings(env);
    const driver = findDriver("R2 Binding")!;
    const backend = () =>
      r2Files({
        id: 1,
        mountPath: "/r2",
        modified: new Date(),
        addition: readAddition(driver, JSON.stringify({ root_folder_path: "/parts" })),
        fs: {} as StorageFs,
      }).parts!;
    const partSize = backend().minPartBytes;
    expect(partSize).toBe(5 * 1024 * 1024);
    const upload = await backend().begin("/in", "joined.bin", "application/octet-stream");
    expect(await keysUnder("parts/")).toEqual([]);
    const tags = [
      await backend().putPart(upload, 0, partSize, generated(partSize)),
      await backend().putPart(upload, 1, 3, generated(3)),
    ];
    await backend().complete(upload, tags);
    const joined = new Uint8Array(await (await bucket.get("parts/in/joined.bin"))!.arrayBuffer());
    expect(joined.length).toBe(partSize + 3);
    expect([joined[partSize - 1], joined[partSize], joined[partSize + 2]]).toEqual([(partSize - 1) % 251, 0, 2]);

    const dropped = await backend().begin("/in", "dropped.bin", "");
    await backend().putPart(dropped, 0, 3, generated(3));
    await backend().abort(dropped);
    await expect(backend().complete(dropped, ["x"])).rejects.toThrow();
    expect(await keysUnder("parts/")).toEqual(["parts/in/joined.bin"]);
  });
});

describe("the storage a fresh npm start mounts", () => {
  it("shows status work in the storage list, checked the first time it is listed (the seed runs without bindings)", async () => {
    const seeded = [
      DEFAULT_STORAGE.mountPath,
      DEFAULT_STORAGE.driver,
      DEFAULT_STORAGE.addition,
      DEFAULT_STORAGE.remark,
    ];
    await sql("INSERT INTO storages (mount_path, driver, addition, remark, modified) VALUES (?, ?, ?, ?, ?)", [
      ...seeded,
      Date.now(),
    ]);
    // Another never-checked storage naming a binding the Worker lacks, and a disabled one, listed beside it.
    await sql("INSERT INTO storages (mount_path, driver, addition, modified) VALUES (?, ?, ?, ?)", [
      "/unbound",
      "R2 Binding",
      JSON.stringify({ binding: "NO_SUCH_BUCKET", root_folder_path: "/" }),
      Date.now(),
    ]);
    await sql(
      "INSERT INTO storages (mount_path, driver, addition, modified, disabled, status) VALUES (?, ?, ?, ?, 1, ?)",
      ["/off", "R2 Binding", "{}", Date.now(), "disabled"],
    );
    const list = () => callPath("/api/admin/storage/list", { headers: { Authorization: admin } });
    const listed = await list();
    expect(listed.code, listed.message).toBe(200);
    expect(listed.data.content.map((s: any) => [s.mount_path, s.status])).toEqual([
      ["/", "work"],
      ["/unbound", expect.stringMatching(/^not bound: this Worker has no R2 bucket binding named "NO_SUCH_BUCKET"/)],
      ["/off", "disabled"],
    ]);
    expect((await sql("SELECT status FROM storages WHERE mount_path = '/'"))[0]).toEqual(["work"]);
    // Checked once: the next list reads what is stored, in one round trip.
    expect((await inTrips(1, list)).data.content[0].status).toBe("work");
    const file = await post("/api/fs/get", { path: "/fs/readme.txt" });
    expect(file.code, file.message).toBe(200);
  });
});

describe("a binding the Worker does not have", () => {
  it("gives the storage a clear 'not bound' status, and file requests say so too", async () => {
    const status =
      'not bound: this Worker has no R2 bucket binding named "NO_SUCH_BUCKET" (add [[r2_buckets]] binding = "NO_SUCH_BUCKET" to wrangler.toml, or remove this storage; see docs/operations.md)';
    // AList's answer to a storage whose check failed: made, with the check's words as its status.
    expect(await mount("/nope", { binding: "NO_SUCH_BUCKET" })).toMatchObject({
      code: 500,
      message: `failed init storage but storage is already created: ${status}`,
    });
    expect((await sql("SELECT status FROM storages WHERE mount_path = '/nope'"))[0]![0]).toBe(status);
    expect((await post("/api/fs/list", { path: "/nope" })).message).toBe(`storage not init: ${status}`);
    // A row that was never checked (status "") is tried, and answers the same words.
    await sql("UPDATE storages SET status = '' WHERE mount_path = '/nope'");
    expect((await post("/api/fs/list", { path: "/nope" })).message).toBe(`failed get objs: ${status}`);
    // A binding that is not a bucket is not taken for one.
    await mount("/vars", { binding: "LOG_LEVEL" });
    expect((await sql("SELECT status FROM storages WHERE mount_path = '/vars'"))[0]![0]).toMatch(/^not bound: /);
  });
});
