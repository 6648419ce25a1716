// Passkeys through the served web UI in real Chromium, with a WebAuthn virtual authenticator
// (Chrome DevTools Protocol): the admin turns the setting on, registers a passkey on the profile
// page, signs out, signs in with it on the login page, deletes it and is refused. The page is opened
// on `localhost`: browsers refuse an IP address as a relying party ID.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, chromiumPath, launchChromium, sameOriginContext } from "../../scripts/browser.ts";
import { npmStart, type NpmStart } from "../support/npm-start.ts";

const ADMIN_PASSWORD = "browser passkey admin password";

let server: NpmStart;
let origin: string;
let browser: Browser;
let context: BrowserContext;
let blocked: string[];
let page: Page;
let authenticatorId: string;

beforeAll(async () => {
  if (!chromiumAvailable())
    throw new Error(`no Chromium at ${chromiumPath}: apt-get install chromium (see .ci/run), or set CHROMIUM_PATH`);
  server = await npmStart(ADMIN_PASSWORD);
  origin = server.origin.replace("//127.0.0.1:", "//localhost:");
  browser = await launchChromium();
  ({ context, blocked } = await sameOriginContext(browser, origin));
  page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  ({ authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  }));
  expect(authenticatorId).toBeTruthy();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

type Envelope = { code: number; message: string; data: any };
const api = async (path: string, init: RequestInit = {}) =>
  (await fetch(server.origin + path, init)).json() as Promise<Envelope>;

async function signInWithPassword() {
  await page.goto(`${origin}/@login`);
  await page.locator('input[name="username"]').fill("admin");
  await page.locator('input[name="password"]').fill(ADMIN_PASSWORD);
  await page.getByRole("button", { name: "Login" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/@login"));
}

async function signOut() {
  await page.evaluate(() => localStorage.removeItem("token"));
}

/**
 * A passkey sign-in on the login page, no user name typed. With the setting on, the page asks for a
 * passkey as it loads (conditional mediation, the autofill prompt), which the virtual authenticator
 * answers; if it has not, the fingerprint icon under the form switches it to passkeys and Login asks.
 */
async function signInWithPasskey(path: "conditional" | "button"): Promise<Envelope> {
  const finished = page.waitForResponse((response) => response.url().includes("/api/authn/webauthn_finish_login"));
  await page.goto(`${origin}/@login`);
  await page.locator('input[name="username"]').waitFor();
  const early = await Promise.race([finished, new Promise<null>((resolve) => setTimeout(() => resolve(null), 3000))]);
  expect(early === null ? "button" : "conditional").toBe(path);
  if (early === null) {
    await page.locator("svg.hope-icon").last().click();
    await page.getByRole("button", { name: "Login" }).click();
  }
  return (await (early ?? (await finished)).json()) as Envelope;
}

describe("passkeys in the web UI", () => {
  it("turns the setting on, registers a passkey on the profile page, signs in with it, deletes it and is refused", async () => {
    await signInWithPassword();

    // The setting, through Settings → Global.
    await page.goto(`${origin}/@manage/settings/global`);
    const toggle = page.locator("#webauthn_login_enabled");
    await toggle.waitFor({ state: "attached" });
    await toggle.check({ force: true });
    const saved = page.waitForResponse((response) => response.url().endsWith("/api/admin/setting/save"));
    await page.getByRole("button", { name: "Save", exact: true }).click();
    expect(await (await saved).json()).toMatchObject({ code: 200 });
    const settings = await api("/api/public/settings");
    expect(settings.data.webauthn_login_enabled).toBe("true");

    // Registration on the profile page.
    await page.goto(`${origin}/@manage`);
    const registered = page.waitForResponse((response) =>
      response.url().endsWith("/api/authn/webauthn_finish_registration"),
    );
    await page.getByRole("button", { name: "Add a WebAuthn credential" }).click();
    expect(await (await registered).json()).toEqual({ code: 200, message: "success", data: "Registered Successfully" });
    const cdp = await context.newCDPSession(page);
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    expect(credentials[0]!.rpId).toBe("localhost");
    await page.reload();
    await page.getByText(/Fingerprint: /).waitFor();

    // Signed out, then in with the passkey and no user name: as the login page offers it on load.
    await signOut();
    const signedIn = await signInWithPasskey("conditional");
    expect(signedIn.code, signedIn.message).toBe(200);
    await page.waitForURL((url) => !url.pathname.startsWith("/@login"));
    const token = await page.evaluate(() => localStorage.getItem("token"));
    expect(token).toBe(signedIn.data.token);
    const me = await api("/api/me", { headers: { Authorization: token! } });
    expect(me.data.username).toBe("admin");
    const listed = await api("/api/authn/getcredentials", { headers: { Authorization: token! } });
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0].last_used_at).not.toBeNull();

    // In a browser without the autofill prompt: the fingerprint icon and Login.
    await signOut();
    await page.addInitScript("PublicKeyCredential.isConditionalMediationAvailable = async () => false;");
    const again = await signInWithPasskey("button");
    expect(again.code, again.message).toBe(200);
    await page.waitForURL((url) => !url.pathname.startsWith("/@login"));

    // Deleted on the profile page: the authenticator still offers it, the server refuses it.
    await page.goto(`${origin}/@manage`);
    await page.getByText(/Fingerprint: /).waitFor();
    const deleted = page.waitForResponse((response) => response.url().endsWith("/api/authn/delete_authn"));
    await page.getByRole("button", { name: "Delete" }).click();
    expect(await (await deleted).json()).toEqual({ code: 200, message: "success", data: null });
    await signOut();
    const refused = await signInWithPasskey("button");
    expect(refused).toEqual({ code: 400, message: "unknown passkey", data: null });
    await page.getByText("unknown passkey").first().waitFor();
    expect(new URL(page.url()).pathname).toBe("/@login");
    expect(blocked).toEqual([]);
  });
});
