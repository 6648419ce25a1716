// The S3 endpoint inside workerd (docs/decisions.md D22), driven by aws4fetch, an independent
// SigV4 implementation, as any S3 client signs: a key scoped to a folder on the S3 storage
// (s3rver) and one on the WebDAV storage (webdav-server) list their buckets and keys (delimiter,
// prefix, pages), write, read back byte for byte (with Range), and delete; copy (within a storage
// and across), delete in batches, make and remove buckets; wrong secrets, expired keys, keys
// without S3 use and read-only keys are refused with S3's codes; nothing outside a key's folder is
// seen. sigv4.workerd.test.ts has the signed chunks (aws-chunked) and presigned URLs.
import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bits } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Text, upstreamDavText } from "../../../test/support/upstreams.ts";
import { callApi, inTrips, signIn } from "../../../test/support/workerd-client.ts";
import { ALL, BASE, clientOf, codeOf, type Key, makeKey, ROOT, s3, setUpEndpoint, tags } from "./workerd-fixture.ts";

let owner: string;
let s3Key: Key;
let davKey: Key;
let readOnly: Key;
let rootKey: Key;

beforeAll(async () => {
  owner = await setUpEndpoint("s3-endpoint", "s3user");
  s3Key = await makeKey(owner, { name: "team", path: "/team", permission: ALL });
  davKey = await makeKey(owner, { name: "shared", path: "/shared", permission: ALL });
  readOnly = await makeKey(owner, { name: "read only", path: "/team", permission: Bits.SEE_HIDES });
  rootKey = await makeKey(owner, { name: "everything", path: "/", permission: ALL });
});

afterAll(async () => {
  await sql("DELETE FROM storages");
});

describe("listing", () => {
  it("ListBuckets answers the folders at the top of the key's folder, and nothing beside it", async () => {
    const reply = await s3(s3Key, "/");
    expect(reply.status).toBe(200);
    const xml = await reply.text();
    expect(tags(xml, "Name")).toEqual(["docs", "photos"]);
    expect(xml).not.toContain("secret.txt");
    expect(xml).not.toContain("other");
    expect(tags(await (await s3(davKey, "/")).text(), "Name")).toEqual(["box"]);
  });

  it("a GetObject costs two round trips: the key with its user, roles, metas and settings; then the storages under its folder", async () => {
    // The last use of the key is recorded at most once per 5 minutes (D16.4): a first request settles it.
    await s3(s3Key, "/docs/readme.txt");
    const reply = await inTrips(2, () => s3(s3Key, "/docs/readme.txt"));
    expect(await reply.text()).toBe("0123456789");
  });

  it("HeadBucket: 200 for a bucket, 404 NoSuchBucket for a file or a folder outside the scope", async () => {
    expect((await s3(s3Key, "/photos", { method: "HEAD" })).status).toBe(200);
    expect((await s3(s3Key, "/secret.txt", { method: "HEAD" })).status).toBe(404);
    const outside = await s3(s3Key, "/other/x.txt");
    expect(outside.status).toBe(404);
    expect(await codeOf(outside)).toBe("NoSuchBucket");
  });

  it("ListObjectsV2 with delimiter: files as Contents, folders as CommonPrefixes; with a prefix, below it", async () => {
    const xml = await (await s3(s3Key, "/photos?list-type=2&delimiter=%2F")).text();
    expect(tags(xml, "Key")).toEqual(["a.jpg"]);
    expect(tags(xml, "Prefix")).toEqual(["", "2024/"]);
    expect(tags(xml, "Size")).toEqual(["7"]);
    expect(tags(xml, "KeyCount")).toEqual(["2"]);
    const below = await (await s3(s3Key, "/photos?list-type=2&delimiter=%2F&prefix=2024%2F")).text();
    expect(tags(below, "Key")).toEqual(["2024/b.jpg", "2024/c.jpg"]);
  });

  it("ListObjectsV2 without delimiter walks every folder in key order, in pages", async () => {
    const first = await (await s3(s3Key, "/photos?list-type=2&max-keys=2")).text();
    expect(tags(first, "Key")).toEqual(["2024/b.jpg", "2024/c.jpg"]);
    expect(tags(first, "IsTruncated")).toEqual(["true"]);
    const token = tags(first, "NextContinuationToken")[0]!;
    const second = await (
      await s3(s3Key, `/photos?list-type=2&max-keys=2&continuation-token=${encodeURIComponent(token)}`)
    ).text();
    expect(tags(second, "Key")).toEqual(["a.jpg"]);
    expect(tags(second, "IsTruncated")).toEqual(["false"]);
    const after = await (await s3(s3Key, "/photos?list-type=2&start-after=2024%2Fb.jpg")).text();
    expect(tags(after, "Key")).toEqual(["2024/c.jpg", "a.jpg"]);
    const v1 = await (await s3(s3Key, "/photos?marker=2024%2Fc.jpg")).text();
    expect(tags(v1, "Key")).toEqual(["a.jpg"]);
  });
});

describe("objects", () => {
  it("GetObject and HeadObject give the bytes, the size and an ETag; Range gives 206; past the end 416 InvalidRange", async () => {
    const whole = await s3(s3Key, "/docs/readme.txt");
    expect(whole.status).toBe(200);
    expect(await whole.text()).toBe("0123456789");
    expect(whole.headers.get("ETag")).toMatch(/^".+"$/);
    const head = await s3(s3Key, "/docs/readme.txt", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("Content-Length")).toBe("10");
    expect(head.headers.get("ETag")).toBe(whole.headers.get("ETag"));
    const part = await s3(s3Key, "/docs/readme.txt", { headers: { Range: "bytes=2-5" } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe("2345");
    const beyond = await s3(s3Key, "/docs/readme.txt", { headers: { Range: "bytes=50-" } });
    expect(beyond.status).toBe(416);
    expect(await codeOf(beyond)).toBe("InvalidRange");
    const missing = await s3(s3Key, "/docs/nope.txt");
    expect(missing.status).toBe(404);
    expect(await codeOf(missing)).toBe("NoSuchKey");
  });

  it("PutObject stores the bytes on S3 (folders made on the way); GetObject reads them back byte-exact; DeleteObject removes them", async () => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 31 + 7) % 256);
    const put = await s3(s3Key, "/docs/new/deep/blob.bin", { method: "PUT", body: bytes });
    expect(put.status, await put.clone().text()).toBe(200);
    expect(put.headers.get("ETag")).toMatch(/^".+"$/);
    const back = new Uint8Array(await (await s3(s3Key, "/docs/new/deep/blob.bin")).arrayBuffer());
    expect(back).toEqual(bytes);
    expect(await s3Text(`${ROOT}/team/docs/new/deep/blob.bin`)).not.toBeNull();
    expect((await s3(s3Key, "/docs/new/deep/blob.bin", { method: "DELETE" })).status).toBe(204);
    expect(await s3Text(`${ROOT}/team/docs/new/deep/blob.bin`)).toBeNull();
    expect((await s3(s3Key, "/docs/new/deep/blob.bin", { method: "DELETE" })).status).toBe(204);
  });

  it("on the WebDAV storage: put, list, get, delete", async () => {
    const put = await s3(davKey, "/box/hello.txt", { method: "PUT", body: "hello over dav" });
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await upstreamDavText(`/${ROOT}/shared/box/hello.txt`)).toBe("hello over dav");
    const listed = await (await s3(davKey, "/box?list-type=2")).text();
    expect(tags(listed, "Key")).toEqual(["hello.txt", "note.txt"]);
    expect(await (await s3(davKey, "/box/note.txt")).text()).toBe("dav note");
    expect((await s3(davKey, "/box/hello.txt", { method: "DELETE" })).status).toBe(204);
    expect(await upstreamDavText(`/${ROOT}/shared/box/hello.txt`)).toBeNull();
  });

  it("a body whose SHA-256 is not the signed one is refused, and nothing is left", async () => {
    const hash = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode("original")))]
      .map((byte) => byte.toString(16).padStart(2, "0"))
      .join("");
    // The right hash passes: the same signing, the body it names.
    const honest = await s3(s3Key, "/docs/hashed.txt", {
      method: "PUT",
      body: "original",
      headers: { "X-Amz-Content-Sha256": hash },
    });
    expect(honest.status, await honest.clone().text()).toBe(200);
    expect(await s3Text(`${ROOT}/team/docs/hashed.txt`)).toBe("original");
    expect((await s3(s3Key, "/docs/hashed.txt", { method: "DELETE" })).status).toBe(204);
    const signed = await clientOf(s3Key).sign(`${BASE}/docs/tampered.txt`, {
      method: "PUT",
      body: "original",
      headers: { "X-Amz-Content-Sha256": hash },
    });
    const tampered = new Request(signed.url, { method: "PUT", headers: signed.headers, body: "tampered" });
    const reply = await exports.default.fetch(tampered);
    expect(reply.status).toBe(400);
    expect(await codeOf(reply)).toBe("XAmzContentSHA256Mismatch");
    expect(await s3Text(`${ROOT}/team/docs/tampered.txt`)).toBeNull();
  });
});

describe("copies and batch deletes", () => {
  it("CopyObject within one storage: the bytes at the target, CopyObjectResult with its ETag; a target there is replaced", async () => {
    const reply = await s3(s3Key, "/photos/copies/copy%20of%20readme.txt", {
      method: "PUT",
      headers: { "x-amz-copy-source": "docs/readme.txt" },
    });
    expect(reply.status, await reply.clone().text()).toBe(200);
    const xml = await reply.text();
    expect(xml).toContain("<CopyObjectResult");
    const etag = tags(xml, "ETag")[0]!.replace(/&quot;/g, '"');
    expect(tags(xml, "LastModified")[0]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await s3Text(`${ROOT}/team/photos/copies/copy of readme.txt`)).toBe("0123456789");
    const head = await s3(s3Key, "/photos/copies/copy%20of%20readme.txt", { method: "HEAD" });
    expect(head.headers.get("ETag")).toBe(etag);
    // Onto the same key again, from another (URL-encoded, with a leading slash) source: replaced.
    const again = await s3(s3Key, "/photos/copies/copy%20of%20readme.txt", {
      method: "PUT",
      headers: { "x-amz-copy-source": "/photos/2024%2Fb.jpg" },
    });
    expect(again.status, await again.clone().text()).toBe(200);
    expect(await s3Text(`${ROOT}/team/photos/copies/copy of readme.txt`)).toBe("photo b");
    expect(await s3Text(`${ROOT}/team/photos/2024/b.jpg`)).toBe("photo b");
    expect((await s3(s3Key, "/photos/copies/copy%20of%20readme.txt", { method: "DELETE" })).status).toBe(204);
  });

  it("CopyObject across storages streams the bytes from S3 to WebDAV", async () => {
    const reply = await s3(rootKey, "/shared/box/from-s3.txt", {
      method: "PUT",
      headers: { "x-amz-copy-source": "team/docs/readme.txt" },
    });
    expect(reply.status, await reply.clone().text()).toBe(200);
    expect(await upstreamDavText(`/${ROOT}/shared/box/from-s3.txt`)).toBe("0123456789");
    expect((await s3(rootKey, "/shared/box/from-s3.txt", { method: "DELETE" })).status).toBe(204);
  });

  it("CopyObject refused: no write at the target, a missing source, outside the key's folder, onto itself", async () => {
    const denied = await s3(readOnly, "/docs/copied.txt", {
      method: "PUT",
      headers: { "x-amz-copy-source": "docs/readme.txt" },
    });
    expect(denied.status).toBe(403);
    expect(await codeOf(denied)).toBe("AccessDenied");
    expect(await s3Text(`${ROOT}/team/docs/copied.txt`)).toBeNull();
    const missing = await s3(s3Key, "/docs/copied.txt", {
      method: "PUT",
      headers: { "x-amz-copy-source": "docs/no.txt" },
    });
    expect(missing.status).toBe(404);
    expect(await codeOf(missing)).toBe("NoSuchKey");
    // The key on /team has no bucket `other`: /other/x.txt is not a source it can name.
    const outside = await s3(s3Key, "/docs/copied.txt", {
      method: "PUT",
      headers: { "x-amz-copy-source": "other/x.txt" },
    });
    expect(outside.status).toBe(404);
    expect(await codeOf(outside)).toBe("NoSuchBucket");
    expect(await s3Text(`${ROOT}/team/docs/copied.txt`)).toBeNull();
    const itself = await s3(s3Key, "/docs/readme.txt", {
      method: "PUT",
      headers: { "x-amz-copy-source": "docs/readme.txt" },
    });
    expect(itself.status).toBe(400);
    expect(await codeOf(itself)).toBe("InvalidRequest");
  });

  const deleteBody = (keys: string[], quiet = false) =>
    `<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${quiet ? "<Quiet>true</Quiet>" : ""}${keys.map((key) => `<Object><Key>${key}</Key></Object>`).join("")}</Delete>`;

  it("DeleteObjects removes each key and lists it Deleted (a missing key too); Quiet lists none", async () => {
    for (const name of ["one.txt", "two.txt", "three.txt"])
      expect((await s3(s3Key, `/docs/batch/${name}`, { method: "PUT", body: name })).status).toBe(200);
    const reply = await s3(s3Key, "/docs?delete", {
      method: "POST",
      body: deleteBody(["batch/one.txt", "batch/two.txt", "batch/none.txt"]),
    });
    expect(reply.status, await reply.clone().text()).toBe(200);
    const xml = await reply.text();
    expect(tags(xml, "Key")).toEqual(["batch/one.txt", "batch/two.txt", "batch/none.txt"]);
    expect(xml).not.toContain("<Error>");
    expect(await s3Text(`${ROOT}/team/docs/batch/one.txt`)).toBeNull();
    expect(await s3Text(`${ROOT}/team/docs/batch/two.txt`)).toBeNull();
    const quiet = await s3(s3Key, "/docs?delete", { method: "POST", body: deleteBody(["batch/three.txt"], true) });
    expect(quiet.status).toBe(200);
    expect(tags(await quiet.text(), "Key")).toEqual([]);
    expect(await s3Text(`${ROOT}/team/docs/batch/three.txt`)).toBeNull();
  });

  it("DeleteObjects: a key refused is an Error row and stays; bad XML is MalformedXML; a body past the cap is refused", async () => {
    const reply = await s3(readOnly, "/docs?delete", { method: "POST", body: deleteBody(["readme.txt"], true) });
    expect(reply.status).toBe(200);
    const xml = await reply.text();
    expect(tags(xml, "Key")).toEqual(["readme.txt"]);
    expect(tags(xml, "Code")).toEqual(["AccessDenied"]);
    expect(await s3Text(`${ROOT}/team/docs/readme.txt`)).toBe("0123456789");
    const malformed = await s3(s3Key, "/docs?delete", { method: "POST", body: "<Delete><Object>" });
    expect(malformed.status).toBe(400);
    expect(await codeOf(malformed)).toBe("MalformedXML");
    const huge = await s3(s3Key, "/docs?delete", { method: "POST", body: "x".repeat(2 * 1024 * 1024 + 1) });
    expect(huge.status).toBe(400);
    expect(await codeOf(huge)).toBe("MaxMessageLengthExceeded");
  });
});

describe("buckets", () => {
  it("CreateBucket makes a folder at the top of the key's folder; DeleteBucket refuses it while not empty, then removes it", async () => {
    for (const key of [s3Key, davKey]) {
      const made = await s3(key, "/fresh", { method: "PUT" });
      expect(made.status, await made.clone().text()).toBe(200);
      expect(tags(await (await s3(key, "/")).text(), "Name")).toContain("fresh");
      // Made again: 200, as S3 answers a bucket's owner in us-east-1.
      expect((await s3(key, "/fresh", { method: "PUT" })).status).toBe(200);
      expect((await s3(key, "/fresh/inside.txt", { method: "PUT", body: "in" })).status).toBe(200);
      const full = await s3(key, "/fresh", { method: "DELETE" });
      expect(full.status).toBe(409);
      expect(await codeOf(full)).toBe("BucketNotEmpty");
      expect(await (await s3(key, "/fresh/inside.txt")).text()).toBe("in");
      expect((await s3(key, "/fresh/inside.txt", { method: "DELETE" })).status).toBe(204);
      const gone = await s3(key, "/fresh", { method: "DELETE" });
      expect(gone.status, await gone.clone().text()).toBe(204);
      expect(tags(await (await s3(key, "/")).text(), "Name")).not.toContain("fresh");
      expect((await s3(key, "/fresh", { method: "HEAD" })).status).toBe(404);
    }
    expect(await upstreamDavText(`/${ROOT}/shared/fresh/inside.txt`)).toBeNull();
  });

  it("CreateBucket without write or over a file is refused; DeleteBucket without remove too", async () => {
    const denied = await s3(readOnly, "/fresh", { method: "PUT" });
    expect(denied.status).toBe(403);
    expect(await codeOf(denied)).toBe("AccessDenied");
    expect(tags(await (await s3(s3Key, "/")).text(), "Name")).not.toContain("fresh");
    const overFile = await s3(s3Key, "/secret.txt", { method: "PUT" });
    expect(overFile.status).toBe(409);
    expect(await codeOf(overFile)).toBe("BucketAlreadyExists");
    expect((await s3(s3Key, "/empty", { method: "PUT" })).status).toBe(200);
    const keep = await s3(readOnly, "/empty", { method: "DELETE" });
    expect(keep.status).toBe(403);
    expect((await s3(s3Key, "/empty", { method: "HEAD" })).status).toBe(200);
    expect((await s3(s3Key, "/empty", { method: "DELETE" })).status).toBe(204);
    const missing = await s3(s3Key, "/empty", { method: "DELETE" });
    expect(missing.status).toBe(404);
    expect(await codeOf(missing)).toBe("NoSuchBucket");
  });
});

describe("refusals", () => {
  it("a wrong secret is SignatureDoesNotMatch, an unknown key id InvalidAccessKeyId", async () => {
    const wrong = await s3({ ...s3Key, secret_access_key: "x".repeat(40) }, "/");
    expect(wrong.status).toBe(403);
    expect(await codeOf(wrong)).toBe("SignatureDoesNotMatch");
    const unknown = await s3({ access_key_id: "GKNOSUCHKEY000000000", secret_access_key: "x".repeat(40) }, "/");
    expect(unknown.status).toBe(403);
    expect(await codeOf(unknown)).toBe("InvalidAccessKeyId");
    await sql("DELETE FROM login_failures");
  });

  it("wrong signatures count toward the address's lockout: then even the right one gets 503 SlowDown", async () => {
    const ip = { "CF-Connecting-IP": "203.0.113.77" };
    const wrong = { ...s3Key, secret_access_key: "y".repeat(40) };
    for (let i = 0; i < 5; i++) expect((await s3(wrong, "/", { headers: ip })).status).toBe(403);
    const locked = await s3(s3Key, "/", { headers: ip });
    expect(locked.status).toBe(503);
    expect(await codeOf(locked)).toBe("SlowDown");
    expect(locked.headers.get("Retry-After")).toBe("300");
    await sql("DELETE FROM login_failures");
    expect((await s3(s3Key, "/", { headers: ip })).status).toBe(200);
  });

  it("a request signed 20 minutes ago is RequestTimeTooSkewed", async () => {
    const then = new Date(Date.now() - 20 * 60 * 1000).toISOString().replace(/[:-]|\.\d{3}/g, "");
    const reply = await s3(s3Key, "/", { aws: { datetime: then } });
    expect(reply.status).toBe(403);
    expect(await codeOf(reply)).toBe("RequestTimeTooSkewed");
  });

  it("an expired key, a key without S3 use and a read-only key's PutObject are AccessDenied", async () => {
    const expiring = await makeKey(owner, {
      name: "expiring",
      path: "/team",
      usage: ["s3"],
      expires_at: Math.floor(Date.now() / 1000) + 60,
    });
    expect((await s3(expiring, "/")).status).toBe(200);
    await sql("UPDATE app_passwords SET expires_at = 1 WHERE id = ?", [expiring.id]);
    const expired = await s3(expiring, "/");
    expect(expired.status).toBe(403);
    expect(await codeOf(expired)).toBe("AccessDenied");

    const apiOnly = await makeKey(owner, { name: "api and s3", path: "/team", usage: ["s3"] });
    await sql(`UPDATE app_passwords SET usage = '["api"]' WHERE id = ?`, [apiOnly.id]);
    const notS3 = await s3(apiOnly, "/");
    expect(notS3.status).toBe(403);
    expect(await codeOf(notS3)).toBe("AccessDenied");

    const put = await s3(readOnly, "/docs/nope.txt", { method: "PUT", body: "no" });
    expect(put.status).toBe(403);
    expect(await codeOf(put)).toBe("AccessDenied");
    expect(await s3Text(`${ROOT}/team/docs/nope.txt`)).toBeNull();
    expect((await s3(readOnly, "/docs/readme.txt", { method: "DELETE" })).status).toBe(403);
    expect(await s3Text(`${ROOT}/team/docs/readme.txt`)).toBe("0123456789");
  });

  it("CreateBucket of a bucket that is there answers 200 (rclone creates before it writes)", async () => {
    expect((await s3(s3Key, "/docs", { method: "PUT" })).status).toBe(200);
  });

  it("what is not built yet answers 501 NotImplemented", async () => {
    for (const [path, init] of [
      ["/docs/readme.txt?tagging", { method: "GET" }],
      ["/docs/t.txt?partNumber=1&uploadId=x", { method: "PUT", headers: { "x-amz-copy-source": "docs/readme.txt" } }],
      [
        "/docs/t.txt",
        { method: "PUT", body: "x", headers: { "X-Amz-Content-Sha256": "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD" } },
      ],
    ] as const) {
      const reply = await s3(s3Key, path, init);
      expect(reply.status, path).toBe(501);
      expect(await codeOf(reply)).toBe("NotImplemented");
    }
  });

  it("a hidden folder and one behind a meta password are invisible", async () => {
    const admin = await signIn("s3-endpoint");
    const meta = await callApi(admin, "/api/admin/meta/create", {
      path: "/team/photos",
      password: "pw",
      p_sub: true,
      hide: "",
    });
    expect(meta.code, meta.message).toBe(200);
    const limited = await makeKey(owner, { name: "no skip", path: "/team", permission: Bits.WRITE, usage: ["s3"] });
    expect(tags(await (await s3(limited, "/")).text(), "Name")).toEqual(["docs"]);
    expect((await s3(limited, "/photos/a.jpg")).status).toBe(404);
    // The key with the skip-password and see-hidden bits still sees it.
    expect(tags(await (await s3(s3Key, "/")).text(), "Name")).toEqual(["docs", "photos"]);
    const hide = await callApi(admin, "/api/admin/meta/create", { path: "/team/docs", hide: "^readme" });
    expect(hide.code, hide.message).toBe(200);
    expect(tags(await (await s3(limited, "/docs?list-type=2")).text(), "Key")).toEqual([]);
    expect(tags(await (await s3(s3Key, "/docs?list-type=2")).text(), "Key")).toEqual(["readme.txt"]);
    await sql("DELETE FROM metas");
  });
});
