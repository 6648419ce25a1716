// A real S3 client against a fresh `npm start`: Debian's rclone (its S3 backend, aws-sdk-go's
// SigV4) copies a tree into the S3 endpoint and back out unchanged, on an S3 storage and on a
// WebDAV storage behind Gatehouse, reads a range, deletes; a key scoped to one folder sees its
// buckets only (docs/s3.md). The AWS SDK for JavaScript, with its default checksums, puts a Buffer
// and a stream (aws-chunked with a trailer) and reads them back.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
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
async function rcloneFor(path: string, permission?: number) {
  const key = await api("/api/me/access_key/create", { name: `rclone ${path}`, path, permission, usage: ["s3"] });
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

  it("a key scoped to one folder sees its buckets only", async () => {
    const made = await api("/api/fs/mkdir", { path: "/area/davstore/scoped/inside" });
    expect(made.code, made.message).toBe(200);
    const { rclone } = await rcloneFor("/area/davstore/scoped");
    expect((await rclone("lsd", "gs:")).stdout).toContain("inside");
    expect((await rclone("lsd", "gs:")).stdout).not.toContain("s3store");
    await expect(rclone("lsf", "gs:s3store")).rejects.toThrow();
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
