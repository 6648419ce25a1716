// S3's multipart uploads inside workerd (docs/decisions.md D22.9 to D22.14), driven by aws4fetch:
// on an S3 storage (s3rver: the storage's own UploadPart) and a WebDAV storage (webdav-server:
// staged parts), create, upload parts (in any order, one sent again), list parts and uploads,
// complete and read the object back byte for byte; the refusals (parts out of order, a wrong ETag,
// a small part before the last, an unknown or someone else's upload id, a key scoped elsewhere, a
// read-only key, abort then complete) with S3's codes, nothing left upstream after an abort, and the
// cron job's sweep dropping an upload left idle.
import { env } from "cloudflare:test";
import { openDatabase } from "../../db/client.ts";
import { databaseUrl } from "../../env.ts";
import { sweepUploads } from "../uploads/sweep.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bits } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { davAddition, s3Addition, s3PendingUploads, upstreamDav } from "../../../test/support/upstreams.ts";
import { call, makeUser, mountStorage, signIn } from "../../../test/support/workerd-client.ts";
import { ALL, codeOf, type Key, makeKey, s3, tags } from "./workerd-fixture.ts";

const ROOT = "s3-multipart";
const MIB = 1024 * 1024;

let owner: string;
/** The owner's key on /mp (buckets `s3` and `dav`), one on /mp/s3 only, a read-only one; another user's key. */
let key: Key;
let scoped: Key;
let readOnly: Key;
let stranger: Key;

/** `size` bytes that differ from one position to the next and from one `seed` to another. */
function bytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const hex = async (data: Uint8Array | ArrayBuffer) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", data))].map((b) => b.toString(16).padStart(2, "0")).join("");

async function create(signer: Key, path: string): Promise<string> {
  const reply = await s3(signer, `${path}?uploads`, { method: "POST" });
  const text = await reply.text();
  expect(reply.status, text).toBe(200);
  return tags(text, "UploadId")[0]!;
}

async function putPart(signer: Key, path: string, id: string, number: number, body: Uint8Array): Promise<string> {
  const reply = await s3(signer, `${path}?partNumber=${number}&uploadId=${id}`, { method: "PUT", body });
  expect(reply.status, await reply.clone().text()).toBe(200);
  return reply.headers.get("ETag")!;
}

const completeBody = (parts: [number, string][]) =>
  `<CompleteMultipartUpload>${parts.map(([n, etag]) => `<Part><PartNumber>${n}</PartNumber><ETag>${etag}</ETag></Part>`).join("")}</CompleteMultipartUpload>`;

const complete = (signer: Key, path: string, id: string, parts: [number, string][]) =>
  s3(signer, `${path}?uploadId=${id}`, { method: "POST", body: completeBody(parts) });

beforeAll(async () => {
  const admin = await signIn("s3-multipart");
  for (const folder of [`/${ROOT}`, `/${ROOT}/dav`]) await upstreamDav("MKCOL", folder);
  expect((await mountStorage(admin, "/mp/s3", "S3", { ...s3Addition(), root_folder_path: `/${ROOT}/s3` })).code).toBe(
    200,
  );
  expect((await mountStorage(admin, "/mp/dav", "WebDav", davAddition(`/${ROOT}/dav`))).code).toBe(200);
  await makeUser(admin, "mpuser", { "/": Bits.ALL & ~Bits.PATH_LIMIT });
  await makeUser(admin, "mpother", { "/": Bits.ALL & ~Bits.PATH_LIMIT });
  owner = await signIn("mpuser", "mpuser", "mpuser password");
  key = await makeKey(owner, { name: "mp", path: "/mp", permission: ALL });
  scoped = await makeKey(owner, { name: "mp s3 only", path: "/mp/s3", permission: ALL });
  readOnly = await makeKey(owner, { name: "mp read", path: "/mp", permission: Bits.SEE_HIDES });
  stranger = await makeKey(await signIn("mpother", "mpother", "mpother password"), {
    name: "other",
    path: "/mp",
    permission: ALL,
  });
});

afterAll(async () => {
  await sql("DELETE FROM storages WHERE mount_path IN ('/mp/s3', '/mp/dav')");
});

describe.each(["s3", "dav"])("multipart upload on the %s storage", (bucket) => {
  it("create, parts out of order and one sent again, ListParts, ListMultipartUploads, complete: the object byte for byte", async () => {
    const path = `/${bucket}/films/big.bin`;
    const parts = [bytes(5 * MIB, 1), bytes(5 * MIB + 3, 2), bytes(1234, 3)];
    const id = await create(key, path);
    expect(tags(await (await s3(key, `/${bucket}?uploads`)).text(), "Key")).toContain("films/big.bin");
    const etags: string[] = [];
    etags[2] = await putPart(key, path, id, 3, parts[2]!);
    // A part sent again replaces the first bytes under its number, as on S3.
    await putPart(key, path, id, 1, bytes(5 * MIB, 99));
    etags[0] = await putPart(key, path, id, 1, parts[0]!);
    etags[1] = await putPart(key, path, id, 2, parts[1]!);
    expect(etags[0]).toMatch(/^"[0-9a-f]{32}"$/);
    expect(etags[0]).toBe(`"${(await hex(parts[0]!)).slice(0, 32)}"`);

    const listed = await s3(key, `${path}?uploadId=${id}`);
    const text = await listed.text();
    expect(listed.status, text).toBe(200);
    expect(tags(text, "PartNumber")).toEqual(["1", "2", "3"]);
    expect(tags(text, "ETag")).toEqual(etags);
    expect(tags(text, "Size")).toEqual(parts.map((part) => String(part.length)));
    const page = await (await s3(key, `${path}?uploadId=${id}&max-parts=2`)).text();
    expect(tags(page, "PartNumber")).toEqual(["1", "2"]);
    expect(tags(page, "IsTruncated")).toEqual(["true"]);
    expect(tags(page, "NextPartNumberMarker")).toEqual(["2"]);
    expect(tags(await (await s3(key, `${path}?uploadId=${id}&part-number-marker=2`)).text(), "PartNumber")).toEqual([
      "3",
    ]);

    const done = await complete(key, path, id, [
      [1, etags[0]!],
      [2, etags[1]!],
      [3, etags[2]!],
    ]);
    const result = await done.text();
    expect(done.status, result).toBe(200);
    expect(tags(result, "Key")).toEqual(["films/big.bin"]);
    expect(tags(result, "Bucket")).toEqual([bucket]);
    const got = await s3(key, path);
    expect(got.status).toBe(200);
    const whole = new Uint8Array(await got.arrayBuffer());
    expect(whole.length).toBe(10 * MIB + 3 + 1234);
    expect(await hex(whole)).toBe(await hex(new Uint8Array(await new Blob(parts).arrayBuffer())));
    expect(tags(result, "ETag")[0]).toBe(got.headers.get("ETag"));
    // A range across the join of two parts.
    const range = await s3(key, path, { headers: { Range: `bytes=${5 * MIB - 2}-${5 * MIB + 1}` } });
    expect(range.status).toBe(206);
    expect(range.headers.get("Content-Range")).toBe(`bytes ${5 * MIB - 2}-${5 * MIB + 1}/${whole.length}`);
    expect([...new Uint8Array(await range.arrayBuffer())]).toEqual([
      ...parts[0]!.subarray(5 * MIB - 2),
      ...parts[1]!.subarray(0, 2),
    ]);
    // The upload is gone: its id is NoSuchUpload, it is listed no more, and nothing waits upstream.
    const again = await complete(key, path, id, [[1, etags[0]!]]);
    expect(again.status).toBe(404);
    expect(await codeOf(again)).toBe("NoSuchUpload");
    expect(tags(await (await s3(key, `/${bucket}?uploads`)).text(), "Key")).not.toContain("films/big.bin");
    if (bucket === "s3") expect(await s3PendingUploads(`${ROOT}/s3/films/big.bin`)).toEqual([]);
    else expect(await stagingFolders("films")).toEqual([]);
    expect((await s3(key, path, { method: "DELETE" })).status).toBe(204);
  }, 60_000);

  it("a single small part completes (the last part may be any size)", async () => {
    const path = `/${bucket}/one.txt`;
    const id = await create(key, path);
    const etag = await putPart(key, path, id, 1, new TextEncoder().encode("just one part"));
    expect((await complete(key, path, id, [[1, etag]])).status).toBe(200);
    expect(await (await s3(key, path)).text()).toBe("just one part");
    expect((await s3(key, path, { method: "DELETE" })).status).toBe(204);
  });

  it("refusals: order, a wrong ETag, a gap, a small part before the last, bad XML; the upload still completes after", async () => {
    const path = `/${bucket}/refused.bin`;
    const id = await create(key, path);
    const small = await putPart(key, path, id, 1, bytes(1000, 4));
    const second = await putPart(key, path, id, 2, bytes(1000, 5));
    const third = await putPart(key, path, id, 3, bytes(10, 6));
    const expectCode = async (reply: Response, status: number, code: string) => {
      expect(reply.status).toBe(status);
      expect(await codeOf(reply)).toBe(code);
    };
    await expectCode(
      await complete(key, path, id, [
        [2, second],
        [1, small],
      ]),
      400,
      "InvalidPartOrder",
    );
    await expectCode(await complete(key, path, id, [[1, '"0123456789abcdef0123456789abcdef"']]), 400, "InvalidPart");
    await expectCode(await complete(key, path, id, [[4, small]]), 400, "InvalidPart");
    await expectCode(
      await complete(key, path, id, [
        [1, small],
        [3, third],
      ]),
      400,
      "InvalidPart",
    );
    await expectCode(
      await complete(key, path, id, [
        [1, small],
        [2, second],
      ]),
      400,
      "EntityTooSmall",
    );
    await expectCode(
      await s3(key, `${path}?uploadId=${id}`, { method: "POST", body: "<Complete>" }),
      400,
      "MalformedXML",
    );
    await expectCode(
      await s3(key, `${path}?partNumber=10001&uploadId=${id}`, { method: "PUT", body: "x" }),
      400,
      "InvalidArgument",
    );
    // A body that is not the signed hash is refused, and the part is forgotten.
    const signedOther = await s3(key, `${path}?partNumber=4&uploadId=${id}`, {
      method: "PUT",
      body: "these bytes",
      headers: { "X-Amz-Content-Sha256": await hex(new TextEncoder().encode("other bytes")) },
    });
    await expectCode(signedOther, 400, "XAmzContentSHA256Mismatch");
    expect(tags(await (await s3(key, `${path}?uploadId=${id}`)).text(), "PartNumber")).toEqual(["1", "2", "3"]);
    // Nothing was joined: no object, and the upload is there still.
    expect((await s3(key, path, { method: "HEAD" })).status).toBe(404);
    const big = await putPart(key, path, id, 1, bytes(5 * MIB, 7));
    expect(
      (
        await complete(key, path, id, [
          [1, big],
          [2, second],
        ])
      ).status,
    ).toBe(200);
    expect((await s3(key, path, { method: "HEAD" })).headers.get("Content-Length")).toBe(String(5 * MIB + 1000));
    expect((await s3(key, path, { method: "DELETE" })).status).toBe(204);
  }, 60_000);

  it("abort drops the parts upstream; then complete, a part and ListParts are NoSuchUpload", async () => {
    const path = `/${bucket}/aborted/file.bin`;
    const id = await create(key, path);
    const etag = await putPart(key, path, id, 1, bytes(2000, 8));
    if (bucket === "s3") expect(await s3PendingUploads(`${ROOT}/s3/aborted/file.bin`)).toHaveLength(1);
    else expect(await stagingFolders("aborted")).toHaveLength(1);
    expect((await s3(key, `${path}?uploadId=${id}`, { method: "DELETE" })).status).toBe(204);
    if (bucket === "s3") expect(await s3PendingUploads(`${ROOT}/s3/aborted/file.bin`)).toEqual([]);
    else expect(await stagingFolders("aborted")).toEqual([]);
    for (const reply of [
      await complete(key, path, id, [[1, etag]]),
      await s3(key, `${path}?partNumber=2&uploadId=${id}`, { method: "PUT", body: "x" }),
      await s3(key, `${path}?uploadId=${id}`),
      await s3(key, `${path}?uploadId=${id}`, { method: "DELETE" }),
    ]) {
      expect(reply.status).toBe(404);
      expect(await codeOf(reply)).toBe("NoSuchUpload");
    }
    expect((await s3(key, path, { method: "HEAD" })).status).toBe(404);
  });
});

/** The staging folders (docs/decisions.md D12.3) in the WebDAV storage's folder `dir`. */
async function stagingFolders(dir: string): Promise<string[]> {
  const reply = await upstreamDav("PROPFIND", `/${ROOT}/dav/${dir}/`, { headers: { Depth: "1" } });
  if (reply.status === 404) return [];
  return [...(await reply.text()).matchAll(/\.gatehouse-upload-[0-9a-f]+/g)].map((m) => m[0]).filter(unique);
}
const unique = (value: string, at: number, all: string[]) => all.indexOf(value) === at;

describe("whose upload, and where", () => {
  it("another user's upload id, an unknown id, and an id for another key are NoSuchUpload", async () => {
    const path = "/s3/owned.bin";
    const id = await create(key, path);
    const etag = await putPart(key, path, id, 1, bytes(100, 9));
    for (const reply of [
      await s3(stranger, `${path}?uploadId=${id}`),
      await s3(stranger, `${path}?partNumber=1&uploadId=${id}`, { method: "PUT", body: "x" }),
      await complete(stranger, path, id, [[1, etag]]),
      await s3(stranger, `${path}?uploadId=${id}`, { method: "DELETE" }),
      await s3(key, `${path}?uploadId=no-such-id`),
      await s3(key, `/s3/other-name.bin?uploadId=${id}`),
    ]) {
      expect(reply.status).toBe(404);
      expect(await codeOf(reply)).toBe("NoSuchUpload");
    }
    // The stranger lists none of it; the owner's upload still completes.
    expect(tags(await (await s3(stranger, "/s3?uploads")).text(), "Key")).toEqual([]);
    expect((await complete(key, path, id, [[1, etag]])).status).toBe(200);
    expect((await s3(key, path, { method: "DELETE" })).status).toBe(204);
  });

  it("a key scoped to one folder reaches uploads only there; the same upload through it is its own key's path", async () => {
    // Through the key on /mp/s3, the bucket `films` is /mp/s3/films: the upload of /mp/dav is out of its reach.
    const id = await create(key, "/dav/far.bin");
    const outside = await s3(scoped, `/dav/far.bin?uploadId=${id}`);
    expect(outside.status).toBe(404);
    expect(await codeOf(outside)).toBe("NoSuchBucket");
    const created = await s3(scoped, "/dav/x.bin?uploads", { method: "POST" });
    expect(await codeOf(created)).toBe("NoSuchBucket");
    expect((await s3(key, `/dav/far.bin?uploadId=${id}`, { method: "DELETE" })).status).toBe(204);
    // An upload made through the scoped key is the same file as through the wider one.
    await s3(key, "/s3/inner/", { method: "PUT" });
    const inner = await create(scoped, "/inner/file.txt");
    const etag = await putPart(scoped, "/inner/file.txt", inner, 1, new TextEncoder().encode("inner"));
    expect(tags(await (await s3(key, "/s3?uploads&prefix=inner%2F")).text(), "Key")).toEqual(["inner/file.txt"]);
    expect((await complete(key, "/s3/inner/file.txt", inner, [[1, etag]])).status).toBe(200);
    expect(await (await s3(scoped, "/inner/file.txt")).text()).toBe("inner");
    expect((await s3(key, "/s3/inner/file.txt", { method: "DELETE" })).status).toBe(204);
  });

  it("a read-only key can neither create an upload nor send a part to another's", async () => {
    const refused = await s3(readOnly, "/s3/ro.bin?uploads", { method: "POST" });
    expect(refused.status).toBe(403);
    expect(await codeOf(refused)).toBe("AccessDenied");
    const id = await create(key, "/s3/ro.bin");
    const part = await s3(readOnly, `/s3/ro.bin?partNumber=1&uploadId=${id}`, { method: "PUT", body: "x" });
    expect(part.status).toBe(403);
    expect(await codeOf(part)).toBe("AccessDenied");
    expect((await s3(key, `/s3/ro.bin?uploadId=${id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("ListMultipartUploads: by key, with prefix, delimiter and pages; the chunk API does not see S3 uploads", async () => {
    const ids = [await create(key, "/dav/list/a.bin"), await create(key, "/dav/list/b.bin")];
    ids.push(await create(key, "/dav/list/deep/c.bin"));
    const all = await (await s3(key, "/dav?uploads&prefix=list%2F")).text();
    expect(tags(all, "Key")).toEqual(["list/a.bin", "list/b.bin", "list/deep/c.bin"]);
    const folded = await (await s3(key, "/dav?uploads&prefix=list%2F&delimiter=%2F")).text();
    expect(tags(folded, "Key")).toEqual(["list/a.bin", "list/b.bin"]);
    expect(tags(folded, "Prefix")).toEqual(["list/", "list/deep/"]);
    const first = await (await s3(key, "/dav?uploads&prefix=list%2F&max-uploads=1")).text();
    expect(tags(first, "Key")).toEqual(["list/a.bin"]);
    expect(tags(first, "IsTruncated")).toEqual(["true"]);
    const next = await (
      await s3(
        key,
        `/dav?uploads&prefix=list%2F&key-marker=${tags(first, "NextKeyMarker")[0]}&upload-id-marker=${tags(first, "NextUploadIdMarker")[0]}`,
      )
    ).text();
    expect(tags(next, "Key")).toEqual(["list/b.bin", "list/deep/c.bin"]);
    // The web UI's chunk API answers "not found" for an S3 upload's id.
    const status = await call(`/api/fs/multipart/status?upload_id=${ids[0]}`, { headers: { Authorization: owner } });
    expect(status.code).toBe(404);
    for (const [at, id] of ids.entries()) {
      const path = ["/dav/list/a.bin", "/dav/list/b.bin", "/dav/list/deep/c.bin"][at]!;
      expect((await s3(key, `${path}?uploadId=${id}`, { method: "DELETE" })).status).toBe(204);
    }
    expect(tags(await (await s3(key, "/dav?uploads&prefix=list%2F")).text(), "Key")).toEqual([]);
  });
});

describe("the search index", () => {
  it("a completed upload is in the index at once, as PutObject's file is", async () => {
    await sql("UPDATE settings SET value = 'database' WHERE key = 'search_index'");
    await sql("UPDATE settings SET value = 'true' WHERE key = 'auto_update_index'");
    await sql(
      `UPDATE settings SET value = '{"obj_count":0,"is_done":true,"last_done_time":"2026-01-01T00:00:00Z","error":""}' WHERE key = 'index_progress'`,
    );
    try {
      const id = await create(key, "/s3/indexed/found.bin");
      const etag = await putPart(key, "/s3/indexed/found.bin", id, 1, bytes(4321, 10));
      expect((await complete(key, "/s3/indexed/found.bin", id, [[1, etag]])).status).toBe(200);
      expect(await sql("SELECT path, size FROM search_nodes WHERE path = '/mp/s3/indexed/found.bin'")).toEqual([
        ["/mp/s3/indexed/found.bin", 4321],
      ]);
    } finally {
      await sql("UPDATE settings SET value = 'none' WHERE key = 'search_index'");
      await sql("UPDATE settings SET value = 'false' WHERE key = 'auto_update_index'");
      await sql("UPDATE settings SET value = '{}' WHERE key = 'index_progress'");
      await sql("DELETE FROM search_nodes WHERE path LIKE '/mp/%' OR path = '/mp'");
    }
  });
});

describe("the cron job", () => {
  it("aborts an S3 upload idle for a day, as it aborts the chunk API's: its parts dropped upstream, its id gone", async () => {
    const id = await create(key, "/s3/abandoned.bin");
    await putPart(key, "/s3/abandoned.bin", id, 1, bytes(3000, 11));
    expect(await s3PendingUploads(`${ROOT}/s3/abandoned.bin`)).toHaveLength(1);
    await sql("UPDATE upload_sessions SET last_active = last_active - 86401 WHERE id = ?", [id]);
    const { url, authToken } = databaseUrl(env);
    expect((await sweepUploads(openDatabase(url, authToken))).aborted).toBeGreaterThanOrEqual(1);
    expect(await s3PendingUploads(`${ROOT}/s3/abandoned.bin`)).toEqual([]);
    expect(await sql("SELECT id FROM upload_sessions WHERE id = ?", [id])).toEqual([]);
    const gone = await s3(key, `/s3/abandoned.bin?uploadId=${id}`);
    expect(await codeOf(gone)).toBe("NoSuchUpload");
  });
});
