// LDAP sign-in in workerd against a real directory: slapd started by test/support/ldap-directory.ts
// with LDAP_DIRECTORY's entries, reached through the Worker's own TCP sockets.
import { TOTP } from "otpauth";
import { beforeEach, describe, expect, inject, it } from "vitest";
import { LDAP_DIRECTORY } from "../../../test/support/ldap-directory.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { call, callApi, type Envelope, inTrips, signIn } from "../../../test/support/workerd-client.ts";

const ldapUrl = inject("ldapUrl");
const { deadPort } = inject("storageServers");
const { users: directory } = LDAP_DIRECTORY;

/** Every name a test here may leave an account under. */
const NAMES = ["ALICE", "Alice", "alice", "bob", "carol", "al*", "ali*e", "*", "admin)(|(uid=*", "*)(uid=*))(|(uid=*"];

const ldapLogin = (username: string, password: string, extra: Record<string, unknown> = {}, ip = "203.0.113.7") =>
  call("/api/auth/login/ldap", {
    method: "POST",
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip, "Client-Id": "ldap-test" },
    body: JSON.stringify({ username, password, ...extra }),
  });

const setSetting = (key: string, value: string) =>
  sql("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [
    key,
    value,
  ]);

async function accounts(): Promise<string[]> {
  const placeholders = NAMES.map(() => "?").join(", ");
  const rows = (await sql(
    `SELECT username FROM users WHERE username IN (${placeholders}) ORDER BY username`,
    NAMES,
  )) as [string][];
  return rows.map(([name]) => name);
}

const failures = async () =>
  (await sql("SELECT scope, subject, count FROM login_failures ORDER BY scope")) as [string, string, number][];

beforeEach(async () => {
  await sql("DELETE FROM login_failures");
  const placeholders = NAMES.map(() => "?").join(", ");
  await sql(
    `DELETE FROM device_sessions WHERE user_id IN (SELECT id FROM users WHERE username IN (${placeholders}))`,
    NAMES,
  );
  await sql(`DELETE FROM users WHERE username IN (${placeholders})`, NAMES);
  for (const [key, value] of Object.entries({
    ldap_login_enabled: "true",
    ldap_server: ldapUrl,
    ldap_start_tls: "false",
    ldap_manager_dn: LDAP_DIRECTORY.managerDn,
    ldap_manager_password: LDAP_DIRECTORY.managerPassword,
    ldap_user_search_base: LDAP_DIRECTORY.peopleBase,
    ldap_user_search_filter: "(uid=%s)",
    ldap_default_dir: "/directory-home",
    ldap_default_permission: "8",
  }))
    await setSetting(key, value);
});

describe("POST /api/auth/login/ldap", () => {
  it("signs a directory user in, creating the account once with the default base path and permission", async () => {
    // One read of the settings, the attempt and the account, the account created, the session written.
    const first = await inTrips(4, () => ldapLogin("alice", directory.alice));
    expect(first).toMatchObject({ code: 200, message: "success" });
    const me = await call("/api/me", { headers: { Authorization: first.data.token } });
    expect(me.data).toMatchObject({ username: "alice", base_path: "/directory-home", permission: 8 });
    expect(await sql("SELECT allow_ldap, disabled FROM users WHERE username = 'alice'")).toEqual([[1, 0]]);
    expect(await failures()).toEqual([]);

    // The second sign-in finds the account: no second row, one round trip fewer.
    const second = await inTrips(3, () => ldapLogin("alice", directory.alice));
    expect(second.code).toBe(200);
    expect(await accounts()).toEqual(["alice"]);
    // The random password it was created with signs nobody in with an empty or guessed one.
    const local = await call("/api/auth/login", {
      method: "POST",
      headers: { "Content-Type": "application/json", "CF-Connecting-IP": "203.0.113.99" },
      body: JSON.stringify({ username: "alice", password: "" }),
    });
    expect(local.code).toBe(400);
  });

  it("creates one account when a directory user's first sign-ins race", async () => {
    const replies = await Promise.all([1, 2, 3].map((n) => ldapLogin("bob", directory.bob, {}, `192.0.2.${n}`)));
    expect(replies.map((reply) => reply.code)).toEqual([200, 200, 200]);
    expect(await accounts()).toEqual(["bob"]);
    expect(
      await sql("SELECT count(*) FROM device_sessions WHERE user_id = (SELECT id FROM users WHERE username = 'bob')"),
    ).toEqual([[1]]);
  });

  it("refuses a wrong password, counts it, and locks the address out at the limit", async () => {
    expect(await ldapLogin("bob", "wrong")).toEqual({
      code: 400,
      message: "username or password is incorrect",
      data: null,
    });
    expect(await accounts()).toEqual([]);
    expect(await failures()).toEqual([
      ["ip", "203.0.113.7", 1],
      ["user", "bob", 1],
    ]);
    for (let i = 0; i < 4; i++) expect((await ldapLogin("bob", "wrong")).code).toBe(400);
    expect(await ldapLogin("bob", directory.bob)).toEqual({
      code: 429,
      message:
        "Too many unsuccessful sign-in attempts have been made using an incorrect username or password, Try again later.",
      data: null,
    });
    // Password sign-in shares the count.
    const password = await call("/api/auth/login", {
      method: "POST",
      headers: { "Content-Type": "application/json", "CF-Connecting-IP": "203.0.113.7" },
      body: JSON.stringify({ username: "admin", password: "whatever" }),
    });
    expect(password.code).toBe(429);
    expect(await accounts()).toEqual([]);
  });

  it("refuses an empty password without asking the directory (an unauthenticated bind)", async () => {
    expect((await ldapLogin("alice", "")).code).toBe(400);
    expect(await accounts()).toEqual([]);
  });

  it("treats filter syntax in the user name as literal text: nobody signs in", async () => {
    // `al*` and `ali*e` would match alice alone if the name were pasted in unescaped.
    for (const name of ["al*", "ali*e", "*", "admin)(|(uid=*", "*)(uid=*))(|(uid=*"]) {
      const reply = await ldapLogin(name, directory.alice, {}, `198.51.100.${NAMES.indexOf(name)}`);
      expect(reply, name).toEqual({ code: 400, message: "username or password is incorrect", data: null });
    }
    expect(await accounts()).toEqual([]);
  });

  it("asks for the directory's spelling of a name typed in another case, and makes no second account", async () => {
    expect(await ldapLogin("ALICE", directory.alice)).toEqual({
      code: 400,
      message: 'the directory spells this user name "alice": sign in with it',
      data: null,
    });
    // With a wrong password it is the usual refusal: the spelling is told only to the password's holder.
    expect((await ldapLogin("Alice", "wrong")).message).toBe("username or password is incorrect");
    expect(await accounts()).toEqual([]);
    expect(await failures()).toEqual([
      ["ip", "203.0.113.7", 1],
      ["user", "ALICE", 0],
      ["user", "Alice", 1],
    ]);
    await setSetting("ldap_user_search_filter", "(&(objectClass=inetOrgPerson)(uid=%s))");
    expect((await ldapLogin("alice", directory.alice)).code).toBe(200);
    expect(await accounts()).toEqual(["alice"]);
  });

  it("refuses the local admin even though a directory entry `admin` has the right password", async () => {
    const [[before]] = (await sql("SELECT password_hash FROM users WHERE username = 'admin'")) as [[string]];
    expect(await ldapLogin("admin", directory.admin)).toEqual({
      code: 403,
      message: "login via ldap is not allowed",
      data: null,
    });
    expect(await sql("SELECT password_hash, allow_ldap FROM users WHERE username = 'admin'")).toEqual([[before, 0]]);
    // No failure counted: the directory's password was right.
    expect(await failures()).toEqual([
      ["ip", "203.0.113.7", 0],
      ["user", "admin", 0],
    ]);
  });

  it("signs in as an existing local account only once the admin sets its allow_ldap", async () => {
    const admin = await signIn("ldap-admin");
    const created = await callApi(admin, "/api/admin/user/create", { username: "carol", password: "local pw" });
    expect(created.data).toMatchObject({ username: "carol", allow_ldap: false });
    expect((await ldapLogin("carol", directory.carol)).message).toBe("login via ldap is not allowed");

    const updated = await callApi(admin, "/api/admin/user/update", { id: created.data.id, allow_ldap: true });
    expect(updated.data).toMatchObject({ id: created.data.id, username: "carol", allow_ldap: true });
    const reply = await ldapLogin("carol", directory.carol);
    expect(reply.code).toBe(200);
    const me = await call("/api/me", { headers: { Authorization: reply.data.token } });
    expect(me.data).toMatchObject({ id: created.data.id, username: "carol" });
  });

  it("asks a user with two-factor on for the code, as password sign-in does", async () => {
    const token = (await ldapLogin("alice", directory.alice)).data.token as string;
    const generated = await callApi(token, "/api/auth/2fa/generate");
    const secret = generated.data.secret as string;
    const otp = new TOTP({ secret, algorithm: "SHA1", digits: 6, period: 30 });
    expect((await callApi(token, "/api/auth/2fa/verify", { code: otp.generate(), secret })).code).toBe(200);

    expect(await ldapLogin("alice", directory.alice)).toMatchObject({ code: 402 });
    const next = otp.generate({ timestamp: Date.now() + 30_000 });
    expect((await ldapLogin("alice", directory.alice, { otp_code: next })).code).toBe(200);
  });

  it("answers a clear error when the directory is unreachable, creates nothing and counts nothing", async () => {
    await setSetting("ldap_server", `ldap://127.0.0.1:${deadPort}`);
    const reply = await ldapLogin("alice", directory.alice);
    expect(reply.code).toBe(500);
    expect(reply.message).toMatch(
      new RegExp(`^ldap sign-in is unavailable: the directory 127\\.0\\.0\\.1:${deadPort} is unreachable`),
    );
    expect(await accounts()).toEqual([]);
    expect(await failures()).toEqual([
      ["ip", "203.0.113.7", 0],
      ["user", "alice", 0],
    ]);
  });

  it("sends StartTLS when asked and says so when the directory has no TLS to offer", async () => {
    await setSetting("ldap_start_tls", "true");
    const reply = await ldapLogin("alice", directory.alice);
    expect(reply.code).toBe(500);
    expect(reply.message).toMatch(
      /^ldap sign-in is unavailable: the directory 127\.0\.0\.1:\d+ refused StartTLS \(result \d+/,
    );
    expect(await accounts()).toEqual([]);
  });

  it("fails clearly when ldaps:// meets a directory that speaks plain LDAP", async () => {
    await setSetting("ldap_server", ldapUrl.replace(/^ldap:/, "ldaps:"));
    const reply = await ldapLogin("alice", directory.alice);
    expect(reply.code).toBe(500);
    expect(reply.message).toMatch(/^ldap sign-in is unavailable: the directory 127\.0\.0\.1:\d+ /);
    expect(await accounts()).toEqual([]);
  });

  it("says so when the manager account is refused, without the manager password", async () => {
    await setSetting("ldap_manager_password", "not-the-manager-password");
    const reply = await ldapLogin("alice", directory.alice);
    expect(reply).toEqual({
      code: 500,
      message: "ldap sign-in is unavailable: the directory refused the manager account (result 49)",
      data: null,
    });
    expect(await accounts()).toEqual([]);
  });

  it("says so when the filter template is not a filter", async () => {
    await setSetting("ldap_user_search_filter", "(uid=%s");
    const reply = await ldapLogin("alice", directory.alice);
    expect(reply.code).toBe(500);
    expect(reply.message).toMatch(/^ldap sign-in is unavailable: /);
    expect(await accounts()).toEqual([]);
  });

  it("answers 403 while the setting is off, before counting anything", async () => {
    await setSetting("ldap_login_enabled", "false");
    const reply: Envelope = await ldapLogin("alice", directory.alice);
    expect(reply).toEqual({ code: 403, message: "ldap is not enabled", data: null });
    expect(await accounts()).toEqual([]);
    expect(await failures()).toEqual([]);
  });

  it("keeps the manager password out of the public settings", async () => {
    const settings = await call("/api/public/settings");
    expect(settings.data.ldap_login_enabled).toBe("true");
    expect(settings.data).not.toHaveProperty("ldap_manager_password");
    expect(settings.data).not.toHaveProperty("ldap_server");
  });
});
