// The file side on S3 inside workerd, against s3rver (with the SigV4-checking front) on 127.0.0.1:
// listings with paging, HeadObject lookups, /d as a 302 to a presigned URL made without an
// upstream call, /p with Range, and the errors an S3 upstream gives. Objects are written and read
// back straight against s3rver (test/support/upstreams.ts), not through Gatehouse.
import { exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { BUCKET, s3Addition, s3Keys, s3Put, s3Text } from "../../../test/support/upstreams.ts";
import { apiAs, signIn } from "../../../test/support/workerd-client.ts";

const servers = inject("storageServers");

let admin: string;
const { post } = apiAs(() => admin);
const mount = (mountPath: string, extra: Record<string, unknown> = {}) =>
  post("/api/admin/storage/create", {
    mount_path: mountPath,
    driver: "S3",
    addition: JSON.stringify({ ...s3Addition(), root_folder_path: "/fs", ...extra }),
  });

beforeAll(async () => {
  admin = await signIn("fs-s3");
  await s3Put("fs/readme.txt", "hello from s3\n");
  await s3Put("fs/docs/a b+é.txt", "0123456789abcdef");
  await s3Put("fs/docs/keep", "");
  await s3Put("fs/movie.mkv", "mkv");
  await s3Put("fs/movie.srt", "srt");
});
beforeEach(async () => {
  await sql("DELETE FROM storages");
});

describe("S3 reads", () => {
  it("lists a folder: prefixes as folders, objects as files with size and storage class, the placeholder hidden", async () => {
    expect((await mount("/s3")).code).toBe(200);
    const root = await post("/api/fs/list", { path: "/s3" });
    expect(root.code).toBe(200);
    expect(root.data.provider).toBe("S3");
    const byName = Object.fromEntries(root.data.content.map((e: any) => [e.name, e]));
    expect(Object.keys(byName).sort()).toEqual(["docs", "movie.mkv", "movie.srt", "readme.txt"]);
    expect(byName.docs).toMatchObject({ is_dir: true, size: 0, path: "/fs/docs", type: 1 });
    expect(byName["readme.txt"]).toMatchObject({
      is_dir: false,
      size: 14,
      path: "/fs/readme.txt",
      type: 4,
      storage_class: "STANDARD",
    });
    const docs = await post("/api/fs/list", { path: "/s3/docs" });
    expect(docs.data.content.map((e: any) => e.name)).toEqual(["a b+é.txt"]);
  });

  it("answers a missing folder, a file listed as a folder, and a wrong secret clearly", async () => {
    await mount("/s3");
    expect((await post("/api/fs/list", { path: "/s3/nope" })).message).toBe(
      "failed get objs: failed get dir: object not found",
    );
    expect((await post("/api/fs/list", { path: "/s3/readme.txt" })).message).toBe("failed get objs: not a folder");
    expect((await post("/api/fs/get", { path: "/s3/nope.txt" })).message).toBe("object not found");
    await mount("/wrong", { secret_access_key: "wrong-secret" });
    await sql("UPDATE storages SET status = 'work' WHERE mount_path = '/wrong'");
    const wrong = await post("/api/fs/list", { path: "/wrong" });
    expect(wrong.code).toBe(500);
    expect(wrong.message).toMatch(/^failed get objs: list objects: SignatureDoesNotMatch: /);
    expect(wrong.message).not.toContain("wrong-secret");
  });

  // Most of the time is the 2,500 PUTs into s3rver (its disk), not Gatehouse: about 4 s alone on a
  // 2-core machine, over the default 5 s when the whole workerd project runs.
  it("pages a folder of 2,500 objects fully", { timeout: 30_000 }, async () => {
    const names = Array.from({ length: 2500 }, (_, i) => `f${String(i).padStart(4, "0")}`);
    for (let i = 0; i < names.length; i += 100)
      await Promise.all(names.slice(i, i + 100).map((name) => s3Put(`many/${name}`, "x")));
    await post("/api/admin/storage/create", {
      mount_path: "/many",
      driver: "S3",
      addition: JSON.stringify({
        endpoint: servers.s3Endpoint,
        bucket: BUCKET,
        access_key_id: "GATEHOUSEKEY",
        secret_access_key: "gatehouse-secret-key",
        root_folder_path: "/many",
      }),
    });
    const listed = await post("/api/fs/list", { path: "/many", per_page: 500, page: 5 });
    expect(listed.data.total).toBe(2500);
    expect(listed.data.content.at(-1).name).toBe("f2499");
  });

  it("gets a file with a presigned raw_url and its related files; /d answers 302 to a URL s3rver serves", async () => {
    await mount("/s3");
    const got = await post("/api/fs/get", { path: "/s3/movie.mkv" });
    expect(got.data).toMatchObject({ name: "movie.mkv", size: 3, provider: "S3", type: 2 });
    expect(got.data.related.map((e: any) => e.name)).toEqual(["movie.srt"]);
    expect(got.data.raw_url).toMatch(/X-Amz-Signature=/);
    expect(await (await fetch(got.data.raw_url)).text()).toBe("mkv");

    const file = (await post("/api/fs/list", { path: "/s3/docs" })).data.content[0];
    const redirect = await exports.default.fetch(
      `http://gatehouse.test/d/s3/docs/${encodeURIComponent(file.name)}?sign=${file.sign}`,
      { redirect: "manual" },
    );
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get("location")!;
    expect(location).toContain("X-Amz-Expires=14400");
    expect(location).toContain("response-content-disposition=");
    const downloaded = await fetch(location);
    expect(await downloaded.text()).toBe("0123456789abcdef");
  });

  it("/d makes no upstream call: the presign is local, so it answers even with the endpoint down", async () => {
    await mount("/down", { endpoint: `http://127.0.0.1:${servers.deadPort}` });
    await sql("UPDATE storages SET status = 'work' WHERE mount_path = '/down'");
    const token = ((await sql("SELECT value FROM settings WHERE key = 'token'")) as [[string]])[0][0];
    const signed = await signFor(token, "/down/readme.txt");
    const redirect = await exports.default.fetch(`http://gatehouse.test/d/down/readme.txt?sign=${signed}`, {
      redirect: "manual",
    });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:${servers.deadPort}/gatehouse-bucket/fs/readme\\.txt\\?`),
    );
  });

  it("/p streams text files with Range passed to s3rver, and refuses to proxy what S3 redirects", async () => {
    await mount("/s3");
    const file = (await post("/api/fs/list", { path: "/s3/docs" })).data.content[0];
    const ranged = await exports.default.fetch(
      `http://gatehouse.test/p/s3/docs/${encodeURIComponent(file.name)}?sign=${file.sign}`,
      { headers: { Range: "bytes=4-7" } },
    );
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe("4567");
    const movie = (await post("/api/fs/get", { path: "/s3/movie.mkv" })).data;
    expect(
      await (await exports.default.fetch(`http://gatehouse.test/p/s3/movie.mkv?sign=${movie.sign}`)).json(),
    ).toEqual({ code: 403, message: "proxy not allowed", data: null });
  });
});

describe("S3 removals", () => {
  // A move between storages ends by removing its source folder, however many objects it holds.
  it("removes a folder of 1,500 objects a listing page at a time", { timeout: 30_000 }, async () => {
    const names = Array.from({ length: 1500 }, (_, i) => `w${String(i).padStart(4, "0")}`);
    for (let i = 0; i < names.length; i += 100)
      await Promise.all(names.slice(i, i + 100).map((name) => s3Put(`fs/wide/${name}`, "x")));
    await s3Put("fs/wide-kept.txt", "kept");
    await mount("/s3");
    expect(await post("/api/fs/remove", { dir: "/s3", names: ["wide"] })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await s3Keys("fs/wide/")).toEqual([]);
    expect(await s3Text("fs/wide-kept.txt")).toBe("kept");
  });
});

describe("S3 copies (CopyObject)", () => {
  // The copy source names the object in a header, URL-encoded: a name S3 would decode wrongly
  // from a raw or half-escaped header copies the wrong object or none.
  it("copies, moves and renames objects whose names hold spaces, %, + and non-ASCII", async () => {
    const name = "50% a+b é.txt";
    await s3Put(`fs/escaped/${name}`, "escaped body");
    await s3Put("fs/escaped/to/keep", "");
    await mount("/s3");
    expect(
      (await post("/api/fs/copy", { src_dir: "/s3/escaped", dst_dir: "/s3/escaped/to", names: [name] })).code,
    ).toBe(200);
    expect(await s3Text(`fs/escaped/to/${name}`)).toBe("escaped body");
    expect(await post("/api/fs/rename", { path: `/s3/escaped/to/${name}`, name: "ü + 100%.txt" })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect([await s3Text(`fs/escaped/to/${name}`), await s3Text("fs/escaped/to/ü + 100%.txt")]).toEqual([
      null,
      "escaped body",
    ]);
    expect(
      (
        await post("/api/fs/move", {
          src_dir: "/s3/escaped",
          dst_dir: "/s3/escaped/to",
          names: [name],
          overwrite: true,
        })
      ).code,
    ).toBe(200);
    expect([await s3Text(`fs/escaped/${name}`), await s3Text(`fs/escaped/to/${name}`)]).toEqual([null, "escaped body"]);
  });
});

/** A sign as AList makes it (AList v3.58.0 pkg/sign/hmac.go:17-26), made here with WebCrypto. */
async function signFor(token: string, path: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(token),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${path}:0`)));
  return `${btoa(String.fromCharCode(...mac))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")}:0`;
}
