// The web UI in a real browser (Debian's Chromium through playwright-core) against `npm start`, as
// a new user meets it: open the URL, sign in, use the management pages, store a file in the storage
// a fresh install mounts (R2 through the Worker's binding), share a file and open the link signed
// out. Requests to any other host are blocked and fail the test, so a missing local asset shows up.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chromiumAvailable,
  chromiumPath,
  launchChromium,
  measureLoad,
  sameOriginContext,
} from "../../scripts/browser.ts";
import { npmStart, type NpmStart } from "../support/npm-start.ts";
import {
  DAV_ROOT,
  DAV_USER,
  type RunningServer,
  S3_ACCESS_KEY_ID,
  S3_BUCKET,
  S3_SECRET_ACCESS_KEY,
  s3TestClient,
  startDownloads,
  startS3,
  startWebdav,
} from "../support/storage-servers.ts";
import { startGatedProxy } from "../support/gated-proxy.ts";
import { bytesOf, zipFixtures } from "../support/zip-fixtures.ts";
import { cloudToolUnavailable } from "../../src/features/settings/messages.ts";
import { CLOUD_DRIVE_TOOLS } from "../../src/features/settings/rules.ts";
import { LDAP_DIRECTORY } from "../support/ldap-directory.ts";
import { startDirectory } from "../support/ldap-server.ts";

const ADMIN_PASSWORD = "browser test admin password";

let server: NpmStart;
let browser: Browser;
let context: BrowserContext;
let blocked: string[];
let page: Page;

beforeAll(async () => {
  if (!chromiumAvailable())
    throw new Error(`no Chromium at ${chromiumPath}: apt-get install chromium (see .ci/run), or set CHROMIUM_PATH`);
  // The offline download page fetches from test/support's server on 127.0.0.1.
  server = await npmStart(ADMIN_PASSWORD, { env: { OFFLINE_DOWNLOAD_PRIVATE_HOSTS: "127.0.0.1" } });
  browser = await launchChromium();
  ({ context, blocked } = await sameOriginContext(browser, server.origin));
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const api = async (path: string, init: RequestInit = {}) =>
  (await fetch(server.origin + path, init)).json() as Promise<{ code: number; message: string; data: any }>;
async function adminToken(): Promise<string> {
  const reply = await api("/api/auth/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
  });
  expect(reply.code).toBe(200);
  return reply.data.token as string;
}

/** A storage of the WebDAV test server at `address`, mounted at `mountPath` (`id`: for an update). */
const webdavStorage = (mountPath: string, address: string, id?: number) => ({
  ...(id === undefined ? {} : { id }),
  mount_path: mountPath,
  driver: "WebDav",
  addition: JSON.stringify({
    address,
    username: DAV_USER.username,
    password: DAV_USER.password,
    root_folder_path: DAV_ROOT,
  }),
});

/** Mounts the WebDAV test server at `address` as the admin would; the test fails if it cannot. */
async function mountWebdav(token: string, mountPath: string, address: string) {
  const created = await api("/api/admin/storage/create", {
    method: "POST",
    headers: { Authorization: token, "Content-Type": "application/json" },
    body: JSON.stringify(webdavStorage(mountPath, address)),
  });
  expect(created.code, created.message).toBe(200);
  return created.data.id as number;
}

/** The WebDAV test server's own login, for checks made on it directly. */
const DAV_BASIC = `Basic ${Buffer.from(`${DAV_USER.username}:${DAV_USER.password}`).toString("base64")}`;

/** Writes a file straight to the WebDAV test server, for the UI to find through Gatehouse. */
async function putOnWebdav(address: string, name: string, body: BodyInit) {
  const put = await fetch(`${address}${DAV_ROOT}/${name}`, {
    method: "PUT",
    headers: { Authorization: DAV_BASIC },
    body,
  });
  expect(put.ok).toBe(true);
}

/**
 * Opens the tool bar (upload, new folder, …): the round button in the bottom right corner toggles
 * it, and the UI keeps it open from one folder to the next.
 */
/** The UI signed in with `token` (kept where it keeps its own), whatever ran before: a test may run alone. */
async function signInWith(token: string): Promise<void> {
  await page.goto(`${server.origin}/@login`);
  await page.evaluate((value) => localStorage.setItem("token", value), token);
}

async function openToolbar(): Promise<void> {
  const viewport = page.viewportSize()!;
  const upload = page.locator('[tips="upload"]');
  await expect
    .poll(async () => {
      if (!(await upload.isVisible())) await page.mouse.click(viewport.width - 36, viewport.height - 36);
      return upload.isVisible();
    })
    .toBe(true);
}

describe("the web UI on a fresh npm start", () => {
  it("renders the sign-in page from this origin alone", async () => {
    const load = await measureLoad(context, server.origin, "/", 'input[name="username"]');
    expect(blocked).toEqual([]);
    expect(
      load.byPath.every((entry) => entry.status === 200),
      JSON.stringify(load.byPath),
    ).toBe(true);
    expect(load.byPath.map((entry) => entry.path)).toEqual(
      expect.arrayContaining(["/", "/api/public/settings", "/images/logo.svg"]),
    );
    console.log(`first load of the sign-in page: ${load.requests} requests, ${load.bytes} bytes`);

    const index = await page.goto(`${server.origin}/`);
    expect(await index!.text()).toContain("<title>AList</title>");
    await page.waitForURL(/\/@login/);
    await expect.poll(() => page.title()).toContain("AList");
    await page.locator('input[name="username"]').waitFor();
  });

  it("sends the index uncached with an ETag, and hashed assets as immutable", async () => {
    const index = await fetch(`${server.origin}/`);
    await index.arrayBuffer();
    expect(index.headers.get("Cache-Control")).toBe("no-cache");
    const etag = index.headers.get("ETag")!;
    expect((await fetch(`${server.origin}/`, { headers: { "If-None-Match": etag } })).status).toBe(304);

    const script = /\/assets\/index-[\w-]+\.js/.exec(await (await fetch(`${server.origin}/`)).text())![0];
    const asset = await fetch(server.origin + script);
    await asset.arrayBuffer();
    expect(asset.status).toBe(200);
    expect(asset.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    const image = await fetch(`${server.origin}/images/logo.svg`);
    expect(image.headers.get("Content-Type")).toMatch(/^image\/svg\+xml/);
    expect(image.headers.get("Cache-Control")).toBe("public, max-age=86400");
    expect(await image.text()).toContain("<svg");
  });

  it("leaves the API and the file paths alone", async () => {
    expect(await (await fetch(`${server.origin}/ping`, { headers: { Accept: "text/html" } })).text()).toBe("pong");
    expect((await api("/api/public/settings")).data.site_title).toBe("AList");
    for (const path of ["/api/nowhere", "/d/a.txt", "/p/a.txt", "/dav", "/dav/a"]) {
      const response = await fetch(server.origin + path, { headers: { Accept: "text/html" } });
      expect(response.headers.get("Content-Type") ?? "", path).not.toContain("text/html");
      expect(await response.text(), path).not.toContain("<html");
    }
  });

  it("signs in as the admin and opens the management pages", async () => {
    await page.goto(`${server.origin}/@login`);
    await page.locator('input[name="username"]').fill("admin");
    await page.locator('input[name="password"]').fill(ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Login" }).click();
    await page.waitForURL((url) => !url.pathname.startsWith("/@login"));

    await page.goto(`${server.origin}/@manage/storages`);
    await page.getByRole("button", { name: "Add" }).waitFor();
    await page.goto(`${server.origin}/@manage/users`);
    await page.getByRole("cell", { name: "admin", exact: true }).first().waitFor();
    await page.goto(`${server.origin}/@manage/settings/site`);
    await expect.poll(() => page.locator("#site_title").inputValue()).toBe("AList");
    expect(blocked).toEqual([]);
  });

  it("shows a site title saved in the settings page on the next load", async () => {
    await signInWith(await adminToken());
    await page.goto(`${server.origin}/@manage/settings/site`);
    await expect.poll(() => page.locator("#site_title").inputValue()).toBe("AList");
    await page.locator("#site_title").fill("Gatehouse in a browser");
    const saved = page.waitForResponse((response) => response.url().endsWith("/api/admin/setting/save"));
    await page.getByRole("button", { name: "Save", exact: true }).click();
    expect(await (await saved).json()).toMatchObject({ code: 200 });

    const reload = await page.reload();
    expect(await reload!.text()).toContain("<title>Gatehouse in a browser</title>");
    await expect.poll(() => page.title()).toContain("Gatehouse in a browser");
    expect(blocked).toEqual([]);
  });

  it("opens a deep link straight into its page", async () => {
    await signInWith(await adminToken());
    const deep = await context.newPage();
    const response = await deep.goto(`${server.origin}/@manage/users`);
    expect(response!.headers()["content-type"]).toBe("text/html; charset=utf-8");
    await deep.getByRole("cell", { name: "admin", exact: true }).first().waitFor();
    await deep.close();
    expect(blocked).toEqual([]);
  });

  it("stores files out of the box: the default R2 storage at / takes an upload, lists it and gives it back byte-exact", async () => {
    const token = await adminToken();
    const storages = await api("/api/admin/storage/list", { headers: { Authorization: token } });
    expect(storages.data.content).toMatchObject([{ mount_path: "/", driver: "R2 Binding", status: "work" }]);
    const bytes = randomBytes(256 * 1024 + 7);
    // Signed in through the form, as a newcomer: the UI then opens the home folder, the default storage.
    await page.goto(`${server.origin}/@login`);
    await page.locator('input[name="username"]').fill("admin");
    await page.locator('input[name="password"]').fill(ADMIN_PASSWORD);
    const listed = page.waitForResponse((response) => response.url().endsWith("/api/fs/list"));
    await page.getByRole("button", { name: "Login" }).click();
    expect(await (await listed).json()).toMatchObject({ code: 200, data: { provider: "R2 Binding", write: true } });
    await openToolbar();
    await page.locator('[tips="upload"]').click();
    await page.locator('input[type="file"]:not([webkitdirectory])').setInputFiles({
      name: "first file.bin",
      mimeType: "application/octet-stream",
      buffer: bytes,
    });
    await page.getByText("Success", { exact: true }).first().waitFor({ timeout: 15_000 });
    await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await page.locator("a.list-item", { hasText: "first file.bin" }).click();
    await page.waitForURL(/\/first%20file\.bin$/);
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Download" }).first().click();
    const saved = await (await download).path();
    expect(readFileSync(saved!).equals(bytes)).toBe(true);
    expect(blocked).toEqual([]);
    const removed = await api("/api/fs/remove", {
      method: "POST",
      headers: { Authorization: token, "Content-Type": "application/json" },
      body: JSON.stringify({ dir: "/", names: ["first file.bin"] }),
    });
    expect(removed.code).toBe(200);
  });

  it("browses a mounted storage, opens a text file, and uploads, creates, renames and deletes through the UI", async () => {
    const token = await adminToken();

    let dav: (RunningServer & { url: string }) | undefined;
    try {
      dav = await startWebdav();
      await putOnWebdav(dav.url, "hello.txt", "Hello from the mounted storage\n");
      await mountWebdav(token, "/library", dav.url);

      await signInWith(token);
      await page.goto(`${server.origin}/library`);
      await page.getByText("hello.txt", { exact: true }).click();
      await page.waitForURL(/\/library\/hello\.txt$/);
      await page.getByText("Hello from the mounted storage").waitFor();
      // The write side through the UI's own tools, each result checked on the WebDAV server itself.
      const davStatus = async (path: string) =>
        (
          await fetch(`${dav!.url}${DAV_ROOT}${path}`, {
            method: "PROPFIND",
            headers: { Authorization: DAV_BASIC, Depth: "0" },
          })
        ).status;
      await page.goto(`${server.origin}/library`);
      await page.getByText("hello.txt", { exact: true }).waitFor();
      await openToolbar();
      await page.locator('[tips="mkdir"]').click();
      await page.getByRole("dialog").locator("input:not([type=checkbox])").fill("made-in-ui");
      await page.keyboard.press("Enter");
      await page.locator("a.list-item", { hasText: "made-in-ui" }).waitFor({ timeout: 10_000 });
      expect(await davStatus("/made-in-ui")).toBe(207);
      await page.locator('[tips="upload"]').click();
      await page.locator('input[type="file"]:not([webkitdirectory])').setInputFiles({
        name: "from-ui.txt",
        mimeType: "text/plain",
        buffer: Buffer.from("uploaded through the UI\n"),
      });
      await expect
        .poll(
          async () =>
            (await fetch(`${dav!.url}${DAV_ROOT}/from-ui.txt`, { headers: { Authorization: DAV_BASIC } })).text(),
          { timeout: 15_000 },
        )
        .toBe("uploaded through the UI\n");
      await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
      await page.getByRole("dialog").waitFor({ state: "detached" });
      await page.locator("a.list-item", { hasText: "from-ui.txt" }).click({ button: "right" });
      await page.getByText("Rename", { exact: true }).click();
      const renameInput = page.getByRole("dialog").locator("input:not([type=checkbox])");
      // The dialog fills in the current name and, a moment later, selects it without its extension:
      // text typed before that lands beside the extension. Type until the field holds the new name.
      await expect
        .poll(async () => {
          await renameInput.fill("renamed-in-ui.txt");
          return renameInput.inputValue();
        })
        .toBe("renamed-in-ui.txt");
      await page.keyboard.press("Enter");
      // The UI shows the new name once its rename call answered; then the upstream must have it.
      await page.locator("a.list-item", { hasText: "renamed-in-ui.txt" }).waitFor({ timeout: 15_000 });
      await expect.poll(() => davStatus("/renamed-in-ui.txt"), { timeout: 10_000 }).toBe(207);
      expect(await davStatus("/from-ui.txt")).toBe(404);
      await page.locator("a.list-item", { hasText: "renamed-in-ui.txt" }).click({ button: "right" });
      await page.getByText("Delete", { exact: true }).click();
      await page.getByRole("button", { name: "Confirm" }).click();
      await expect.poll(() => davStatus("/renamed-in-ui.txt"), { timeout: 10_000 }).toBe(404);
      expect(blocked).toEqual([]);
    } finally {
      await dav?.close();
    }
  });

  it("shows the search box once an index exists, and finds a file with it", async () => {
    const token = await adminToken();
    const headers = { Authorization: token, "Content-Type": "application/json" };
    let dav: (RunningServer & { url: string }) | undefined;
    try {
      dav = await startWebdav();
      await putOnWebdav(dav.url, "quarterly-figures.txt", "figures\n");
      await mountWebdav(token, "/searched", dav.url);
      // The earlier test's storage points at a server that is gone: the build skips it.
      const saved = await api("/api/admin/setting/save", {
        method: "POST",
        headers,
        body: JSON.stringify([
          { key: "search_index", value: "database" },
          { key: "ignore_paths", value: "/library" },
        ]),
      });
      expect(saved.code, saved.message).toBe(200);
      expect((await api("/api/admin/index/build", { method: "POST", headers, body: "{}" })).code).toBe(200);
      await expect
        .poll(async () => (await api("/api/admin/index/progress", { headers })).data.is_done, { timeout: 15_000 })
        .toBe(true);

      await signInWith(token);
      await page.goto(`${server.origin}/searched`);
      await page.locator("a.list-item", { hasText: "quarterly-figures.txt" }).waitFor();
      // The header's search button shows because the public setting says an index exists.
      await page.locator(".header-right").getByText("K", { exact: true }).click();
      await page.locator("#search-input").fill("figures");
      await page.keyboard.press("Enter");
      await page.getByRole("dialog").getByText("quarterly-figures.txt").waitFor({ timeout: 10_000 });
      expect(blocked).toEqual([]);
    } finally {
      await dav?.close();
    }
  });

  it("previews a ZIP's tree and a text file inside it", async () => {
    const token = await adminToken();
    const dav = await startWebdav();
    try {
      await putOnWebdav(dav.url, "tree.zip", bytesOf(zipFixtures()["tree.zip"]!.base64));
      await mountWebdav(token, "/zips", dav.url);

      await signInWith(token);
      await page.goto(`${server.origin}/zips/tree.zip`);
      // The archive's tree, from archive/meta: its top-level names, a folder opened, then a file previewed.
      await page.getByText("readme.txt", { exact: true }).waitFor({ timeout: 15_000 });
      await page.getByText("données", { exact: true }).waitFor();
      await page.getByText("docs", { exact: true }).click();
      await page.getByText("guide.txt", { exact: true }).waitFor();
      await page.getByText("stored.bin", { exact: true }).waitFor();
      await page.goto(`${server.origin}/zips/tree.zip`);
      await page.getByText("readme.txt", { exact: true }).click();
      await page.getByText("hello from inside the zip").waitFor({ timeout: 15_000 });
      expect(blocked).toEqual([]);
    } finally {
      await dav.close();
    }
  });

  /** The upload dialog, from the tool bar (the round button in the bottom right corner opens it, unless open). */
  async function openUploadDialog() {
    const upload = page.locator('[tips="upload"]');
    if (!(await upload.isVisible())) {
      const viewport = page.viewportSize()!;
      await page.mouse.click(viewport.width - 36, viewport.height - 36);
    }
    await upload.click();
  }

  it("uploads a file larger than one chunk with the Multipart method, byte-exact, staging gone", async () => {
    const token = await adminToken();
    const auth = { Authorization: token, "Content-Type": "application/json" };
    const saved = await api("/api/admin/setting/save", {
      method: "POST",
      headers: auth,
      body: JSON.stringify([{ key: "multipart_chunk_size", value: "1" }]),
    });
    expect(saved.code, saved.message).toBe(200);
    let dav: (RunningServer & { url: string }) | undefined;
    try {
      dav = await startWebdav();
      await mountWebdav(token, "/chunked", dav.url);
      const chunks: string[] = [];
      page.on("request", (request) => {
        if (request.url().includes("/api/fs/multipart/")) chunks.push(new URL(request.url()).pathname);
      });
      const file = Buffer.alloc(2.5 * 1024 * 1024);
      for (let i = 0; i < file.length; i += 4) file.writeUInt32BE((i * 2654435761) >>> 0, i);
      await signInWith(token);
      await page.goto(`${server.origin}/chunked`);
      await page.getByText("readme.txt", { exact: true }).waitFor();
      await openUploadDialog();
      await page.locator('input[type="file"]:not([webkitdirectory])').setInputFiles({
        name: "chunked.bin",
        mimeType: "application/octet-stream",
        buffer: file,
      });
      const upstream = async () => {
        const response = await fetch(`${dav!.url}${DAV_ROOT}/chunked.bin`, { headers: { Authorization: DAV_BASIC } });
        return response.ok ? Buffer.from(await response.arrayBuffer()) : null;
      };
      await expect.poll(async () => (await upstream())?.equals(file), { timeout: 20_000 }).toBe(true);
      expect(chunks.filter((path) => path.endsWith("/chunk"))).toHaveLength(3);
      expect(chunks).toContain("/api/fs/multipart/complete");
      const listing = await fetch(`${dav.url}${DAV_ROOT}/`, {
        method: "PROPFIND",
        headers: { Authorization: DAV_BASIC, Depth: "1" },
      });
      expect(await listing.text()).not.toContain(".gatehouse-upload-");
      await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
      await page.getByRole("dialog").waitFor({ state: "detached" });
      expect(blocked).toEqual([]);
    } finally {
      await dav?.close();
    }
  });

  it("resumes a Multipart upload after the page is reloaded: the same file again sends only the missing chunks, byte-exact, nothing left pending", async () => {
    const token = await adminToken();
    const auth = { Authorization: token, "Content-Type": "application/json" };
    const saved = await api("/api/admin/setting/save", {
      method: "POST",
      headers: auth,
      body: JSON.stringify([{ key: "multipart_chunk_size", value: "1" }]),
    });
    expect(saved.code, saved.message).toBe(200);
    let dav: (RunningServer & { url: string }) | undefined;
    const chunkRoute = "**/api/fs/multipart/chunk";
    try {
      dav = await startWebdav();
      await mountWebdav(token, "/resumed", dav.url);
      // 4.5 MiB in chunks of 1 MiB: chunks 0 to 4.
      const file = Buffer.alloc(4.5 * 1024 * 1024);
      for (let i = 0; i < file.length; i += 4) file.writeUInt32BE((i * 2246822519) >>> 0, i);
      const target = `path=${encodeURIComponent("/resumed/resumed.bin")}&size=${file.length}`;
      // The first time, chunks from 2 on are held (never answered) until the page is gone.
      let holding = true;
      const held: Route[] = [];
      const sent: number[] = [];
      const stored: number[] = [];
      await page.route(chunkRoute, async (route) => {
        const index = Number(route.request().headers()["x-chunk-index"]);
        if (holding && index >= 2) return void held.push(route);
        sent.push(index);
        const response = await route.fetch();
        if ((await response.json()).code === 200) stored.push(index);
        await route.fulfill({ response });
      });
      // The UI resumes only with the whole file's hashes, which it sends when "Try rapid" is ticked.
      const upload = async () => {
        await page.getByText("readme.txt", { exact: true }).waitFor();
        await openUploadDialog();
        await page.getByRole("checkbox", { name: "Try rapid" }).check({ force: true });
        const initialised = page.waitForResponse((response) => response.url().endsWith("/api/fs/multipart/init"));
        await page.locator('input[type="file"]:not([webkitdirectory])').setInputFiles({
          name: "resumed.bin",
          mimeType: "application/octet-stream",
          buffer: file,
        });
        return (await (await initialised).json()).data;
      };
      await signInWith(token);
      await page.goto(`${server.origin}/resumed`);
      const first = await upload();
      expect(first).toMatchObject({ resumed: false, total_chunks: 5, received: [] });
      // Chunks 0 and 1 stored, and the next one in flight: the page is reloaded mid-upload.
      await expect.poll(() => [stored.length, held.length > 0]).toEqual([2, true]);
      await page.reload();
      holding = false;
      for (const route of held) await route.abort().catch(() => undefined);
      sent.length = 0;

      const second = await upload();
      expect(second).toMatchObject({ upload_id: first.upload_id, resumed: true, received: [[0, 1]] });
      const upstream = async () => {
        const response = await fetch(`${dav!.url}${DAV_ROOT}/resumed.bin`, { headers: { Authorization: DAV_BASIC } });
        return response.ok ? Buffer.from(await response.arrayBuffer()) : null;
      };
      await expect.poll(async () => (await upstream())?.equals(file), { timeout: 20_000 }).toBe(true);
      expect([...sent].sort()).toEqual([2, 3, 4]);
      // Nothing pending: no staging folder upstream, no live session left.
      const listing = await fetch(`${dav.url}${DAV_ROOT}/`, {
        method: "PROPFIND",
        headers: { Authorization: DAV_BASIC, Depth: "1" },
      });
      expect(await listing.text()).not.toContain(".gatehouse-upload-");
      expect((await api(`/api/fs/multipart/status?${target}`, { headers: auth })).code).toBe(404);
      await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
      await page.getByRole("dialog").waitFor({ state: "detached" });
      expect(blocked).toEqual([]);
    } finally {
      await page.unroute(chunkRoute);
      await dav?.close();
    }
  });

  it("uploads straight to an S3 bucket with the HTTP Direct method where the storage opted in", async () => {
    const token = await adminToken();
    const auth = { Authorization: token, "Content-Type": "application/json" };
    // With Multipart off, HTTP Direct is the first method the UI offers, so it is the one chosen.
    const saved = await api("/api/admin/setting/save", {
      method: "POST",
      headers: auth,
      body: JSON.stringify([{ key: "multipart_enabled", value: "false" }]),
    });
    expect(saved.code, saved.message).toBe(200);
    const s3 = await startS3({ cors: true });
    try {
      const s3Client = s3TestClient();
      expect((await s3Client.fetch(`${s3.endpoint}/${S3_BUCKET}/direct/keep`, { method: "PUT", body: "" })).ok).toBe(
        true,
      );
      const created = await api("/api/admin/storage/create", {
        method: "POST",
        headers: auth,
        body: JSON.stringify({
          mount_path: "/bucket",
          driver: "S3",
          addition: JSON.stringify({
            endpoint: s3.endpoint,
            bucket: S3_BUCKET,
            access_key_id: S3_ACCESS_KEY_ID,
            secret_access_key: S3_SECRET_ACCESS_KEY,
            root_folder_path: "/direct",
            placeholder: "keep",
            enable_direct_upload: true,
          }),
        }),
      });
      expect(created.code, created.message).toBe(200);
      // The one other origin this test lets the browser reach: the bucket.
      const direct: string[] = [];
      await context.route(`${s3.endpoint}/**`, (route) => {
        direct.push(`${route.request().method()} ${new URL(route.request().url()).pathname}`);
        return route.continue();
      });
      const file = Buffer.alloc(300_000, 7);
      await signInWith(token);
      const listed = page.waitForResponse((response) => response.url().endsWith("/api/fs/list"));
      await page.goto(`${server.origin}/bucket`);
      expect((await (await listed).json()).data.direct_upload_tools).toEqual(["HttpDirect"]);
      await openUploadDialog();
      await page.locator('input[type="file"]:not([webkitdirectory])').setInputFiles({
        name: "direct.bin",
        mimeType: "application/octet-stream",
        buffer: file,
      });
      await expect
        .poll(
          async () => {
            const response = await s3Client.fetch(`${s3.endpoint}/${S3_BUCKET}/direct/direct.bin`);
            return response.ok ? Buffer.from(await response.arrayBuffer()).equals(file) : false;
          },
          { timeout: 20_000 },
        )
        .toBe(true);
      expect(direct).toContain(`PUT /${S3_BUCKET}/direct/direct.bin`);
      expect(blocked).toEqual([]);
    } finally {
      await api("/api/admin/setting/save", {
        method: "POST",
        headers: auth,
        body: JSON.stringify([{ key: "multipart_enabled", value: "true" }]),
      });
      await s3.close();
    }
  });
});

describe("the task pages of the web UI", () => {
  /** A task's state as the API gives it (-1: no such task). */
  const stateOf = async (token: string, kind: string, id: string) =>
    ((await api(`/api/task/${kind}/info?tid=${id}`, { method: "POST", headers: { Authorization: token } })).data
      ?.state as number) ?? -1;
  /** A task's row on a task page: by its title and a button only that row has in its state. */
  const row = (title: string, button: string) =>
    page
      .locator("div")
      .filter({ hasText: title })
      .filter({ has: page.getByRole("button", { name: button, exact: true }) })
      .last();

  it("lists copy and offline-download tasks, shows a failure's error, retries it and cancels a running download", async () => {
    const token = await adminToken();
    const headers = { Authorization: token, "Content-Type": "application/json" };
    const post = (path: string, body: unknown) => api(path, { method: "POST", headers, body: JSON.stringify(body) });
    // A download that never ends by itself: headers, then a trickle, until the test lets it go.
    const trickles = new Set<ServerResponse>();
    const slow = createServer((_req, res) => {
      trickles.add(res);
      res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": String(64 * 1024 * 1024) });
      const timer = setInterval(() => res.write(Buffer.alloc(1024, 1)), 100);
      res.once("close", () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/endless.bin`;
    const source = await startWebdav();
    const target = await startWebdav();
    const downloads = await startDownloads();
    let replacement: (RunningServer & { url: string }) | undefined;
    try {
      for (const name of ["task-ok.txt", "task-fail.txt"])
        expect(
          (
            await fetch(`${source.url}${DAV_ROOT}/${name}`, {
              method: "PUT",
              headers: { Authorization: DAV_BASIC },
              body: `bytes of ${name}\n`,
            })
          ).ok,
        ).toBe(true);
      expect((await post("/api/admin/storage/create", webdavStorage("/tasksrc", source.url))).code).toBe(200);
      const created = await post("/api/admin/storage/create", webdavStorage("/taskdst", target.url));
      expect(created.code, created.message).toBe(200);
      const targetId = created.data.id as number;

      // One copy that succeeds (into the default R2 storage), one into a WebDAV server that stops as
      // soon as the task is accepted (its unit runs from the queue a moment later).
      const ok = await post("/api/fs/copy", {
        src_dir: "/tasksrc",
        dst_dir: "/",
        names: ["task-ok.txt"],
        overwrite: true,
      });
      expect(ok.code, ok.message).toBe(200);
      expect(ok.data.tasks[0].name).toMatch(/^copy \[\/tasksrc]\(.*\/task-ok\.txt\) to \[\/]\(\/\)$/);
      const failing = await post("/api/fs/copy", {
        src_dir: "/tasksrc",
        dst_dir: "/taskdst",
        names: ["task-fail.txt"],
        overwrite: true,
      });
      await target.close();
      expect(failing.code, failing.message).toBe(200);
      const failingId = failing.data.tasks[0].id as string;
      await expect.poll(() => stateOf(token, "copy", ok.data.tasks[0].id), { timeout: 15_000 }).toBe(2);
      await expect.poll(() => stateOf(token, "copy", failingId), { timeout: 20_000 }).toBe(7);

      // The copy page, signed in as the admin: both tasks by the names the UI parses, their states, the error.
      await signInWith(token);
      await page.goto(`${server.origin}/@manage/tasks/copy`);
      await row("task-ok.txt", "Delete").getByText("Succeeded", { exact: true }).waitFor({ timeout: 15_000 });
      const failedRow = row("task-fail.txt", "Retry");
      await failedRow.getByText("Failed", { exact: true }).waitFor();
      await failedRow.getByRole("button", { name: "Expand", exact: true }).click();
      const error = (await api(`/api/task/copy/info?tid=${failingId}`, { method: "POST", headers })).data
        .error as string;
      expect(error).not.toBe("");
      await page.getByText(error, { exact: true }).first().waitFor();

      // The target is back: the UI's Retry runs the copy again, and it lands.
      replacement = await startWebdav();
      const mended = await post("/api/admin/storage/update", webdavStorage("/taskdst", replacement.url, targetId));
      expect(mended.code, mended.message).toBe(200);
      await failedRow.getByRole("button", { name: "Retry", exact: true }).click();
      await expect.poll(() => stateOf(token, "copy", failingId), { timeout: 20_000 }).toBe(2);
      expect(
        await (
          await fetch(`${replacement.url}${DAV_ROOT}/task-fail.txt`, { headers: { Authorization: DAV_BASIC } })
        ).text(),
      ).toBe("bytes of task-fail.txt\n");
      await page.reload();
      await row("task-fail.txt", "Delete").getByText("Succeeded", { exact: true }).waitFor({ timeout: 15_000 });

      // The offline download page: a finished download, and one still running that the UI's Cancel stops.
      const fetched = await post("/api/fs/add_offline_download", {
        urls: [`${downloads.url}/bytes/5000/fetched.bin`],
        path: "/",
        tool: "SimpleHttp",
        delete_policy: "delete_on_upload_succeed",
      });
      expect(fetched.code, fetched.message).toBe(200);
      const endless = await post("/api/fs/add_offline_download", {
        urls: [slowUrl],
        path: "/",
        tool: "SimpleHttp",
        delete_policy: "delete_on_upload_succeed",
      });
      expect(endless.code, endless.message).toBe(200);
      const endlessId = endless.data.tasks[0].id as string;
      await expect
        .poll(() => stateOf(token, "offline_download", fetched.data.tasks[0].id), { timeout: 15_000 })
        .toBe(2);
      await expect.poll(() => stateOf(token, "offline_download", endlessId), { timeout: 15_000 }).toBe(1);
      await page.goto(`${server.origin}/@manage/tasks/offline_download`);
      await row(`${downloads.url}/bytes/5000/fetched.bin`, "Delete")
        .getByText("Succeeded", { exact: true })
        .waitFor({ timeout: 15_000 });
      const running = row(slowUrl, "Cancel");
      await running.getByText("Running", { exact: true }).waitFor({ timeout: 15_000 });
      await running.getByRole("button", { name: "Cancel", exact: true }).click();
      await expect.poll(() => stateOf(token, "offline_download", endlessId), { timeout: 15_000 }).toBe(4);
      const done = await api("/api/task/offline_download/done", { headers });
      expect(done.data).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: endlessId, state: 4, error: "context canceled" })]),
      );
      await page.reload();
      await row(slowUrl, "Delete").getByText("Canceled", { exact: true }).waitFor({ timeout: 15_000 });
      expect(blocked).toEqual([]);
    } finally {
      for (const res of trickles) res.destroy();
      await new Promise((resolve) => slow.close(resolve));
      await Promise.all([source.close(), target.close(), downloads.close(), replacement?.close()]);
    }
  }, 90_000);

  it("lists move tasks, shows a failure's error, retries it and cancels a running move; a source goes only once it all arrived", async () => {
    const token = await adminToken();
    const headers = { Authorization: token, "Content-Type": "application/json" };
    const move = (srcDir: string, dstDir: string, name: string) =>
      api("/api/fs/move", {
        method: "POST",
        headers,
        body: JSON.stringify({ src_dir: srcDir, dst_dir: dstDir, names: [name], overwrite: true }),
      });
    /** A file's bytes read from a WebDAV test server itself (null: not there). */
    const davBytes = async (address: string, name: string) => {
      const response = await fetch(`${address}${DAV_ROOT}/${name}`, { headers: { Authorization: DAV_BASIC } });
      return response.ok ? Buffer.from(await response.arrayBuffer()) : null;
    };
    const files = {
      "move-ok.bin": randomBytes(20_000),
      "move-fail.bin": randomBytes(20_000),
      // At the slow source's 10 KiB a second, about 100 s: still running whenever the test cancels it.
      "move-slow.bin": randomBytes(1024 * 1024),
    };
    const source = await startWebdav();
    const target = await startWebdav();
    const outage = await startWebdav();
    // The failing target refuses writes and the slow source trickles at the test's word, not by a
    // race with the queue (a server stopped after the request may be too late or too early).
    const outageGate = await startGatedProxy(outage.url);
    const slowSource = await startGatedProxy(source.url);
    try {
      for (const [name, bytes] of Object.entries(files)) await putOnWebdav(source.url, name, bytes);
      await mountWebdav(token, "/movesrc", source.url);
      await mountWebdav(token, "/movedst", target.url);
      await mountWebdav(token, "/moveout", outageGate.url);
      await mountWebdav(token, "/moveslow", slowSource.url);

      // A move that succeeds: the bytes at the target, byte-exact, and the source gone.
      const ok = await move("/movesrc", "/movedst", "move-ok.bin");
      expect(ok.code, ok.message).toBe(200);
      expect(ok.data.tasks[0].name).toBe("move [/movesrc](/move-ok.bin) to [/movedst](/)");
      await expect.poll(() => stateOf(token, "move", ok.data.tasks[0].id), { timeout: 15_000 }).toBe(2);
      expect((await davBytes(target.url, "move-ok.bin"))?.equals(files["move-ok.bin"])).toBe(true);
      expect(await davBytes(source.url, "move-ok.bin")).toBeNull();

      // A move into a target that drops every write fails, and its source stays whole.
      outageGate.refuseWrites = true;
      const failing = await move("/movesrc", "/moveout", "move-fail.bin");
      expect(failing.code, failing.message).toBe(200);
      const failingId = failing.data.tasks[0].id as string;
      await expect.poll(() => stateOf(token, "move", failingId), { timeout: 20_000 }).toBe(7);
      expect((await davBytes(source.url, "move-fail.bin"))?.equals(files["move-fail.bin"])).toBe(true);

      // The move page, signed in as the admin: both tasks by the names the UI parses, their states, the error.
      await signInWith(token);
      await page.goto(`${server.origin}/@manage/tasks/move`);
      await row("move-ok.bin", "Delete").getByText("Succeeded", { exact: true }).waitFor({ timeout: 15_000 });
      const failedRow = row("move-fail.bin", "Retry");
      await failedRow.getByText("Failed", { exact: true }).waitFor();
      await failedRow.getByRole("button", { name: "Expand", exact: true }).click();
      const error = (await api(`/api/task/move/info?tid=${failingId}`, { method: "POST", headers })).data
        .error as string;
      expect(error).not.toBe("");
      await page.getByText(error, { exact: true }).first().waitFor();

      // The target takes writes again: the UI's Retry moves the file, its source removed only once
      // the target holds all of it.
      outageGate.refuseWrites = false;
      await failedRow.getByRole("button", { name: "Retry", exact: true }).click();
      await expect
        .poll(
          async () => {
            const state = await stateOf(token, "move", failingId);
            if ((await davBytes(source.url, "move-fail.bin")) === null)
              expect((await davBytes(outage.url, "move-fail.bin"))?.equals(files["move-fail.bin"])).toBe(true);
            return state;
          },
          { timeout: 20_000 },
        )
        .toBe(2);
      expect((await davBytes(outage.url, "move-fail.bin"))?.equals(files["move-fail.bin"])).toBe(true);
      expect(await davBytes(source.url, "move-fail.bin")).toBeNull();
      await page.reload();
      await row("move-fail.bin", "Delete").getByText("Succeeded", { exact: true }).waitFor({ timeout: 15_000 });

      // A move from a slow source, canceled from the page while it runs: canceled, the source whole,
      // nothing left at the target.
      slowSource.slowReads = true;
      const slow = await move("/moveslow", "/movedst", "move-slow.bin");
      expect(slow.code, slow.message).toBe(200);
      const slowId = slow.data.tasks[0].id as string;
      await expect.poll(() => stateOf(token, "move", slowId), { timeout: 15_000 }).toBe(1);
      const running = row("move-slow.bin", "Cancel");
      await running.getByText("Running", { exact: true }).waitFor({ timeout: 15_000 });
      await running.getByRole("button", { name: "Cancel", exact: true }).click();
      await expect.poll(() => stateOf(token, "move", slowId), { timeout: 15_000 }).toBe(4);
      expect((await api(`/api/task/move/info?tid=${slowId}`, { method: "POST", headers })).data).toMatchObject({
        state: 4,
        error: "context canceled",
      });
      expect((await davBytes(source.url, "move-slow.bin"))?.equals(files["move-slow.bin"])).toBe(true);
      await expect.poll(() => davBytes(target.url, "move-slow.bin"), { timeout: 10_000 }).toBeNull();
      await page.reload();
      await row("move-slow.bin", "Delete").getByText("Canceled", { exact: true }).waitFor({ timeout: 15_000 });
      expect(blocked).toEqual([]);
    } finally {
      await Promise.all([outageGate.close(), slowSource.close()]);
      await Promise.all([source.close(), target.close(), outage.close()]);
    }
  }, 90_000);
});

/** A file of bytes that are no text: a download that is an error page or re-encoded does not match. */
const SHARED_FILE = randomBytes(50_000);
const SHARE_CODE = "open-sesame";

describe("a share link in the web UI", () => {
  it("is made from the file list, opened signed out with its code, and downloads the file byte-exact", async () => {
    const token = await adminToken();
    const dav = await startWebdav();
    try {
      await putOnWebdav(dav.url, "report.bin", SHARED_FILE);
      await mountWebdav(token, "/shared", dav.url);
      await shareThroughTheUi();
    } finally {
      await dav.close();
    }
  });
});

/** The admin shares /shared/report.bin with a code from the file list; a signed-out browser downloads it. */
async function shareThroughTheUi() {
  const owner = await sameOriginContext(browser, server.origin);
  const page = await owner.context.newPage();
  await page.goto(`${server.origin}/@login`);
  await page.locator('input[name="username"]').fill("admin");
  await page.locator('input[name="password"]').fill(ADMIN_PASSWORD);
  await page.getByRole("button", { name: "Login" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/@login"));

  await page.goto(`${server.origin}/shared`);
  await page.locator("a.list-item", { hasText: "report.bin" }).click({ button: "right" });
  await page.getByText("Share", { exact: true }).click();
  const dialog = page.getByRole("dialog");
  await dialog.locator('div:has(> button[aria-label="random"]) > input').fill(SHARE_CODE);
  const made = page.waitForResponse((response) => response.url().endsWith("/api/share/create"));
  await dialog.getByRole("button", { name: "Confirm" }).click();
  const reply = await (await made).json();
  expect(reply.code, reply.message).toBe(200);
  const summary = dialog.locator("textarea");
  await expect.poll(() => summary.inputValue()).toContain("/@s/");
  const link = /http:\/\/[^\s]+\/@s\/[\w-]+/.exec(await summary.inputValue())![0];
  expect(link).toBe(`${server.origin}/@s/${reply.data.id}`);
  expect(await summary.inputValue()).toContain(SHARE_CODE);
  expect(owner.blocked).toEqual([]);

  // A browser that never signed in.
  const visitor = await sameOriginContext(browser, server.origin);
  const anonymous = await visitor.context.newPage();
  await anonymous.goto(link);
  const prompt = anonymous.locator('input[type="password"]');
  await prompt.fill(SHARE_CODE);
  await anonymous.keyboard.press("Enter");
  await anonymous.getByText("report.bin").first().waitFor();
  const download = anonymous.waitForEvent("download");
  await anonymous.getByRole("button", { name: "Download" }).first().click();
  const file = await download;
  expect(file.url()).toMatch(new RegExp(`/sd/${reply.data.id}/`));
  const saved = await file.path();
  expect(Buffer.compare(await readFile(saved), SHARED_FILE)).toBe(0);
  expect(visitor.blocked).toEqual([]);
  await owner.context.close();
  await visitor.context.close();
}

/**
 * The management pages as each kind of user meets them, from the UI's own side menu list (its
 * manage chunk: every entry, and who may see it: the admin all, an ordinary user those marked
 * general or guest). Settings and Tasks are groups; their pages are the entries below them.
 */
const SETTINGS_PAGES = ["site", "style", "preview", "global", "sso", "ldap", "s3", "ftp", "traffic", "other"];
const TASK_PAGES = ["offline_download", "upload", "copy", "move", "decompress"];
const TASK_MENU = ["Offline Download", "Upload", "Copy", "Move", "Decompress"];
const ADMIN_MENU = [
  "Profile",
  ...["Site", "Style", "Preview", "Global", "Single Sign-On", "LDAP", "S3", "FTP", "Traffic", "Other"],
  ...TASK_MENU,
  ...["Users", "Storages", "Shares", "Metas", "Indexes", "Backup & Restore", "About", "Documentation", "Home"],
];
const MEMBER_MENU = ["Profile", ...TASK_MENU, "Shares", "About", "Documentation", "Home"];
const ADMIN_PAGES = [
  "",
  ...SETTINGS_PAGES.map((name) => `/settings/${name}`),
  ...TASK_PAGES.map((name) => `/tasks/${name}`),
  ...["/users", "/storages", "/shares", "/metas", "/indexes", "/backup-restore", "/about"],
];
const MEMBER_PAGES = ["", ...TASK_PAGES.map((name) => `/tasks/${name}`), "/shares", "/about"];
/** The About page shows OpenList's README, fetched from GitHub by the page itself (blocked here; it shows nothing then). */
const ABOUT_README = "https://raw.githubusercontent.com/OpenListTeam/OpenList/main/README.md";

/**
 * What went wrong on a page since the last `take()`: a reply from this origin with an HTTP error, an
 * API envelope whose code is not 200, a request that failed, a script error.
 */
function watchFailures(target: Page) {
  let failures: string[] = [];
  target.on("response", async (response) => {
    const url = new URL(response.url());
    if (url.origin !== server.origin) return;
    const what = `${response.request().method()} ${url.pathname}${url.search}`;
    if (response.status() >= 400) failures.push(`${what}: HTTP ${response.status()}`);
    if (!url.pathname.startsWith("/api/")) return;
    const text = await response.text().catch(() => null); // a body dropped by a navigation
    if (text === null) return;
    const envelope = JSON.parse(text) as { code: number; message: string };
    if (envelope.code !== 200) failures.push(`${what}: ${envelope.code} ${envelope.message}`);
  });
  target.on("requestfailed", (request) => {
    const url = new URL(request.url());
    const error = request.failure()?.errorText ?? "";
    // A poll cut short by the next page's navigation is not a failure of the page.
    if (url.origin === server.origin && error !== "net::ERR_ABORTED") failures.push(`${url.pathname}: ${error}`);
  });
  target.on("pageerror", (error) => failures.push(`script error: ${error.message}`));
  return {
    take() {
      const seen = failures;
      failures = [];
      return seen;
    },
  };
}

/** The side menu's entries, its two groups opened. */
async function sideMenu(target: Page): Promise<string[]> {
  await target.getByText("Tasks", { exact: true }).first().waitFor();
  for (const [group, first] of [
    ["Settings", "Site"],
    ["Tasks", "Offline Download"],
  ] as const) {
    const header = target.getByText(group, { exact: true }).first();
    if ((await header.isVisible()) && !(await target.getByRole("link", { name: first, exact: true }).isVisible()))
      await header.click();
  }
  await target.getByRole("link", { name: "Offline Download", exact: true }).waitFor();
  return target.locator("a[href]").evaluateAll((links) => links.map((link) => link.textContent!.trim()));
}

/** Opens every page in `pages` (below /@manage); what failed or was toasted on each, by page. */
async function visitEvery(target: Page, pages: string[], watch: ReturnType<typeof watchFailures>) {
  const problems: Record<string, string[]> = {};
  for (const path of pages) {
    watch.take();
    await target.goto(`${server.origin}/@manage${path}`);
    await target.waitForLoadState("networkidle");
    const toasts = await target.locator(".hope-notification").allTextContents();
    const seen = [...watch.take(), ...toasts.map((text) => `toast: ${text}`)];
    if (seen.length > 0) problems[path || "/"] = seen;
  }
  return problems;
}

describe("every page of the web UI, for the admin and for a user of a custom role", () => {
  const ARIA2_SECRET = "walk-aria2-secret";
  const QBIT = { username: "walker", password: "walk-qbit-password" };
  const NOTE = "A note shared with anyone who has the link.";
  let token: string;
  let memberToken: string;
  let memberRole: number;
  let services: { stop(): Promise<void> }[] = [];
  const call = async (path: string, body?: unknown, as = token) =>
    api(path, {
      method: body === undefined ? "GET" : "POST",
      headers: { Authorization: as, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const settingValues = async () =>
    Object.fromEntries(
      ((await call("/api/admin/setting/list")).data as { key: string; value: string }[]).map((s) => [s.key, s.value]),
    );

  beforeAll(async () => {
    token = await adminToken();
    // A user of a role made through the API (id 3 or more): it may write and share under /.
    const role = await call("/api/admin/role/create", {
      name: "members",
      permission_scopes: [{ path: "/", permission: 8 | (1 << 14) }],
    });
    expect(role.code, role.message).toBe(200);
    memberRole = role.data.id;
    expect(memberRole).toBeGreaterThanOrEqual(3);
    const member = await call("/api/admin/user/create", {
      username: "member",
      password: "member pw",
      role: [memberRole],
    });
    expect(member.code, member.message).toBe(200);
    const login = await api("/api/auth/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username: "member", password: "member pw" }),
    });
    memberToken = login.data.token;
    // What an admin sets up before the pages have something to talk to: the search index (the
    // Indexes page), and the offline-download services the Other page's first two Saves check.
    expect((await call("/api/admin/setting/save", [{ key: "search_index", value: "database" }])).code).toBe(200);
    const { startAria2, startQbittorrent, startTransmission } = await import("../support/offline-download-servers.ts");
    const [aria2, qbit, transmission] = await Promise.all([
      startAria2(ARIA2_SECRET),
      startQbittorrent(QBIT),
      startTransmission(QBIT),
    ]);
    services = [aria2, qbit, transmission];
    expect((await call("/api/admin/setting/set_aria2", { uri: aria2.url, secret: ARIA2_SECRET })).code).toBe(200);
    expect((await call("/api/admin/setting/set_qbit", { url: qbit.url, seedtime: "0" })).code).toBe(200);
    const setTransmission = await call("/api/admin/setting/set_transmission", { uri: transmission.url, seedtime: "0" });
    expect(setTransmission.code, setTransmission.message).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
  });

  it("shows the admin every page in the side menu, opens each without a failure, and saves every settings page unchanged", async () => {
    const walk = await sameOriginContext(browser, server.origin);
    const admin = await walk.context.newPage();
    const watch = watchFailures(admin);
    await admin.goto(`${server.origin}/@login`);
    await admin.evaluate((value) => localStorage.setItem("token", value), token);
    await admin.goto(`${server.origin}/@manage`);
    expect(await sideMenu(admin)).toEqual(ADMIN_MENU);

    const pages = await visitEvery(admin, ADMIN_PAGES, watch);

    // Each settings page saved as it stands: the success toast, and nothing changed.
    const before = await settingValues();
    const saves: Record<string, string> = {};
    for (const path of [...SETTINGS_PAGES.map((name) => `/settings/${name}`), "/indexes"]) {
      await admin.goto(`${server.origin}/@manage${path}`);
      await admin.waitForLoadState("networkidle");
      const buttons = admin.getByRole("button", { name: "Save", exact: true });
      const count = await buttons.count();
      expect(count, path).toBeGreaterThan(0);
      for (let index = 0; index < count; index++) {
        const reply = admin
          .waitForResponse((response) => /\/api\/admin\/setting\/(save|set_)/.test(response.url()), {
            timeout: 10_000,
          })
          .catch(() => null);
        await buttons.nth(index).click();
        const response = await reply;
        if (!response) {
          saves[`${path} Save #${index + 1}`] = "no request";
          continue;
        }
        const envelope = (await response.json()) as { code: number; message: string };
        saves[`${path} ${new URL(response.url()).pathname}`] = `${envelope.code} ${envelope.message}`;
      }
      if (path !== "/settings/other") await admin.getByText("Saved Successfully").first().waitFor();
    }
    // The cloud-drive tools' Saves answer their clear refusal (they need a storage driver Gatehouse
    // has not: docs/decisions.md D18.4); every other Save succeeds.
    const refusals = Object.fromEntries(
      Object.entries(CLOUD_DRIVE_TOOLS).map(([route, tool]) => [
        `/settings/other /api/admin/setting/${route}`,
        `400 ${cloudToolUnavailable(tool)}`,
      ]),
    );
    const failedSaves = Object.fromEntries(
      Object.entries(saves).filter(([save, reply]) => !reply.startsWith("200 ") && reply !== refusals[save]),
    );
    for (const save of Object.keys(refusals)) expect(saves[save], save).toBe(refusals[save]);
    expect(await settingValues()).toEqual(before);
    expect(walk.blocked.filter((url) => url !== ABOUT_README)).toEqual([]);
    // One expectation, so a failure lists every page and every Save that went wrong.
    expect({ pages, failedSaves }).toEqual({ pages: {}, failedSaves: {} });
    await walk.context.close();
  }, 180_000);

  it("lists users of every role on the users page: the admin, the guest, and a custom role as general", async () => {
    const walk = await sameOriginContext(browser, server.origin);
    const admin = await walk.context.newPage();
    const watch = watchFailures(admin);
    await admin.goto(`${server.origin}/@login`);
    await admin.evaluate((value) => localStorage.setItem("token", value), token);
    await admin.goto(`${server.origin}/@manage/users`);
    const rows = admin.locator("tbody tr");
    await rows.filter({ hasText: "member" }).waitFor();
    const table = await rows.evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 3).map((td) => td.textContent!.trim())),
    );
    expect(table).toEqual(
      expect.arrayContaining([
        ["admin", "/", "admin"],
        ["guest", "/", "guest"],
        ["member", "/", "general"],
      ]),
    );
    await admin.waitForLoadState("networkidle");
    expect(watch.take()).toEqual([]);
    expect(await admin.locator(".hope-notification").count()).toBe(0);
    await walk.context.close();
  });

  it("shows a user of a custom role the pages it may open, each without a failure", async () => {
    const walk = await sameOriginContext(browser, server.origin);
    const member = await walk.context.newPage();
    const watch = watchFailures(member);
    await member.goto(`${server.origin}/@login`);
    await member.evaluate((value) => localStorage.setItem("token", value), memberToken);
    await member.goto(`${server.origin}/@manage`);
    expect(await sideMenu(member)).toEqual(MEMBER_MENU);
    expect(await visitEvery(member, MEMBER_PAGES, watch)).toEqual({});
    expect(walk.blocked.filter((url) => url !== ABOUT_README)).toEqual([]);
    await walk.context.close();
  });

  it("previews a shared text file for a signed-out visitor when share_preview is on", async () => {
    const put = await fetch(`${server.origin}/api/fs/put`, {
      method: "PUT",
      headers: { Authorization: memberToken, "File-Path": encodeURIComponent("/shared note.txt") },
      body: NOTE,
    });
    expect(((await put.json()) as { code: number }).code).toBe(200);
    const share = await call(
      "/api/share/create",
      { files: ["/shared note.txt"], expires: null, pwd: "", max_accessed: 0, remark: "", readme: "", header: "" },
      memberToken,
    );
    expect(share.code, share.message).toBe(200);
    expect((await call("/api/admin/setting/save", [{ key: "share_preview", value: "true" }])).code).toBe(200);
    try {
      const visitor = await sameOriginContext(browser, server.origin);
      const anonymous = await visitor.context.newPage();
      const watch = watchFailures(anonymous);
      await anonymous.goto(`${server.origin}/@s/${share.data.id}`);
      // Download comes first (share_preview_download_by_default); the visitor picks a preview.
      await anonymous.getByText("Direct Download", { exact: true }).click();
      await anonymous.getByText("Markdown Render", { exact: true }).click();
      await anonymous.getByText(NOTE).waitFor();
      // The page asks who is signed in, and a signed-out visitor is the disabled guest (AList's answer).
      const guest = "GET /api/me: 401 Guest user is disabled, login please";
      expect(watch.take().filter((failure) => failure !== guest)).toEqual([]);
      // The preview read the share's own link: one delivered download of it.
      expect((await call(`/api/share/get?id=${share.data.id}`)).data.accessed).toBeGreaterThanOrEqual(1);
      expect(visitor.blocked).toEqual([]);
      await visitor.context.close();
    } finally {
      await call("/api/admin/setting/save", [{ key: "share_preview", value: "false" }]);
      await call("/api/fs/remove", { dir: "/", names: ["shared note.txt"] });
    }
  });

  it("previews a shared ZIP's listing and an entry for a signed-out visitor when share_archive_preview is on", async () => {
    const put = await fetch(`${server.origin}/api/fs/put`, {
      method: "PUT",
      headers: { Authorization: token, "File-Path": encodeURIComponent("/shared zips/tree.zip") },
      body: bytesOf(zipFixtures()["tree.zip"]!.base64),
    });
    expect(((await put.json()) as { code: number }).code).toBe(200);
    const share = await call("/api/share/create", {
      files: ["/shared zips"],
      expires: null,
      pwd: "",
      max_accessed: 0,
      remark: "",
      readme: "",
      header: "",
    });
    expect(share.code, share.message).toBe(200);
    const previews = {
      share_preview: "true",
      share_archive_preview: "true",
      share_preview_archives_by_default: "true",
      share_preview_download_by_default: "false",
    };
    const saved = await settingValues();
    expect(
      (
        await call(
          "/api/admin/setting/save",
          Object.entries(previews).map(([key, value]) => ({ key, value })),
        )
      ).code,
    ).toBe(200);
    try {
      const visitor = await sameOriginContext(browser, server.origin);
      const anonymous = await visitor.context.newPage();
      const watch = watchFailures(anonymous);
      await anonymous.goto(`${server.origin}/@s/${share.data.id}/tree.zip`);
      // The tree from archive/meta under /@s, then an entry through the link the UI builds
      // (/ae/<share id>/…), unsigned, under the default storage mounted at /.
      await anonymous.getByText("readme.txt", { exact: true }).waitFor({ timeout: 15_000 });
      await anonymous.getByText("docs", { exact: true }).waitFor();
      await anonymous.getByText("readme.txt", { exact: true }).click();
      await anonymous.getByText("hello from inside the zip").waitFor({ timeout: 15_000 });
      const guest = "GET /api/me: 401 Guest user is disabled, login please";
      expect(watch.take().filter((failure) => failure !== guest)).toEqual([]);
      // The entry is a delivered download of the share.
      expect((await call(`/api/share/get?id=${share.data.id}`)).data.accessed).toBeGreaterThanOrEqual(1);
      expect(visitor.blocked).toEqual([]);
      await visitor.context.close();
    } finally {
      await call(
        "/api/admin/setting/save",
        Object.keys(previews).map((key) => ({ key, value: saved[key]! })),
      );
      await call("/api/fs/remove", { dir: "/", names: ["shared zips"] });
    }
  });
});

describe("the access keys page", () => {
  it("makes a key whose secret is shown once and copied, lists it and revokes it", async () => {
    const keys = await sameOriginContext(browser, server.origin);
    await keys.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
    const page = await keys.context.newPage();
    // Signed out, the page sends to the web UI's sign-in.
    await page.goto(`${server.origin}/@keys`);
    await expect.poll(() => page.locator("#signed-out").isVisible()).toBe(true);

    await page.goto(`${server.origin}/@login`);
    await page.locator('input[name="username"]').fill("admin");
    await page.locator('input[name="password"]').fill(ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Login" }).click();
    await page.waitForURL((url) => !url.pathname.startsWith("/@login"));

    await page.goto(`${server.origin}/@keys`);
    await page.getByLabel("Name").fill("browser key");
    await page.getByLabel("Folder").fill("/");
    const made = page.waitForResponse((response) => response.url().endsWith("/api/me/access_key/create"));
    await page.getByRole("button", { name: "Create key" }).click();
    const reply = await (await made).json();
    expect(reply.code, reply.message).toBe(200);
    const secret = reply.data.secret as string;
    expect(await page.locator("#secret").textContent()).toBe(secret);

    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.getByRole("button", { name: "Copied" }).isVisible()).toBe(true);
    // A string: the tests are typed without the DOM library.
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(secret);

    // The key works as a token, read-only.
    const listed = await api("/api/fs/list", {
      method: "POST",
      headers: { Authorization: secret, "Content-Type": "application/json" },
      body: JSON.stringify({ path: "/" }),
    });
    expect(listed.code, listed.message).toBe(200);

    // Listed, and never shown again.
    const row = page.locator("#list tr", { hasText: "browser key" });
    await expect.poll(() => row.count()).toBe(1);
    await page.reload();
    await expect.poll(() => row.count()).toBe(1);
    expect(await page.content()).not.toContain(secret);
    expect(await row.locator("td").nth(2).textContent()).toBe("read only");

    await row.getByRole("button", { name: "Revoke browser key" }).click();
    await expect.poll(() => row.count()).toBe(0);
    const refused = await api("/api/fs/list", {
      method: "POST",
      headers: { Authorization: secret, "Content-Type": "application/json" },
      body: JSON.stringify({ path: "/" }),
    });
    expect(refused).toEqual({ code: 401, message: "token is invalidated", data: null });
    expect(keys.blocked).toEqual([]);
    await keys.context.close();
  });
});

describe("LDAP sign-in in the web UI", () => {
  it("signs a directory user in through the login page once LDAP is on, and signs nobody in with a wrong password", async () => {
    const directory = await startDirectory();
    const token = await adminToken();
    const headers = { Authorization: token, "Content-Type": "application/json" };
    const save = (values: Record<string, string>) =>
      api("/api/admin/setting/save", {
        method: "POST",
        headers,
        body: JSON.stringify(Object.entries(values).map(([key, value]) => ({ key, value }))),
      });
    try {
      const saved = await save({
        ldap_server: directory.url,
        ldap_manager_dn: LDAP_DIRECTORY.managerDn,
        ldap_manager_password: LDAP_DIRECTORY.managerPassword,
        ldap_user_search_base: LDAP_DIRECTORY.peopleBase,
        ldap_login_enabled: "true",
      });
      expect(saved.code, saved.message).toBe(200);
      const visitor = await sameOriginContext(browser, server.origin);
      const page = await visitor.context.newPage();
      // With ldap_login_enabled the page starts in LDAP mode (its ldap_login_tips switch is on).
      await page.goto(`${server.origin}/@login`);
      await page.locator('input[name="username"]').fill("alice");
      await page.locator('input[name="password"]').fill("not alice's password");
      const refused = page.waitForResponse((response) => response.url().endsWith("/api/auth/login/ldap"));
      await page.getByRole("button", { name: "Login" }).click();
      expect(await (await refused).json()).toMatchObject({ code: 400 });

      await page.locator('input[name="password"]').fill(LDAP_DIRECTORY.users.alice);
      const signedIn = page.waitForResponse((response) => response.url().endsWith("/api/auth/login/ldap"));
      await page.getByRole("button", { name: "Login" }).click();
      expect(await (await signedIn).json()).toMatchObject({ code: 200 });
      await page.waitForURL((url) => !url.pathname.startsWith("/@login"));
      const stored = await page.evaluate(() => localStorage.getItem("token"));
      expect((await api("/api/me", { headers: { Authorization: stored ?? "" } })).data).toMatchObject({
        username: "alice",
      });
      expect(visitor.blocked).toEqual([]);
      await visitor.context.close();
    } finally {
      // The other tests sign in with the password form.
      await save({ ldap_login_enabled: "false" });
      await directory.stop();
    }
  });
});
