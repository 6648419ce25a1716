// Single sign-on in workerd against a real OpenID provider (oauth2-mock-server on 127.0.0.1,
// test/support/oidc-provider.ts): the Worker discovers it, sends the browser there, exchanges the
// code with PKCE and verifies the ID token against its published keys. Each test follows the
// redirects as the browser would, shaping the ID token through the provider's test parameters.
import { exports } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { call, callApi, type Envelope, signIn } from "../../../test/support/workerd-client.ts";

const issuer = inject("oidcIssuer");
/** A port where nothing listens (storage-servers-global-setup.ts). */
const deadPort = inject("storageServers").deadPort;
const SITE = "http://gatehouse.test";
const CLIENT_ID = "gatehouse-test";

const SETTINGS: Record<string, string> = {
  sso_login_enabled: "true",
  sso_login_platform: "OIDC",
  sso_endpoint_name: issuer,
  sso_client_id: CLIENT_ID,
  sso_client_secret: "s3cret-of-the-client",
  sso_oidc_username_key: "preferred_username",
  sso_auto_register: "true",
  sso_default_dir: "/sso-home",
  sso_default_permission: "258",
  sso_compatibility_mode: "false",
};
let saved: unknown[][] = [];

async function setSettings(values: Record<string, string>) {
  for (const [key, value] of Object.entries(values)) {
    await sql("UPDATE settings SET value = ? WHERE key = ?", [value, key]);
  }
}

beforeAll(async () => {
  saved = await sql(
    `SELECT key, value FROM settings WHERE key IN (${Object.keys(SETTINGS)
      .map(() => "?")
      .join(",")})`,
    Object.keys(SETTINGS),
  );
  await setSettings(SETTINGS);
});
afterEach(async () => {
  await setSettings(SETTINGS);
  await sql("DELETE FROM users WHERE sso_id <> '' OR username LIKE 'sso-%'");
  await sql("DELETE FROM sso_states");
});
afterAll(async () => {
  await setSettings(Object.fromEntries(saved as [string, string][]));
});

const worker = (path: string) => exports.default.fetch(new Request(`${SITE}${path}`, { redirect: "manual" }));

/** GET /api/auth/sso: the provider's authorization URL it redirects to. */
async function begin(method = "sso_get_token"): Promise<URL> {
  const reply = await worker(`/api/auth/sso?method=${method}`);
  expect(reply.status, await reply.clone().text()).toBe(302);
  return new URL(reply.headers.get("Location") ?? "");
}

interface Shaping {
  claims?: Record<string, unknown>;
  foreignKey?: boolean;
}

/** The browser at the provider (which approves at once): the callback URL it is sent back to. */
async function authorize(url: URL, shaping: Shaping = {}): Promise<URL> {
  const at = new URL(url);
  at.searchParams.set("test_claims", JSON.stringify(shaping.claims ?? {}));
  if (shaping.foreignKey) at.searchParams.set("test_key", "foreign");
  const reply = await fetch(at, { redirect: "manual" });
  expect(reply.status).toBe(302);
  return new URL(reply.headers.get("Location") ?? "");
}

const envelope = async (reply: Response): Promise<Envelope> => reply.json();
const callback = (url: URL) => worker(`${url.pathname}${url.search}`);

/** The whole round: begin, the provider, the callback's reply. */
async function signInVia(shaping: Shaping, method = "sso_get_token") {
  return callback(await authorize(await begin(method), shaping));
}

/** The data the callback's page hands over, and what its script does with it. */
async function pageData(reply: Response): Promise<{ message: Record<string, string>; fallback: string }> {
  expect(reply.status).toBe(200);
  expect(reply.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  const html = await reply.text();
  const data = /<script type="application\/json" id="sso">(.*?)<\/script>/s.exec(html)?.[1];
  expect(data, html).toBeDefined();
  return JSON.parse(data ?? "{}");
}

const alice = { sub: "alice-sub", preferred_username: "sso-alice" };
const userRows = () => sql("SELECT username, base_path, permission, sso_id, disabled FROM users ORDER BY id");

describe("single sign-on: the provider's redirect", () => {
  it("sends the browser to the provider found by discovery, with state, nonce and an S256 challenge", async () => {
    const trips = await roundTrips();
    const url = await begin();
    expect(await trips.count()).toBe(2);
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/authorize`);
    const query = Object.fromEntries(url.searchParams);
    expect(query).toMatchObject({
      response_type: "code",
      client_id: CLIENT_ID,
      redirect_uri: `${SITE}/api/auth/sso_callback`,
      scope: "openid profile",
      code_challenge_method: "S256",
    });
    expect(query.state).toMatch(/^[\w-]{43}$/);
    expect(query.nonce).toMatch(/^[\w-]{43}$/);
    expect(query.code_challenge).toMatch(/^[\w-]{43}$/);
    // Stored server-side, bound to the method; the verifier never left the server.
    const [[method, nonce, verifier]] = (await sql(
      "SELECT method, nonce, code_verifier FROM sso_states WHERE state = ?",
      [query.state ?? ""],
    )) as [[string, string, string]];
    expect(method).toBe("sso_get_token");
    expect(nonce).toBe(query.nonce);
    expect(url.href).not.toContain(verifier);
  });

  it("adds sso_extra_scopes and uses site_url for the redirect URI when it is absolute", async () => {
    await setSettings({ sso_extra_scopes: "email groups" });
    // Not in the table by default (fs/routes.ts reads it the same way).
    await sql("INSERT OR REPLACE INTO settings (key, value) VALUES ('site_url', 'https://files.example.com/')");
    try {
      const url = await begin();
      expect(url.searchParams.get("scope")).toBe("openid profile email groups");
      expect(url.searchParams.get("redirect_uri")).toBe("https://files.example.com/api/auth/sso_callback");
    } finally {
      await sql("DELETE FROM settings WHERE key = 'site_url'");
      await setSettings({ sso_extra_scopes: "" });
    }
  });

  it("refuses when single sign-on is off, another platform, unconfigured, or without a method", async () => {
    await setSettings({ sso_login_enabled: "false" });
    expect(await call("/api/auth/sso?method=sso_get_token")).toEqual({
      code: 403,
      message: "Single sign-on is not enabled",
      data: null,
    });
    await setSettings({ sso_login_enabled: "true", sso_login_platform: "Github" });
    expect(await call("/api/auth/sso?method=sso_get_token")).toEqual({
      code: 400,
      message: "single sign-on supports the OIDC platform only (sso_login_platform)",
      data: null,
    });
    await setSettings({ sso_login_platform: "OIDC", sso_client_id: "" });
    expect((await call("/api/auth/sso?method=sso_get_token")).message).toBe(
      "single sign-on is not configured: sso_endpoint_name and sso_client_id are needed",
    );
    expect(await call("/api/auth/sso")).toEqual({ code: 400, message: "no method provided", data: null });
    expect((await call("/api/auth/sso?method=steal")).message).toBe("method must be sso_get_token or get_sso_id");
    expect(await sql("SELECT count(*) FROM sso_states")).toEqual([[0]]);
  });

  it("keeps the popup's opener: the UI's page lets popups keep it, the SSO routes do not isolate", async () => {
    const page = await worker("/@login");
    expect(page.headers.get("Cross-Origin-Opener-Policy")).toBe("same-origin-allow-popups");
    await page.body?.cancel();
    const redirect = await worker("/api/auth/sso?method=sso_get_token");
    expect(redirect.headers.get("Cross-Origin-Opener-Policy")).toBe("unsafe-none");
    // A refusal is the API's envelope, under the API's policy.
    await setSettings({ sso_login_enabled: "false" });
    const refused = await worker("/api/auth/sso?method=sso_get_token");
    expect(refused.headers.get("Content-Security-Policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(await refused.json()).toMatchObject({ code: 403 });
  });

  it("refuses a provider that cannot be reached", async () => {
    await setSettings({ sso_endpoint_name: `http://127.0.0.1:${deadPort}` });
    const reply = await call("/api/auth/sso?method=sso_get_token");
    expect(reply.code).toBe(400);
    expect(reply.message).toMatch(/^the OpenID provider's discovery document could not be read: /);
  });
});

describe("single sign-on: the callback", () => {
  it("signs a new identity in, registering it with the default folder and permission, and hands the token to our origin only", async () => {
    const reply = await signInVia({ claims: alice });
    const policy = reply.headers.get("Content-Security-Policy") ?? "";
    expect(policy).toMatch(/^default-src 'none'; script-src 'sha256-[\w+/]+=*'; /);
    expect(reply.headers.get("Cache-Control")).toBe("no-store");
    expect(reply.headers.get("Cross-Origin-Opener-Policy")).toBe("unsafe-none");
    const html = await reply.clone().text();
    expect(html).toContain("window.opener.postMessage(d.message,location.origin)");
    expect(html).not.toContain('"*"');
    const { message, fallback } = await pageData(reply);
    expect(fallback).toBe(`/@login?token=${encodeURIComponent(message.token ?? "")}`);

    const me = await call("/api/me", { headers: { Authorization: message.token ?? "" } });
    expect(me.data).toMatchObject({ username: "sso-alice", base_path: "/sso-home", permission: 258 });
    expect(me.data.sso_id).toBe(`${issuer}|alice-sub`);
    expect(await sql("SELECT count(*) FROM device_sessions WHERE user_id = ?", [me.data.id])).toEqual([[1]]);

    // The same identity again: the same account, no second one.
    const again = await pageData(await signInVia({ claims: { ...alice, preferred_username: "renamed" } }));
    expect((await call("/api/me", { headers: { Authorization: again.message.token ?? "" } })).data.id).toBe(me.data.id);
    expect((await userRows()).filter(([name]) => String(name).startsWith("sso-") || name === "renamed")).toEqual([
      ["sso-alice", "/sso-home", 258, `${issuer}|alice-sub`, 0],
    ]);
  });

  it("signs a linked account in with three round trips after the provider's", async () => {
    await sql(
      "INSERT INTO users (username, password_hash, base_path, role, sso_id) VALUES ('sso-linked', 'x', '/', '[]', ?)",
      [`${issuer}|linked-sub`],
    );
    await setSettings({ sso_auto_register: "false" });
    const url = await authorize(await begin(), { claims: { sub: "linked-sub" } });
    const trips = await roundTrips();
    const { message } = await pageData(await callback(url));
    expect(await trips.count()).toBe(3);
    expect((await call("/api/me", { headers: { Authorization: message.token ?? "" } })).data.username).toBe(
      "sso-linked",
    );
  });

  it("refuses an unknown identity when auto-registration is off, creating nothing", async () => {
    await setSettings({ sso_auto_register: "false" });
    const before = await userRows();
    expect(await envelope(await signInVia({ claims: alice }))).toEqual({
      code: 403,
      message:
        "no account is linked to this identity: link it from the profile page, or ask the admin to enable sso_auto_register",
      data: null,
    });
    expect(await userRows()).toEqual(before);
  });

  it("refuses a disabled account in the callback, opening no session", async () => {
    await sql(
      "INSERT INTO users (username, password_hash, base_path, role, sso_id, disabled) VALUES ('sso-off', 'x', '/', '[]', ?, 1)",
      [`${issuer}|off-sub`],
    );
    expect(await envelope(await signInVia({ claims: { sub: "off-sub" } }))).toEqual({
      code: 403,
      message: "Current user is disabled, replace please",
      data: null,
    });
    expect(
      await sql(
        "SELECT count(*) FROM device_sessions WHERE user_id = (SELECT id FROM users WHERE username = 'sso-off')",
      ),
    ).toEqual([[0]]);
  });

  it("never signs an identity in as the local account its name matches", async () => {
    const reply = await envelope(await signInVia({ claims: { sub: "evil-sub", preferred_username: "admin" } }));
    expect(reply).toEqual({ code: 400, message: "username admin is already taken", data: null });
    expect(await sql("SELECT sso_id FROM users WHERE username = 'admin'")).toEqual([[""]]);
  });

  it("refuses an identity linked to two accounts", async () => {
    for (const name of ["sso-one", "sso-two"]) {
      await sql("INSERT INTO users (username, password_hash, base_path, role, sso_id) VALUES (?, 'x', '/', '[]', ?)", [
        name,
        `${issuer}|twice-sub`,
      ]);
    }
    expect((await envelope(await signInVia({ claims: { sub: "twice-sub" } }))).message).toBe(
      "this identity is linked to more than one account; the admin must keep one",
    );
  });

  it("refuses a tampered state, and the real one still works once", async () => {
    const url = await authorize(await begin(), { claims: alice });
    const tampered = new URL(url);
    const state = url.searchParams.get("state") ?? "";
    tampered.searchParams.set("state", `${state.slice(0, -1)}${state.endsWith("A") ? "B" : "A"}`);
    const refusal = { code: 400, message: "incorrect or expired state parameter", data: null };
    expect(await envelope(await callback(tampered))).toEqual(refusal);
    const missing = new URL(url);
    missing.searchParams.delete("state");
    expect(await envelope(await callback(missing))).toEqual(refusal);
    expect(await sql("SELECT count(*) FROM users WHERE username = 'sso-alice'")).toEqual([[0]]);
    expect((await pageData(await callback(url))).message.token).toBeTruthy();
  });

  it("refuses a state used already: the second callback gets nothing", async () => {
    const url = await authorize(await begin(), { claims: alice });
    await pageData(await callback(url));
    expect(await envelope(await callback(url))).toEqual({
      code: 400,
      message: "incorrect or expired state parameter",
      data: null,
    });
  });

  it("refuses an expired state", async () => {
    const url = await authorize(await begin(), { claims: alice });
    await sql("UPDATE sso_states SET expires_at = 1");
    expect((await envelope(await callback(url))).message).toBe("incorrect or expired state parameter");
    expect(await sql("SELECT count(*) FROM sso_states")).toEqual([[0]]);
  });

  it.each([
    [
      "another sign-in's nonce",
      { claims: { ...alice, nonce: "not-this-sign-in" } },
      "the ID token was refused: its nonce is not this sign-in's",
    ],
    [
      "a null nonce",
      { claims: { ...alice, nonce: null } },
      "the ID token was refused: its nonce is not this sign-in's",
    ],
    [
      "another client's audience",
      { claims: { ...alice, aud: "another-client" } },
      'the ID token was refused: unexpected "aud" claim value',
    ],
    [
      "another issuer",
      { claims: { ...alice, iss: "http://127.0.0.1:1" } },
      'the ID token was refused: unexpected "iss" claim value',
    ],
    [
      "a key the provider does not publish",
      { claims: alice, foreignKey: true },
      "the ID token was refused: signature verification failed",
    ],
    [
      "an expiry past",
      { claims: { ...alice, exp: 1000 } },
      'the ID token was refused: "exp" claim timestamp check failed',
    ],
    [
      "several audiences issued to another",
      { claims: { ...alice, aud: [CLIENT_ID, "other"], azp: "other" } },
      "the ID token was refused: it was issued to another client (azp)",
    ],
  ] as [string, Shaping, string][])("refuses an ID token with %s, creating nothing", async (_, shaping, message) => {
    const before = await userRows();
    expect(await envelope(await signInVia(shaping))).toEqual({ code: 400, message, data: null });
    expect(await userRows()).toEqual(before);
    expect(await sql("SELECT count(*) FROM sso_states")).toEqual([[0]]);
  });

  it("refuses the provider's own refusal, and a callback without a code", async () => {
    const url = await authorize(await begin(), { claims: alice });
    const denied = new URL(url);
    denied.searchParams.delete("code");
    denied.searchParams.set("error", "access_denied");
    expect((await envelope(await callback(denied))).message).toBe("the provider refused the sign-in: access_denied");
    const again = await authorize(await begin(), { claims: alice });
    again.searchParams.delete("code");
    expect((await envelope(await callback(again))).message).toBe("the provider sent no authorization code");
  });

  it("refuses a code the provider does not know (the verifier is the state's, the code forged)", async () => {
    const url = await authorize(await begin(), { claims: alice });
    url.searchParams.set("code", "forged-code");
    const reply = await envelope(await callback(url));
    expect(reply.code).toBe(400);
    expect(reply.message).toMatch(/^the provider refused the sign-in: /);
  });

  it("links an account through the profile page with a proof of the identity, and only so", async () => {
    await sql("INSERT INTO users (username, password_hash, base_path, role) VALUES ('sso-linker', ?, '/', '[]')", [
      ((await sql("SELECT password_hash FROM users WHERE username = 'admin'")) as [[string]])[0][0],
    ]);
    const token = await signIn("sso-link", "sso-linker");
    const before = await userRows();
    const { message, fallback } = await pageData(await signInVia({ claims: alice }, "get_sso_id"));
    expect(Object.keys(message)).toEqual(["sso_id"]);
    const proof = message.sso_id ?? "";
    expect(fallback).toBe(`/@manage?sso_id=${encodeURIComponent(proof)}`);
    expect(await userRows()).toEqual(before);

    // Claiming an identity by its name is refused: it would let the identity's owner in.
    expect(await callApi(token, "/api/me/update", { sso_id: `${issuer}|alice-sub` })).toEqual({
      code: 400,
      message: "sso_id can only be set by connecting single sign-on from the profile page (or by the admin)",
      data: null,
    });
    expect((await callApi(token, "/api/me/update", { sso_id: proof })).code).toBe(200);
    expect(await sql("SELECT sso_id FROM users WHERE username = 'sso-linker'")).toEqual([[`${issuer}|alice-sub`]]);
    // The page sends the proof back with later edits: nothing changes.
    expect((await callApi(token, "/api/me/update", { sso_id: proof })).code).toBe(200);

    await setSettings({ sso_auto_register: "false" });
    const signedIn = await pageData(await signInVia({ claims: alice }));
    const me = await call("/api/me", { headers: { Authorization: signedIn.message.token ?? "" } });
    expect(me.data.username).toBe("sso-linker");
  });

  it("redirects in compatibility mode, on every name of the callback", async () => {
    await setSettings({ sso_compatibility_mode: "true" });
    for (const path of ["/api/auth/sso_callback", "/api/auth/sso_get_token"]) {
      const url = await authorize(await begin(), { claims: alice });
      const reply = await worker(`${path}${url.search}`);
      expect(reply.status).toBe(302);
      const location = new URL(reply.headers.get("Location") ?? "", SITE);
      expect(location.pathname).toBe("/@login");
      const me = await call("/api/me", { headers: { Authorization: location.searchParams.get("token") ?? "" } });
      expect(me.data.username).toBe("sso-alice");
    }
  });
});
