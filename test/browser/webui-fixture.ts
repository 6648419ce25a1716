// What the web UI's browser tests share: `npm start` on a fresh database and Debian's Chromium
// (playwright-core), one of each per test file, and the calls a test makes beside the browser. A
// file calls `useWebUi()` once at its top; `server`, `browser`, `context`, `blocked` and `page` are
// set before its first test. Requests to any other host are blocked and recorded in `blocked`, so
// a missing local asset fails the test that loaded it.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { chromiumAvailable, chromiumPath, launchChromium, sameOriginContext } from "../../scripts/browser.ts";
import { npmStart, type NpmStart } from "../support/npm-start.ts";
import { DAV_ROOT, DAV_USER } from "../support/storage-servers.ts";

export const ADMIN_PASSWORD = "browser test admin password";

export let server: NpmStart;
export let browser: Browser;
export let context: BrowserContext;
export let blocked: string[];
export let page: Page;

/** Starts Gatehouse and the browser before the calling file's tests, and stops both after them. */
export function useWebUi(): void {
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
}

export const api = async (path: string, init: RequestInit = {}) =>
  (await fetch(server.origin + path, init)).json() as Promise<{ code: number; message: string; data: any }>;
export async function adminToken(): Promise<string> {
  const reply = await api("/api/auth/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
  });
  expect(reply.code).toBe(200);
  return reply.data.token as string;
}

/** A storage of the WebDAV test server at `address`, mounted at `mountPath` (`id`: for an update). */
export const webdavStorage = (mountPath: string, address: string, id?: number) => ({
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
export async function mountWebdav(token: string, mountPath: string, address: string) {
  const created = await api("/api/admin/storage/create", {
    method: "POST",
    headers: { Authorization: token, "Content-Type": "application/json" },
    body: JSON.stringify(webdavStorage(mountPath, address)),
  });
  expect(created.code, created.message).toBe(200);
  return created.data.id as number;
}

/** The WebDAV test server's own login, for checks made on it directly. */
export const DAV_BASIC = `Basic ${Buffer.from(`${DAV_USER.username}:${DAV_USER.password}`).toString("base64")}`;

/** Writes a file straight to the WebDAV test server, for the UI to find through Gatehouse. */
export async function putOnWebdav(address: string, name: string, body: BodyInit) {
  const put = await fetch(`${address}${DAV_ROOT}/${name}`, {
    method: "PUT",
    headers: { Authorization: DAV_BASIC },
    body,
  });
  expect(put.ok).toBe(true);
}

/** The UI signed in with `token` (kept where it keeps its own), whatever ran before: a test may run alone. */
export async function signInWith(token: string): Promise<void> {
  await page.goto(`${server.origin}/@login`);
  await page.evaluate((value) => localStorage.setItem("token", value), token);
}

/**
 * Opens the tool bar (upload, new folder, …): the round button in the bottom right corner toggles
 * it, and the UI keeps it open from one folder to the next.
 */
export async function openToolbar(): Promise<void> {
  const viewport = page.viewportSize()!;
  const upload = page.locator('[tips="upload"]');
  await expect
    .poll(async () => {
      if (!(await upload.isVisible())) await page.mouse.click(viewport.width - 36, viewport.height - 36);
      return upload.isVisible();
    })
    .toBe(true);
}
