// The web UI in a real browser against `npm start`, as a new user meets it: open the URL, sign in,
// use the management pages, store a file in the storage a fresh install mounts (R2 through the
// Worker's binding), share a file and open the link signed out.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { measureLoad, sameOriginContext } from "../../scripts/browser.ts";
import {
  DAV_ROOT,
  type RunningServer,
  S3_ACCESS_KEY_ID,
  S3_BUCKET,
  S3_SECRET_ACCESS_KEY,
  s3TestClient,
  startS3,
  startWebdav,
} from "../support/storage-servers.ts";
import { bytesOf, zipFixtures } from "../support/zip-fixtures.ts";
import {
  ADMIN_PASSWORD,
  adminToken,
  api,
  blocked,
  browser,
  context,
  DAV_BASIC,
  mountWebdav,
  openToolbar,
  page,
  putOnWebdav,
  server,
  signInWith,
  useWebUi,
} from "./webui-fixture.ts";

useWebUi();

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
      // Chunks 0 and 1 stored, and the next one in flight: the page is reloaded mid-upload. Two
      // chunks through wrangler dev to the WebDAV server can take seconds on a loaded machine.
      await expect.poll(() => [stored.length, held.length > 0], { timeout: 20_000 }).toEqual([2, true]);
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
