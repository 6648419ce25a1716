// Single sign-on in a real browser (Debian's Chromium through playwright-core) against `npm start`
// and a real OpenID provider (oauth2-mock-server on 127.0.0.1, which approves at once): the login
// page's SSO button opens the popup, the popup goes through the provider and back to the callback,
// which hands the token to the login page, and the UI ends signed in. Requests to hosts other than
// the two fail the test.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, chromiumPath, launchChromium } from "../../scripts/browser.ts";
import { npmStart, type NpmStart } from "../support/npm-start.ts";
import { type OidcProvider, startOidcProvider } from "../support/oidc-provider.ts";

const ADMIN_PASSWORD = "browser sso test admin password";

let server: NpmStart;
let provider: OidcProvider;
let browser: Browser;
let context: BrowserContext;
const blocked: string[] = [];
/** Another site, whose page opens the SSO popup itself and listens for what comes back. */
let foreign: Server;
let foreignOrigin: string;

const api = async (path: string, init: RequestInit = {}) =>
  (await fetch(server.origin + path, init)).json() as Promise<{ code: number; message: string; data: any }>;

beforeAll(async () => {
  if (!chromiumAvailable())
    throw new Error(`no Chromium at ${chromiumPath}: apt-get install chromium (see .ci/run), or set CHROMIUM_PATH`);
  provider = await startOidcProvider({ sub: "browser-sub", preferred_username: "sso-browser" });
  server = await npmStart(ADMIN_PASSWORD);
  const login = await api("/api/auth/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
  });
  expect(login.code, login.message).toBe(200);
  const saved = await api("/api/admin/setting/save", {
    method: "POST",
    headers: { Authorization: login.data.token, "Content-Type": "application/json" },
    body: JSON.stringify([
      { key: "sso_login_platform", value: "OIDC" },
      { key: "sso_endpoint_name", value: provider.issuer },
      { key: "sso_client_id", value: "gatehouse-browser" },
      { key: "sso_client_secret", value: "browser-client-secret" },
      { key: "sso_oidc_username_key", value: "preferred_username" },
      { key: "sso_auto_register", value: "true" },
      { key: "sso_login_enabled", value: "true" },
    ]),
  });
  expect(saved.code, saved.message).toBe(200);
  foreign = createServer((_, response) => {
    response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    response.end("<!DOCTYPE html><title>another site</title><p>another site</p>");
  });
  await new Promise<void>((resolve) => foreign.listen(0, "127.0.0.1", resolve));
  foreignOrigin = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
  browser = await launchChromium();
  context = await browser.newContext();
  const allowed = new Set([server.origin, provider.issuer, foreignOrigin]);
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (allowed.has(new URL(url).origin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    blocked.push(url);
    return route.abort("blockedbyclient");
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await provider?.close();
  await new Promise((resolve) => foreign?.close(resolve));
});

describe("single sign-on in the browser", () => {
  it("signs in through the login page's SSO button and the provider's popup", async () => {
    const page: Page = await context.newPage();
    await page.goto(`${server.origin}/@login`);
    await page.getByRole("button", { name: "Login" }).waitFor();
    const popup = page.waitForEvent("popup");
    // The row under the form: the language menu, the colour mode switch, then the SSO icon (OIDC's).
    await page.locator("svg.hope-icon").last().click();
    const opened = await popup;
    await opened.waitForEvent("close", { timeout: 20_000 });
    await page.waitForURL((url) => !url.pathname.startsWith("/@login"), { timeout: 20_000 });
    const token = await page.evaluate(() => localStorage.getItem("token"));
    expect(token).toBeTruthy();
    const me = await api("/api/me", { headers: { Authorization: token ?? "" } });
    expect(me.data).toMatchObject({ username: "sso-browser", sso_id: `${provider.issuer}|browser-sub` });
    expect(blocked).toEqual([]);
  });

  it("hands the token to no other site's page that opens the popup", async () => {
    const page: Page = await context.newPage();
    await page.goto(foreignOrigin);
    const popup = page.waitForEvent("popup");
    // A string: the Node types have no DOM. The page keeps every message it receives.
    await page.evaluate(`
      window.received = [];
      window.addEventListener("message", (event) => window.received.push(event.data));
      window.open(${JSON.stringify(`${server.origin}/api/auth/sso?method=sso_get_token`)}, "authPopup", "width=500,height=600");
    `);
    const opened = await popup;
    // The callback's page ran (the provider approved at once) and closed itself.
    await opened.waitForEvent("close", { timeout: 20_000 });
    // A message posted to "*" would have arrived by now; give a late one a moment all the same.
    await page.waitForTimeout(200);
    expect(await page.evaluate("window.received")).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it("links the signed-in account from the profile page's SSO button", async () => {
    const login = await api("/api/auth/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
    });
    const page: Page = await context.newPage();
    await page.goto(`${server.origin}/@login`);
    await page.evaluate(`localStorage.setItem("token", ${JSON.stringify(login.data.token)})`);
    await page.goto(`${server.origin}/@manage`);
    const popup = page.waitForEvent("popup");
    await page.getByRole("button", { name: "Connect to Single Sign-On Platform" }).click();
    await (await popup).waitForEvent("close", { timeout: 20_000 });
    // The page saved the proof it received; the account now carries the identity it names.
    for (let tries = 0; ; tries++) {
      const me = await api("/api/me", { headers: { Authorization: login.data.token } });
      if (me.data.sso_id !== "" || tries === 50) {
        expect(me.data.sso_id).toBe(`${provider.issuer}|browser-sub`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(blocked).toEqual([]);
  });
});
