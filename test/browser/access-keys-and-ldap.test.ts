import { describe, expect, it } from "vitest";
import { sameOriginContext } from "../../scripts/browser.ts";
import { LDAP_DIRECTORY } from "../support/ldap-directory.ts";
import { startDirectory } from "../support/ldap-server.ts";
import { ADMIN_PASSWORD, adminToken, api, browser, server, useWebUi } from "./webui-fixture.ts";

useWebUi();

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
