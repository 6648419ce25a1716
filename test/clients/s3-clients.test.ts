// Real S3 clients against a fresh `npm start`, on an S3 storage and on a WebDAV storage behind
// Gatehouse (docs/s3.md): Debian's rclone (its S3 backend, aws-sdk-go's SigV4) copies a tree into
// the S3 endpoint and back out unchanged, reads a range, deletes; the AWS SDK for JavaScript lists,
// puts, uploads 300 MiB in parts, reads ranges, copies, deletes and presigns, byte for byte by
// SHA-256, and with its default checksums puts a Buffer and a stream (aws-chunked with a trailer);
// a key scoped to one folder sees its buckets only, and a wrong secret is refused.
import { execFile } from "node:child_process";
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { appendFileSync, createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filesBelow } from "../support/local-files.ts";
import { callApi, npmStart, type NpmStart } from "../support/npm-start.ts";
import {
  DAV_USER,
  S3_ACCESS_KEY_ID,
  S3_BUCKET,
  S3_SECRET_ACCESS_KEY,
  startS3,
  startWebdav,
  type RunningServer,
} from "../support/storage-servers.ts";

const run = promisify(execFile);
const ADMIN_PASSWORD = "s3 clients admin password";

let server: NpmStart;
let s3: RunningServer & { endpoint: string };
let webdav: RunningServer & { url: string };
let token: string;
const work = mkdtempSync(join(tmpdir(), "gatehouse-s3-clients-"));

const api = (path: string, body?: unknown) => callApi(server.origin, token, path, body);

beforeAll(async () => {
  [s3, webdav] = await Promise.all([startS3(), startWebdav()]);
  server = await npmStart(ADMIN_PASSWORD);
  const login = await (
    await fetch(`${server.origin}/api/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
    })
  ).json();
  token = (login as { data: { token: string } }).data.token;
  for (const [mount_path, driver, addition] of [
    [
      "/area/s3store",
      "S3",
      {
        endpoint: s3.endpoint,
        bucket: S3_BUCKET,
        access_key_id: S3_ACCESS_KEY_ID,
        secret_access_key: S3_SECRET_ACCESS_KEY,
        placeholder: "keep",
        root_folder_path: "/s3-clients",
      },
    ],
    [
      "/area/davstore",
      "WebDav",
      { address: webdav.url, username: DAV_USER.username, password: DAV_USER.password, root_folder_path: "/" },
    ],
  ] as const) {
    const created = await api("/api/admin/storage/create", { mount_path, driver, addition: JSON.stringify(addition) });
    expect(created.code, created.message).toBe(200);
  }
}, 150_000);

afterAll(async () => {
  await server?.stop();
  await Promise.all([s3?.close(), webdav?.close()]);
  rmSync(work, { recursive: true, force: true });
});

/** Reading, writing and removing: see hidden, no password, write, rename, move, copy, remove, WebDAV read and manage. */
const READ_WRITE = 1 | 2 | 8 | 16 | 32 | 64 | 128 | 256 | 512;

/** rclone's S3 backend with a new key on `path` (with `permission`, else the reading bits). */
let rcloneKeys = 0;

async function rcloneFor(path: string, permission?: number) {
  // Names are unique per user: each test's key gets its own.
  const name = `rclone ${path} ${++rcloneKeys}`;
  const key = await api("/api/me/access_key/create", { name, path, permission, usage: ["s3"] });
  expect(key.code, key.message).toBe(200);
  // The machine's own AWS settings (a CA bundle, a profile) are not this client's.
  const own = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("AWS_")));
  const env = {
    ...own,
    RCLONE_CONFIG_GS_TYPE: "s3",
    RCLONE_CONFIG_GS_PROVIDER: "Other",
    RCLONE_CONFIG_GS_ENDPOINT: `${server.origin}/s3`,
    RCLONE_CONFIG_GS_ACCESS_KEY_ID: key.data.access_key_id,
    RCLONE_CONFIG_GS_SECRET_ACCESS_KEY: key.data.secret_access_key,
    RCLONE_CONFIG_GS_REGION: "us-east-1",
    RCLONE_CONFIG_GS_FORCE_PATH_STYLE: "true",
    RCLONE_CONFIG_GS_UPLOAD_CUTOFF: "5G",
  };
  const rclone = (...args: string[]) =>
    run("rclone", ["--config", "/dev/null", "--retries", "1", "--low-level-retries", "1", ...args], {
      env,
      timeout: 120_000,
    });
  return { rclone, env };
}

describe("rclone through /s3", () => {
  it("copies a tree in and back out unchanged on an S3 and a WebDAV storage, reads a range, deletes", async () => {
    const source = join(work, "source");
    const files: Record<string, Buffer> = {
      "empty.txt": Buffer.alloc(0),
      "random.bin": randomBytes(2 * 1024 * 1024 + 17),
      "docs/notes 100%.md": Buffer.from("# notes\n"),
      "docs/deeper/zoë — ünïcode.txt": Buffer.from("unicode name\n"),
    };
    for (const [path, bytes] of Object.entries(files)) {
      mkdirSync(join(source, path, ".."), { recursive: true });
      writeFileSync(join(source, path), bytes);
    }
    const { rclone, env } = await rcloneFor("/area", READ_WRITE);
    expect((await rclone("lsd", "gs:")).stdout).toMatch(/davstore[\s\S]*s3store|s3store[\s\S]*davstore/);
    for (const bucket of ["s3store", "davstore"]) {
      await rclone("copy", source, `gs:${bucket}/tree`);
      const listed = (await rclone("lsf", "-R", `gs:${bucket}/tree`)).stdout.split("\n").filter(Boolean).sort();
      expect(listed, bucket).toEqual([
        "docs/",
        "docs/deeper/",
        "docs/deeper/zoë — ünïcode.txt",
        "docs/notes 100%.md",
        "empty.txt",
        "random.bin",
      ]);
      await rclone("check", source, `gs:${bucket}/tree`);
      const back = join(work, `back-${bucket}`);
      await rclone("copy", `gs:${bucket}/tree`, back);
      const copied = filesBelow(back);
      expect([...copied.keys()].sort()).toEqual(Object.keys(files).sort());
      for (const [path, bytes] of Object.entries(files)) expect(copied.get(path)!.equals(bytes), path).toBe(true);
      // A range read (rclone cat --offset --count sends Range), as raw bytes.
      const range = await run(
        "rclone",
        ["--config", "/dev/null", "cat", "--offset", "1000", "--count", "50", `gs:${bucket}/tree/random.bin`],
        { env, encoding: "buffer" },
      );
      expect(Buffer.from(range.stdout).equals(files["random.bin"]!.subarray(1000, 1050))).toBe(true);
      await rclone("deletefile", `gs:${bucket}/tree/empty.txt`);
      expect((await rclone("lsf", `gs:${bucket}/tree`)).stdout).not.toContain("empty.txt");
      await rclone("purge", `gs:${bucket}/tree`);
    }
  }, 240_000);

  it("server-side copy (CopyObject), a presigned link, a bucket made and removed", async () => {
    const { rclone } = await rcloneFor("/area/davstore", READ_WRITE);
    await rclone("mkdir", "gs:fresh");
    expect((await rclone("lsd", "gs:")).stdout).toContain("fresh");
    const local = join(work, "one.txt");
    writeFileSync(local, "copied server-side\n");
    await rclone("copyto", local, "gs:fresh/one.txt");
    // Within one remote rclone copies with CopyObject, never downloading the bytes.
    await rclone("copyto", "gs:fresh/one.txt", "gs:fresh/two.txt");
    expect((await rclone("cat", "gs:fresh/two.txt")).stdout).toBe("copied server-side\n");
    // rclone link presigns a GET (aws-sdk-go's presigner): the URL alone reads the bytes.
    const link = (await rclone("link", "--expire", "1h", "gs:fresh/two.txt")).stdout.trim();
    expect(link).toContain("X-Amz-Signature=");
    const got = await fetch(link);
    expect(await got.text()).toBe("copied server-side\n");
    await rclone("purge", "gs:fresh");
    expect((await rclone("lsd", "gs:")).stdout).not.toContain("fresh");
  }, 120_000);

  it("uploads 300 MiB in parts (rclone's multipart upload) and reads it back byte-exact on both storages", async () => {
    const local = join(work, "rclone-big.bin");
    const whole = createHash("sha256");
    for (let index = 0; index < BIG_PARTS; index++) {
      const part = bigPart(index);
      whole.update(part);
      appendFileSync(local, part);
    }
    const expected = whole.digest("hex");
    const { rclone } = await rcloneFor("/area", READ_WRITE);
    for (const bucket of ["s3store", "davstore"]) {
      // Parts of 20 MiB from 5 MiB on, over the key's config (which turns multipart off for the other tests).
      await rclone("copyto", local, `gs,upload_cutoff=5M,chunk_size=20M:${bucket}/rclone-big.bin`);
      expect((await rclone("lsl", `gs:${bucket}/rclone-big.bin`)).stdout).toContain(String(BIG_PARTS * BIG_PART_BYTES));
      const back = join(work, `rclone-big-${bucket}.bin`);
      // rclone reads a file this big in four ranged streams at once. webdav-server, the test's WebDAV
      // server, closes its connection in the middle of a range that starts far into a file (a GET of
      // bytes=100000000- straight to it fails the same way), so the WebDAV storage is read whole.
      const streams = bucket === "davstore" ? ["--multi-thread-streams", "0"] : [];
      await rclone("copyto", ...streams, `gs:${bucket}/rclone-big.bin`, back);
      expect(await fileSha256(back), bucket).toBe(expected);
      await rclone("deletefile", `gs:${bucket}/rclone-big.bin`);
      rmSync(back);
    }
    rmSync(local);
  }, 300_000);

  it("a key scoped to one folder sees its buckets only", async () => {
    const made = await api("/api/fs/mkdir", { path: "/area/davstore/scoped/inside" });
    expect(made.code, made.message).toBe(200);
    const { rclone } = await rcloneFor("/area/davstore/scoped");
    expect((await rclone("lsd", "gs:")).stdout).toContain("inside");
    expect((await rclone("lsd", "gs:")).stdout).not.toContain("s3store");
    await expect(rclone("lsf", "gs:s3store")).rejects.toThrow();
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// The AWS SDK for JavaScript (v3)

const MIB = 1024 * 1024;
/** The big upload: 300 MiB in 15 parts of 20 MiB, each made when it is sent. */
const BIG_PARTS = 15;
const BIG_PART_BYTES = 20 * MIB;

/** Part `index` of the big upload: AES-CTR's keystream, fast and the same on every run. */
function bigPart(index: number): Buffer {
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(index, 0);
  return createCipheriv("aes-128-ctr", Buffer.alloc(16, 7), iv).update(Buffer.alloc(BIG_PART_BYTES));
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A local file's SHA-256, read as a stream. */
async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** A body the SDK answers (a Node stream), hashed as it arrives: its SHA-256 and length. */
async function streamedSha256(body: unknown): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { sha256: hash.digest("hex"), size };
}

let sdkKeys = 0;

/**
 * The SDK with a new key on `path`, its checksums as the SDK sets them by default (CRC32 on every
 * body); and a client on the same key for presigning a PUT, with checksums only where required: by
 * default the presigner puts a checksum of an empty body into a PUT's query, which the endpoint
 * refuses (docs/s3.md).
 */
async function sdkFor(path: string, permission?: number, wrongSecret = false) {
  const name = `sdk ${++sdkKeys} ${path}`;
  const key = await api("/api/me/access_key/create", { name, path, permission, usage: ["s3"] });
  expect(key.code, key.message).toBe(200);
  const config = {
    endpoint: `${server.origin}/s3`,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: {
      accessKeyId: key.data.access_key_id,
      secretAccessKey: wrongSecret ? `${key.data.secret_access_key}x` : key.data.secret_access_key,
    },
    maxAttempts: 1,
  };
  return Object.assign(new S3Client(config), {
    presigner: new S3Client({
      ...config,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    }),
  });
}

/** The error name (S3's code) an SDK call fails with. */
const failure = (call: Promise<unknown>) =>
  call.then(
    () => "no error",
    (error: Error) => error.name,
  );

describe("the AWS SDK for JavaScript through /s3", () => {
  it.each(["s3store", "davstore"])(
    "on %s: put, list, a 300 MiB multipart upload read back whole and in a range, copy, delete, presigned GET and PUT",
    async (bucket) => {
      const sdk = await sdkFor("/area", READ_WRITE);
      const buckets = (await sdk.send(new ListBucketsCommand({}))).Buckets?.map((found) => found.Name);
      expect(buckets).toContain(bucket);

      const small = randomBytes(100_000);
      await sdk.send(new PutObjectCommand({ Bucket: bucket, Key: "sdk/small.bin", Body: small }));
      const listed = await sdk.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "sdk/" }));
      expect(listed.Contents?.map((object) => [object.Key, object.Size])).toEqual([["sdk/small.bin", 100_000]]);
      const read = await sdk.send(new GetObjectCommand({ Bucket: bucket, Key: "sdk/small.bin" }));
      expect(await streamedSha256(read.Body)).toEqual({ sha256: sha256(small), size: small.length });

      // 300 MiB in parts, each made as it is sent (two at a time), the whole hashed on the way.
      const whole = createHash("sha256");
      const { UploadId } = await sdk.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "sdk/big.bin" }));
      expect(UploadId).toBeTruthy();
      const etags: string[] = [];
      for (let index = 0; index < BIG_PARTS; index += 2) {
        const batch = [index, index + 1].filter((at) => at < BIG_PARTS);
        await Promise.all(
          batch.map(async (at) => {
            const body = bigPart(at);
            const sent = await sdk.send(
              new UploadPartCommand({ Bucket: bucket, Key: "sdk/big.bin", UploadId, PartNumber: at + 1, Body: body }),
            );
            etags[at] = sent.ETag!;
            // The SDK sent the part's CRC32 (its default), checked and echoed.
            expect(sent.ChecksumCRC32).toBeTruthy();
          }),
        );
        for (const at of batch) whole.update(bigPart(at));
      }
      const completed = await sdk.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: "sdk/big.bin",
          UploadId,
          MultipartUpload: { Parts: etags.map((ETag, at) => ({ ETag, PartNumber: at + 1 })) },
        }),
      );
      const head = await sdk.send(new HeadObjectCommand({ Bucket: bucket, Key: "sdk/big.bin" }));
      expect(head.ContentLength).toBe(BIG_PARTS * BIG_PART_BYTES);
      expect(completed.ETag).toBe(head.ETag);
      const big = await sdk.send(new GetObjectCommand({ Bucket: bucket, Key: "sdk/big.bin" }));
      expect(await streamedSha256(big.Body)).toEqual({ sha256: whole.digest("hex"), size: BIG_PARTS * BIG_PART_BYTES });
      // A range across the join of parts 3 and 4.
      const from = 3 * BIG_PART_BYTES - 1000;
      const range = await sdk.send(
        new GetObjectCommand({ Bucket: bucket, Key: "sdk/big.bin", Range: `bytes=${from}-${from + 1999}` }),
      );
      expect(range.ContentRange).toBe(`bytes ${from}-${from + 1999}/${BIG_PARTS * BIG_PART_BYTES}`);
      const expected = Buffer.concat([bigPart(2).subarray(BIG_PART_BYTES - 1000), bigPart(3).subarray(0, 1000)]);
      expect(await streamedSha256(range.Body)).toEqual({ sha256: sha256(expected), size: 2000 });

      await sdk.send(
        new CopyObjectCommand({ Bucket: bucket, Key: "sdk/copy.bin", CopySource: `${bucket}/sdk/small.bin` }),
      );
      const copy = await sdk.send(new GetObjectCommand({ Bucket: bucket, Key: "sdk/copy.bin" }));
      expect((await streamedSha256(copy.Body)).sha256).toBe(sha256(small));

      // Presigned: the URL alone reads, and a PUT to one stores the bytes.
      // The default client presigns a GET (with its hoisted x-amz-checksum-mode); a PUT needs the
      // presigner's client, whose URL carries no checksum of an empty body.
      const getUrl = await getSignedUrl(sdk, new GetObjectCommand({ Bucket: bucket, Key: "sdk/small.bin" }), {
        expiresIn: 600,
      });
      expect(sha256(new Uint8Array(await (await fetch(getUrl)).arrayBuffer()))).toBe(sha256(small));
      const putUrl = await getSignedUrl(
        sdk.presigner,
        new PutObjectCommand({ Bucket: bucket, Key: "sdk/presigned.bin" }),
        {
          expiresIn: 600,
        },
      );
      const presigned = randomBytes(70_000);
      expect((await fetch(putUrl, { method: "PUT", body: presigned })).status).toBe(200);
      const back = await sdk.send(new GetObjectCommand({ Bucket: bucket, Key: "sdk/presigned.bin" }));
      expect((await streamedSha256(back.Body)).sha256).toBe(sha256(presigned));

      await sdk.send(new DeleteObjectCommand({ Bucket: bucket, Key: "sdk/copy.bin" }));
      const deleted = await sdk.send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: ["sdk/small.bin", "sdk/big.bin", "sdk/presigned.bin"].map((Key) => ({ Key })) },
        }),
      );
      expect(deleted.Deleted?.map((row) => row.Key).sort()).toEqual([
        "sdk/big.bin",
        "sdk/presigned.bin",
        "sdk/small.bin",
      ]);
      const left = await sdk.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "sdk/" }));
      expect(left.Contents ?? []).toEqual([]);
    },
    240_000,
  );

  it("a key scoped to one folder cannot list, get or put outside it; a wrong secret is SignatureDoesNotMatch", async () => {
    const made = await api("/api/fs/mkdir", { path: "/area/davstore/sdk-scoped/inside" });
    expect(made.code, made.message).toBe(200);
    const wide = await sdkFor("/area", READ_WRITE);
    await wide.send(new PutObjectCommand({ Bucket: "s3store", Key: "outside.txt", Body: "outside" }));
    const scoped = await sdkFor("/area/davstore/sdk-scoped", READ_WRITE);
    expect((await scoped.send(new ListBucketsCommand({}))).Buckets?.map((found) => found.Name)).toEqual(["inside"]);
    await scoped.send(new PutObjectCommand({ Bucket: "inside", Key: "in.txt", Body: "inside" }));
    expect(
      await (await scoped.send(new GetObjectCommand({ Bucket: "inside", Key: "in.txt" }))).Body?.transformToString(),
    ).toBe("inside");
    expect(await failure(scoped.send(new ListObjectsV2Command({ Bucket: "s3store" })))).toBe("NoSuchBucket");
    expect(await failure(scoped.send(new GetObjectCommand({ Bucket: "s3store", Key: "outside.txt" })))).toBe(
      "NoSuchBucket",
    );
    expect(await failure(scoped.send(new PutObjectCommand({ Bucket: "s3store", Key: "x.txt", Body: "x" })))).toBe(
      "NoSuchBucket",
    );
    expect(await failure(scoped.send(new CreateMultipartUploadCommand({ Bucket: "s3store", Key: "x.bin" })))).toBe(
      "NoSuchBucket",
    );
    const wrong = await sdkFor("/area", READ_WRITE, true);
    expect(await failure(wrong.send(new ListBucketsCommand({})))).toBe("SignatureDoesNotMatch");
    await wide.send(new DeleteObjectCommand({ Bucket: "s3store", Key: "outside.txt" }));
  }, 120_000);
});

describe("the AWS SDK for JavaScript through /s3 (default settings)", () => {
  /** An S3Client of @aws-sdk/client-s3 with a new key on `path`: checksums as the SDK sets them by default. */
  async function sdkFor(path: string) {
    const key = await api("/api/me/access_key/create", {
      name: `sdk ${path}`,
      path,
      permission: READ_WRITE,
      usage: ["s3"],
    });
    expect(key.code, key.message).toBe(200);
    return new S3Client({
      endpoint: `${server.origin}/s3`,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId: key.data.access_key_id, secretAccessKey: key.data.secret_access_key },
      maxAttempts: 1,
    });
  }

  it("PutObject of a Buffer (x-amz-checksum-crc32) and of a stream (aws-chunked, a CRC32 trailer) on both storages", async () => {
    const client = await sdkFor("/area");
    const bytes = randomBytes(300_000 + 5);
    for (const bucket of ["s3store", "davstore"]) {
      const put = await client.send(new PutObjectCommand({ Bucket: bucket, Key: "sdk/buffer.bin", Body: bytes }));
      expect(put.ChecksumCRC32, bucket).toBeTruthy();
      const streamed = await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: "sdk/stream.bin",
          Body: Readable.from([bytes.subarray(0, 100_000), bytes.subarray(100_000)]),
          ContentLength: bytes.length,
        }),
      );
      expect(streamed.ChecksumCRC32, bucket).toBe(put.ChecksumCRC32);
      for (const name of ["sdk/buffer.bin", "sdk/stream.bin"]) {
        const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: name }));
        expect(Buffer.from(await got.Body!.transformToByteArray()).equals(bytes), `${bucket}/${name}`).toBe(true);
      }
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: "sdk/buffer.bin" }));
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: "sdk/stream.bin" }));
    }
  }, 120_000);
});
