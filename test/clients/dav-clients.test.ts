// Real WebDAV clients against a fresh `npm start` (wrangler dev, the local database), with real
// upstreams on 127.0.0.1: rclone (Debian's) copies a tree in through /dav and back out unchanged,
// signed in with an app password, and does the same on the R2 bucket a fresh install mounts at /;
// litmus (the WebDAV protocol test suite, Debian's) runs its basic, copymove, props, locks and http
// suites against an S3 and a WebDAV upstream.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
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
const ADMIN_PASSWORD = "dav clients admin password";

let server: NpmStart;
let s3: RunningServer & { endpoint: string };
let webdav: RunningServer & { url: string };
let token: string;
const work = mkdtempSync(join(tmpdir(), "gatehouse-dav-clients-"));

const api = (path: string, body?: unknown) => callApi(server.origin, token, path, body);

function requireTool(name: string) {
  if (!["/usr/bin", "/usr/local/bin", "/bin"].some((dir) => existsSync(join(dir, name)))) {
    throw new Error(`${name} is not installed: apt-get install ${name} (see .ci/run)`);
  }
}

beforeAll(async () => {
  requireTool("rclone");
  requireTool("litmus");
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
  const s3Addition = {
    endpoint: s3.endpoint,
    bucket: S3_BUCKET,
    access_key_id: S3_ACCESS_KEY_ID,
    secret_access_key: S3_SECRET_ACCESS_KEY,
    placeholder: "keep",
  };
  // rclone follows the default policy's redirects to presigned URLs; litmus checks the bytes
  // through this server, so its S3 storage proxies.
  for (const [mount_path, driver, addition, extra] of [
    ["/s3", "S3", { ...s3Addition, root_folder_path: "/rclone" }, {}],
    ["/s3-proxied", "S3", { ...s3Addition, root_folder_path: "/litmus" }, { webdav_policy: "native_proxy" }],
    [
      "/webdav",
      "WebDav",
      { address: webdav.url, username: DAV_USER.username, password: DAV_USER.password, root_folder_path: "/" },
      {},
    ],
  ] as const) {
    const created = await api("/api/admin/storage/create", {
      mount_path,
      driver,
      addition: JSON.stringify(addition),
      ...extra,
    });
    expect(created.code, created.message).toBe(200);
  }
}, 150_000);

afterAll(async () => {
  await server?.stop();
  await Promise.all([s3?.close(), webdav?.close()]);
  rmSync(work, { recursive: true, force: true });
});

describe("rclone through /dav", () => {
  it("copies a tree in and back out unchanged, signed in with an app password", async () => {
    const source = join(work, "source");
    const files: Record<string, Buffer> = {
      "empty.txt": Buffer.alloc(0),
      "one byte": Buffer.from("x"),
      "random.bin": randomBytes(3 * 1024 * 1024 + 17),
      "docs/notes 100%.md": Buffer.from("# notes\n"),
      "docs/deeper/zoë — ünïcode.txt": Buffer.from("unicode name\n"),
      "docs/deeper/a+b&c=d.txt": Buffer.from("reserved characters\n"),
    };
    for (const [path, bytes] of Object.entries(files)) {
      mkdirSync(join(source, path, ".."), { recursive: true });
      writeFileSync(join(source, path), bytes);
    }
    const app = await api("/api/me/app_password/create", { name: "rclone test" });
    expect(app.code, app.message).toBe(200);
    const obscured = (await run("rclone", ["obscure", app.data.password])).stdout.trim();
    const env = {
      ...process.env,
      RCLONE_CONFIG_GH_TYPE: "webdav",
      RCLONE_CONFIG_GH_URL: `${server.origin}/dav`,
      RCLONE_CONFIG_GH_VENDOR: "other",
      RCLONE_CONFIG_GH_USER: "admin",
      RCLONE_CONFIG_GH_PASS: obscured,
    };
    const rclone = (...args: string[]) =>
      run("rclone", ["--config", "/dev/null", "--retries", "1", "--low-level-retries", "1", ...args], {
        env,
        timeout: 120_000,
      });

    await rclone("copy", source, "gh:s3/tree");
    const listed = (await rclone("lsf", "-R", "gh:s3/tree")).stdout.split("\n").filter(Boolean).sort();
    expect(listed).toEqual([
      "docs/",
      "docs/deeper/",
      "docs/deeper/a+b&c=d.txt",
      "docs/deeper/zoë — ünïcode.txt",
      "docs/notes 100%.md",
      "empty.txt",
      "one byte",
      "random.bin",
    ]);
    await rclone("check", source, "gh:s3/tree");

    const back = join(work, "back");
    await rclone("copy", "gh:s3/tree", back);
    const copied = filesBelow(back);
    expect([...copied.keys()].sort()).toEqual(Object.keys(files).sort());
    for (const [path, bytes] of Object.entries(files)) expect(copied.get(path)!.equals(bytes), path).toBe(true);

    // And within the server: a move between storages, then a purge.
    await rclone("moveto", "gh:s3/tree/docs", "gh:webdav/docs");
    expect((await rclone("lsf", "-R", "gh:webdav/docs")).stdout.split("\n").filter(Boolean).sort()).toEqual([
      "deeper/",
      "deeper/a+b&c=d.txt",
      "deeper/zoë — ünïcode.txt",
      "notes 100%.md",
    ]);
    await rclone("purge", "gh:s3/tree");
    await expect(rclone("lsf", "gh:s3/tree")).rejects.toThrow();

    const used = await api("/api/me/app_password/list");
    expect(used.data[0].last_used).not.toBeNull();
  }, 240_000);
});

describe("rclone with an access key scoped to one folder, read-only", () => {
  it("lists and copies out that folder, and is refused beside it and every write", async () => {
    for (const path of ["/webdav/keyed", "/webdav/keyed/docs"])
      expect((await api("/api/fs/mkdir", { path })).code).toBe(200);
    for (const [path, body] of [
      ["/webdav/keyed/docs/report.txt", "the report\n"],
      ["/webdav/keyed/secret.txt", "not for the key\n"],
    ] as const) {
      const put = await fetch(`${server.origin}/api/fs/put`, {
        method: "PUT",
        headers: { Authorization: token, "File-Path": encodeURIComponent(path) },
        body,
      });
      expect(((await put.json()) as { code: number }).code, path).toBe(200);
    }
    const key = await api("/api/me/access_key/create", {
      name: "rclone reader",
      path: "/webdav/keyed/docs",
      permission: 256,
      expires_at: 0,
      usage: ["webdav"],
    });
    expect(key.code, key.message).toBe(200);
    const env = {
      ...process.env,
      RCLONE_CONFIG_GH_TYPE: "webdav",
      RCLONE_CONFIG_GH_URL: `${server.origin}/dav`,
      RCLONE_CONFIG_GH_VENDOR: "other",
      RCLONE_CONFIG_GH_USER: "admin",
      RCLONE_CONFIG_GH_PASS: (await run("rclone", ["obscure", key.data.secret])).stdout.trim(),
    };
    const rclone = (...args: string[]) =>
      run("rclone", ["--config", "/dev/null", "--retries", "1", "--low-level-retries", "1", ...args], {
        env,
        timeout: 60_000,
      });

    expect((await rclone("lsf", "-R", "gh:webdav/keyed/docs")).stdout.split("\n").filter(Boolean)).toEqual([
      "report.txt",
    ]);
    const back = join(work, "keyed-back");
    await rclone("copy", "gh:webdav/keyed/docs", back);
    expect(readFileSync(join(back, "report.txt"), "utf8")).toBe("the report\n");

    await expect(rclone("lsf", "gh:webdav/keyed")).rejects.toThrow();
    await expect(rclone("cat", "gh:webdav/keyed/secret.txt")).rejects.toThrow();
    await expect(rclone("cat", "gh:webdav/keyed/docs/../secret.txt")).rejects.toThrow();
    const local = join(work, "keyed-upload");
    mkdirSync(local, { recursive: true });
    writeFileSync(join(local, "new.txt"), "written by a read-only key\n");
    await expect(rclone("copy", local, "gh:webdav/keyed/docs")).rejects.toThrow();
    await expect(rclone("deletefile", "gh:webdav/keyed/docs/report.txt")).rejects.toThrow();
    const left = await api("/api/fs/list", { path: "/webdav/keyed/docs" });
    expect(left.data.content.map((entry: { name: string }) => entry.name)).toEqual(["report.txt"]);
  }, 120_000);
});

describe("rclone on the default storage", () => {
  it("copies a tree into the R2 bucket a fresh npm start mounts at /, checks it, and brings it back unchanged", async () => {
    const storages = await api("/api/admin/storage/list");
    expect(storages.data.content.find((s: { mount_path: string }) => s.mount_path === "/")).toMatchObject({
      driver: "R2 Binding",
    });
    const source = join(work, "r2-source");
    const files: Record<string, Buffer> = {
      "empty.txt": Buffer.alloc(0),
      "random.bin": randomBytes(2 * 1024 * 1024 + 5),
      "docs/zoë — ünïcode.txt": Buffer.from("unicode name\n"),
      "docs/a+b&c=d 100%.txt": Buffer.from("reserved characters\n"),
    };
    for (const [path, bytes] of Object.entries(files)) {
      mkdirSync(join(source, path, ".."), { recursive: true });
      writeFileSync(join(source, path), bytes);
    }
    const env = {
      ...process.env,
      RCLONE_CONFIG_GH_TYPE: "webdav",
      RCLONE_CONFIG_GH_URL: `${server.origin}/dav`,
      RCLONE_CONFIG_GH_VENDOR: "other",
      RCLONE_CONFIG_GH_USER: "admin",
      RCLONE_CONFIG_GH_PASS: (await run("rclone", ["obscure", ADMIN_PASSWORD])).stdout.trim(),
    };
    const rclone = (...args: string[]) =>
      run("rclone", ["--config", "/dev/null", "--retries", "1", "--low-level-retries", "1", ...args], {
        env,
        timeout: 120_000,
      });
    await rclone("copy", source, "gh:r2-tree");
    expect((await rclone("lsf", "-R", "gh:r2-tree")).stdout.split("\n").filter(Boolean).sort()).toEqual([
      "docs/",
      "docs/a+b&c=d 100%.txt",
      "docs/zoë — ünïcode.txt",
      "empty.txt",
      "random.bin",
    ]);
    await rclone("check", source, "gh:r2-tree");
    const back = join(work, "r2-back");
    await rclone("copy", "gh:r2-tree", back);
    const copied = filesBelow(back);
    expect([...copied.keys()].sort()).toEqual(Object.keys(files).sort());
    for (const [path, bytes] of Object.entries(files)) expect(copied.get(path)!.equals(bytes), path).toBe(true);
    await rclone("purge", "gh:r2-tree");
    await expect(rclone("lsf", "gh:r2-tree")).rejects.toThrow();
  }, 120_000);
});

describe("litmus, the WebDAV protocol test suite", () => {
  for (const mount of ["s3-proxied", "webdav"]) {
    it(`passes every suite on /dav/${mount}/`, async () => {
      const { stdout } = await run("litmus", [`${server.origin}/dav/${mount}/`, "admin", ADMIN_PASSWORD], {
        cwd: work,
        timeout: 240_000,
      }).catch((error: { stdout?: string }) => {
        throw new Error(`litmus failed:\n${error.stdout ?? String(error)}`);
      });
      const summaries = [
        ...stdout.matchAll(/<- summary for `(\w+)': of (\d+) tests run: (\d+) passed, (\d+) failed/g),
      ].map((m) => ({ suite: m[1], run: Number(m[2]), failed: Number(m[4]) }));
      expect(
        summaries.map((s) => s.suite),
        stdout,
      ).toEqual(["basic", "copymove", "props", "locks", "http"]);
      expect(
        summaries.filter((s) => s.failed > 0),
        stdout,
      ).toEqual([]);
      expect(summaries.reduce((sum, s) => sum + s.run, 0)).toBeGreaterThanOrEqual(100);
    }, 300_000);
  }
});
