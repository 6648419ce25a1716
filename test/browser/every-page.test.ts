import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sameOriginContext } from "../../scripts/browser.ts";
import { bytesOf, zipFixtures } from "../support/zip-fixtures.ts";
import { cloudToolUnavailable } from "../../src/features/settings/messages.ts";
import { CLOUD_DRIVE_TOOLS } from "../../src/features/settings/rules.ts";
import { adminToken, api, browser, server, useWebUi } from "./webui-fixture.ts";

useWebUi();

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
