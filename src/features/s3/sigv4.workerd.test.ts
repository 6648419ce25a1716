// The S3 endpoint's signatures beyond the headers, inside workerd (docs/decisions.md D22): bodies
// in signed chunks (aws-chunked, each chunk signed by chunked.ts's chunkSignature) stored byte for
// byte on S3 (s3rver) and WebDAV (webdav-server), a chunk changed after signing refused with nothing
// left; presigned URLs read and write with no header, and expired or tampered ones are refused.
import { exports } from "cloudflare:workers";
import { chunkSignature, STREAMING_PAYLOAD } from "./chunked.ts";
import { scopeOf, signingKey } from "../../lib/sigv4.ts";
import { parseAuthorization } from "./sigv4.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Text, upstreamDavText } from "../../../test/support/upstreams.ts";
import { ALL, BASE, clientOf, codeOf, type Key, makeKey, ROOT, s3, setUpEndpoint, tags } from "./workerd-fixture.ts";

let s3Key: Key;
let davKey: Key;

beforeAll(async () => {
  const owner = await setUpEndpoint("s3-signing", "s3signer");
  s3Key = await makeKey(owner, { name: "team", path: "/team", permission: ALL });
  davKey = await makeKey(owner, { name: "shared", path: "/shared", permission: ALL });
});

afterAll(async () => {
  await sql("DELETE FROM storages");
});

describe("streaming signed payloads (aws-chunked)", () => {
  const frameOf = (bytes: Uint8Array, signature: string) => [
    ...new TextEncoder().encode(`${bytes.length.toString(16)};chunk-signature=${signature}\r\n`),
    ...bytes,
    13,
    10,
  ];
  /**
   * A PutObject whose headers aws4fetch signs (the seed), its body framed and each chunk signed in the
   * chain (chunkSignature, checked against AWS's own example in chunked.test.ts); `tamper` changes a
   * byte of the framed body after signing.
   */
  async function chunkedPut(key: Key, path: string, parts: Uint8Array[], tamper?: number) {
    const framedLength = [...parts, new Uint8Array(0)].reduce((n, part) => n + frameOf(part, "0".repeat(64)).length, 0);
    const decoded = parts.reduce((n, part) => n + part.length, 0);
    const signed = await clientOf(key).sign(`${BASE}${path}`, {
      method: "PUT",
      body: new Uint8Array(framedLength),
      headers: {
        "X-Amz-Content-Sha256": STREAMING_PAYLOAD,
        "Content-Encoding": "aws-chunked",
        "x-amz-decoded-content-length": String(decoded),
      },
    });
    const auth = parseAuthorization(signed.headers.get("Authorization")!)!;
    const signing = {
      key: await signingKey(key.secret_access_key, auth),
      amzDate: signed.headers.get("x-amz-date")!,
      scope: scopeOf(auth),
      seed: auth.signature,
    };
    const body: number[] = [];
    let previous = auth.signature;
    for (const part of [...parts, new Uint8Array(0)]) {
      previous = await chunkSignature(signing, previous, part);
      body.push(...frameOf(part, previous));
    }
    expect(body.length).toBe(framedLength);
    const bytes = new Uint8Array(body);
    if (tamper !== undefined) bytes[tamper] = bytes[tamper]! ^ 1;
    return exports.default.fetch(new Request(signed.url, { method: "PUT", headers: signed.headers, body: bytes }));
  }
  const partsOf = (...sizes: number[]) =>
    sizes.map((size, n) => new Uint8Array(size).map((_, i) => (i * 13 + n * 7 + 1) % 256));
  const joined = (parts: Uint8Array[]) => new Uint8Array(parts.flatMap((part) => [...part]));

  it("a body in signed chunks is decoded and stored byte for byte, on S3 and on WebDAV", async () => {
    const parts = partsOf(65536, 65536, 100);
    const reply = await chunkedPut(s3Key, "/docs/chunked.bin", parts);
    expect(reply.status, await reply.clone().text()).toBe(200);
    expect(new Uint8Array(await (await s3(s3Key, "/docs/chunked.bin")).arrayBuffer())).toEqual(joined(parts));
    expect((await s3(s3Key, "/docs/chunked.bin", { method: "DELETE" })).status).toBe(204);
    const dav = await chunkedPut(davKey, "/box/chunked.txt", partsOf(9000, 10));
    expect(dav.status, await dav.clone().text()).toBe(200);
    expect(new Uint8Array(await (await s3(davKey, "/box/chunked.txt")).arrayBuffer())).toEqual(
      joined(partsOf(9000, 10)),
    );
    expect((await s3(davKey, "/box/chunked.txt", { method: "DELETE" })).status).toBe(204);
  });

  it("an UploadPart in signed chunks is stored byte for byte; a chunk changed after signing is refused (D22.11)", async () => {
    const created = await (await s3(davKey, "/box/parted.bin?uploads", { method: "POST" })).text();
    const id = tags(created, "UploadId")[0]!;
    const parts = partsOf(9000, 10);
    const part = await chunkedPut(davKey, `/box/parted.bin?partNumber=1&uploadId=${id}`, parts);
    expect(part.status, await part.clone().text()).toBe(200);
    const bad = await chunkedPut(davKey, `/box/parted.bin?partNumber=2&uploadId=${id}`, parts, 88 + 9000 + 2 + 88 + 3);
    expect(await codeOf(bad)).toBe("SignatureDoesNotMatch");
    const body = `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${part.headers.get("ETag")}</ETag></Part></CompleteMultipartUpload>`;
    expect((await s3(davKey, `/box/parted.bin?uploadId=${id}`, { method: "POST", body })).status).toBe(200);
    expect(new Uint8Array(await (await s3(davKey, "/box/parted.bin")).arrayBuffer())).toEqual(joined(parts));
    expect((await s3(davKey, "/box/parted.bin", { method: "DELETE" })).status).toBe(204);
  });

  it("a chunk changed after signing fails the upload with SignatureDoesNotMatch, and no file is left", async () => {
    // A byte of the second chunk's data (headers of 88 bytes): the first chunk has reached the storage by then.
    const dav = await chunkedPut(davKey, "/box/tampered.txt", partsOf(9000, 9000), 88 + 9000 + 2 + 88 + 10);
    expect(dav.status).toBe(403);
    expect(await codeOf(dav)).toBe("SignatureDoesNotMatch");
    expect(await upstreamDavText(`/${ROOT}/shared/box/tampered.txt`)).toBeNull();
    const s3Reply = await chunkedPut(s3Key, "/docs/tampered.bin", partsOf(65536, 65536, 100), 88 + 65536 + 2 + 88 + 5);
    expect(s3Reply.status).toBe(403);
    expect(await codeOf(s3Reply)).toBe("SignatureDoesNotMatch");
    // s3rver stores an empty object for the PUT that was cut off, after the endpoint's removal has run
    // (S3 itself stores nothing for an aborted PUT): cleared here so later listings are not affected.
    await s3(s3Key, "/docs/tampered.bin", { method: "DELETE" });
    await sql("DELETE FROM login_failures");
  });
});

describe("presigned URLs", () => {
  /** A URL presigned by aws4fetch (query string authentication), `X-Amz-Expires` in `query` if given. */
  async function presign(key: Key, path: string, init: { method?: string; datetime?: string; query?: string } = {}) {
    const url = `${BASE}${path}${init.query ? `?${init.query}` : ""}`;
    const aws = { signQuery: true, ...(init.datetime ? { datetime: init.datetime } : {}) };
    return (await clientOf(key).sign(url, { method: init.method ?? "GET", aws })).url;
  }
  const amzDate = (date: Date) => date.toISOString().replace(/[:-]|\.\d{3}/g, "");

  it("a presigned GET reads the object with no header at all; a presigned PUT stores the bytes", async () => {
    const url = await presign(s3Key, "/docs/readme.txt", { query: "X-Amz-Expires=600" });
    expect(url).toContain("X-Amz-Signature=");
    const got = await exports.default.fetch(new Request(url));
    expect(got.status, await got.clone().text()).toBe(200);
    expect(await got.text()).toBe("0123456789");

    const putUrl = await presign(s3Key, "/docs/presigned.txt", { method: "PUT" });
    const put = await exports.default.fetch(new Request(putUrl, { method: "PUT", body: "sent by URL" }));
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await s3Text(`${ROOT}/team/docs/presigned.txt`)).toBe("sent by URL");
    // A hash header the presigner did not sign (a client's HTTP layer may add one) does not change what was signed.
    const hashedUrl = await presign(s3Key, "/docs/presigned.txt", { method: "PUT" });
    const withHash = await exports.default.fetch(
      new Request(hashedUrl, { method: "PUT", body: "again", headers: { "x-amz-content-sha256": "ab".repeat(32) } }),
    );
    expect(withHash.status, await withHash.clone().text()).toBe(200);
    expect(await s3Text(`${ROOT}/team/docs/presigned.txt`)).toBe("again");
    expect((await s3(s3Key, "/docs/presigned.txt", { method: "DELETE" })).status).toBe(204);
  });

  it("an expired URL is AccessDenied 'Request has expired'; a week and a second is refused", async () => {
    const twoHoursAgo = amzDate(new Date(Date.now() - 2 * 3600 * 1000));
    const url = await presign(s3Key, "/docs/readme.txt", { datetime: twoHoursAgo, query: "X-Amz-Expires=3600" });
    const reply = await exports.default.fetch(new Request(url));
    expect(reply.status).toBe(403);
    const body = await reply.text();
    expect(tags(body, "Code")).toEqual(["AccessDenied"]);
    expect(tags(body, "Message")).toEqual(["Request has expired"]);
    // The same URL still within its time: it reads.
    const fresh = await presign(s3Key, "/docs/readme.txt", { datetime: twoHoursAgo, query: "X-Amz-Expires=10800" });
    expect((await exports.default.fetch(new Request(fresh))).status).toBe(200);
    const tooLong = await presign(s3Key, "/docs/readme.txt", { query: "X-Amz-Expires=604801" });
    const refused = await exports.default.fetch(new Request(tooLong));
    expect(refused.status).toBe(400);
    expect(await codeOf(refused)).toBe("AuthorizationQueryParametersError");
  });

  it("a tampered URL (another key, a longer life) is SignatureDoesNotMatch, and writes nothing", async () => {
    const url = await presign(s3Key, "/docs/readme.txt", { query: "X-Amz-Expires=600" });
    for (const tampered of [
      url.replace("/docs/readme.txt", "/photos/a.jpg"),
      url.replace("X-Amz-Expires=600", "X-Amz-Expires=6000"),
    ]) {
      const reply = await exports.default.fetch(new Request(tampered));
      expect(reply.status, tampered).toBe(403);
      expect(await codeOf(reply)).toBe("SignatureDoesNotMatch");
    }
    const putUrl = await presign(s3Key, "/docs/mine.txt", { method: "PUT" });
    const moved = await exports.default.fetch(
      new Request(putUrl.replace("/docs/mine.txt", "/docs/theirs.txt"), { method: "PUT", body: "x" }),
    );
    expect(await codeOf(moved)).toBe("SignatureDoesNotMatch");
    expect(await s3Text(`${ROOT}/team/docs/theirs.txt`)).toBeNull();
    await sql("DELETE FROM login_failures");
  });
});
