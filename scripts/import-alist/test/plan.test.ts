// The import planner on fixture rows against a fresh Gatehouse: what it decides per row, and that
// applying its writes gives users who sign in with their AList passwords.
import type { Client } from "@libsql/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TOTP } from "otpauth";
import { applyPlan, readTarget } from "../apply.ts";
import { planImport } from "../plan.ts";
import { OTP_KEY_MISSING, type ImportPlan } from "../types.ts";
import { NotAListError, readSource } from "../source.ts";
import { open } from "../../../src/features/two-factor/secret-box.ts";
import { ADMIN_ROLE_ID } from "../../../src/auth/roles.ts";
import {
  ALICE_OTP_SECRET,
  ALICE_PASSWORD,
  ALIST_ADMIN_PASSWORD,
  BOB_PASSWORD,
  corruptFixture,
  fixtureTables,
  fullFixture,
  minimalFixture,
  type AListFixture,
} from "../../../test/support/alist-fixtures.ts";
import { login } from "../../../test/support/auth.ts";
import { createUnitFixture, TEST_ADMIN_PASSWORD, testEnv, type UnitFixture } from "../../../test/support/unit.ts";

const otpKeys = [new TextEncoder().encode(testEnv.JWT_SECRET!)];
let fx: UnitFixture;
beforeEach(async () => {
  fx = await createUnitFixture();
});
afterEach(() => fx.close());

const sourceOf = (fixture: AListFixture) => {
  const t = fixtureTables(fixture);
  return readSource(fixture.prefix, t.names, t.columnsOf, t.rowsOf);
};
const plan = async (fixture: AListFixture, options: Partial<{ replace: boolean; otpKeys: Uint8Array[] | null }> = {}) =>
  planImport(sourceOf(fixture), await readTarget(fx.db), {
    replace: false,
    otpKeys,
    nowMs: Date.parse("2025-01-01T00:00:00Z"),
    ...options,
  });
const importFixture = async (
  fixture: AListFixture,
  options: Partial<{ replace: boolean }> = {},
): Promise<ImportPlan> => {
  const p = await plan(fixture, options);
  await applyPlan(fx.db, p);
  return p;
};
/** The libSQL client under the Drizzle database, for raw rows (drizzle keeps it as an untyped `$client`). */
const client = () => (fx.db as unknown as { $client: Client }).$client;
/** Raw rows of `sql`, typed as the caller names their columns. */
const rows = async <Row = Record<string, unknown>>(sql: string): Promise<Row[]> =>
  (await client().execute(sql)).rows.map((r) => ({ ...r }) as Row);

describe("reading an AList database", () => {
  it("refuses a database without AList's tables, naming what is missing and what is there", () => {
    const readTables = (tables: string[]) => () =>
      readSource(
        "x_",
        tables,
        () => [],
        () => [],
      );
    expect(readTables(["users", "storages"])).toThrow(NotAListError);
    expect(readTables(["users", "storages"])).toThrow(
      /no table x_users, x_storages, x_setting_items \(tables found: users, storages; is the table prefix right/,
    );
    expect(readTables([])).toThrow(
      "not an AList database: no table x_users, x_storages, x_setting_items (the file has no tables)",
    );
  });

  it("reads another table prefix", async () => {
    const fixture = { ...(await minimalFixture()), prefix: "alist_" };
    expect(sourceOf(fixture).tables.users.map((u) => u.username)).toEqual(["guest", "admin"]);
  });
});

describe("planning an import into a fresh Gatehouse", () => {
  it("maps AList's admin and guest onto Gatehouse's own and takes the untouched admin's password", async () => {
    const p = await importFixture(await minimalFixture());
    expect(p.report.users).toMatchObject({
      imported: [],
      refused: [],
      skipped: [],
      replaced: ['#2 "admin" onto Gatehouse\'s admin'],
    });
    expect(p.report.users.unchanged).toEqual(['#1 "guest" (Gatehouse\'s guest)']);
    expect(p.report.roles.unchanged).toEqual([
      '#1 "guest" (Gatehouse\'s guest role)',
      '#2 "admin" is Gatehouse\'s admin role (all permissions, as AList forces)',
    ]);
    expect((await login(fx, { username: "admin", password: TEST_ADMIN_PASSWORD })).code).toBe(400);
    expect((await login(fx, { username: "admin", password: ALIST_ADMIN_PASSWORD })).code).toBe(200);
    // Two accounts as before: no third admin.
    expect(await rows("SELECT username, role FROM users ORDER BY id")).toEqual([
      { username: "guest", role: "[1]" },
      { username: "admin", role: "[2]" },
    ]);
  });

  it("imports roles, users, storages, metas and settings with remapped ids, and each user signs in", async () => {
    await client().execute("INSERT INTO roles (id, name) VALUES (3, 'gatehouse-own')");
    const p = await importFixture(await fullFixture());
    expect(p.report.roles.imported).toEqual(['#3 "editors" as id 4', '#5 "viewers"']);
    expect(p.report.users.imported).toEqual(['#7 "alice" as id 3', '#9 "bob" as id 4', '#10 "carol" as id 5']);
    expect(p.report.storages.imported).toEqual(['#1 "/media" (WebDav)', '#2 "/docs" (Virtual)']);
    expect(p.report.metas.imported).toEqual(['#1 "/media/private"', '#2 "/docs"']);
    expect(p.report.settings.replaced).toEqual(["site_title", "default_role", "default_page_size"]);
    expect(p.report.settings.unchanged).toEqual(["aria2_uri"]);
    expect(p.report.settings.skipped).toEqual([
      { row: "version", reason: "Gatehouse reports its own compatible version" },
      { row: "index_progress", reason: "AList's search index state; Gatehouse builds its own" },
    ]);
    expect(p.report.settings.notes).toEqual(["settings Gatehouse does not know, not imported: some_future_setting"]);

    expect(await rows("SELECT id, name, is_default, permission_scopes FROM roles WHERE id > 3 ORDER BY id")).toEqual([
      {
        id: 4,
        name: "editors",
        is_default: 0,
        permission_scopes: '[{"path":"/media","permission":4345},{"path":"/docs","permission":1}]',
      },
      { id: 5, name: "viewers", is_default: 1, permission_scopes: "[]" },
    ]);
    expect(
      await rows("SELECT username, role, base_path, permission, disabled, pwd_ts FROM users WHERE id > 2 ORDER BY id"),
    ).toEqual([
      { username: "alice", role: "[4]", base_path: "/media", permission: 264, disabled: 0, pwd_ts: 1700000007 },
      { username: "bob", role: "[4,5]", base_path: "/", permission: 1, disabled: 0, pwd_ts: 1700000009 },
      { username: "carol", role: "[5]", base_path: "/", permission: 0, disabled: 1, pwd_ts: 1700000010 },
    ]);
    expect(
      await rows(
        "SELECT value FROM settings WHERE key IN ('default_role', 'site_title', 'default_page_size') ORDER BY key",
      ),
    ).toEqual([{ value: "30" }, { value: "5" }, { value: "Family files" }]);
    const [media, docs] = await rows("SELECT * FROM storages ORDER BY id");
    expect(media).toMatchObject({
      mount_path: "/media",
      driver: "WebDav",
      order: 1,
      status: "",
      web_proxy: 1,
      proxy_range: 1,
      down_proxy_url: "https://proxy.example",
      down_proxy_sign: 0,
      remark: "family media",
      disabled: 0,
      modified: Date.parse("2024-05-01T10:20:30.123Z"),
    });
    expect(JSON.parse(media!.addition as string)).toMatchObject({ address: "http://127.0.0.1:1/dav" });
    expect(docs).toMatchObject({ mount_path: "/docs", driver: "Virtual", order: 5, disabled: 1, status: "disabled" });
    expect(
      await rows(
        "SELECT path, password, p_sub, write, w_sub, hide, h_sub, readme, r_sub, header, header_sub FROM metas ORDER BY id",
      ),
    ).toEqual([
      {
        path: "/media/private",
        password: "s3cret",
        p_sub: 1,
        write: 0,
        w_sub: 0,
        hide: "^\\.\n^secret",
        h_sub: 1,
        readme: "# Private",
        r_sub: 0,
        header: "",
        header_sub: 0,
      },
      {
        path: "/docs",
        password: "",
        p_sub: 0,
        write: 1,
        w_sub: 1,
        hide: "",
        h_sub: 0,
        readme: "",
        r_sub: 0,
        header: "Docs header",
        header_sub: 0,
      },
    ]);

    // Passwords: AList's hash kept, upgraded at the first sign-in.
    const [{ password_hash: before }] = (await rows<{ password_hash: string }>(
      "SELECT password_hash FROM users WHERE username = 'bob'",
    )) as [{ password_hash: string }];
    expect(before).toMatch(/^alist-sha256\$BobSalt012345678\$[0-9a-f]{64}$/);
    expect((await login(fx, { username: "bob", password: "wrong" })).code).toBe(400);
    expect(await rows("SELECT password_hash FROM users WHERE username = 'bob'")).toEqual([{ password_hash: before }]);
    expect((await login(fx, { username: "bob", password: BOB_PASSWORD })).code).toBe(200);
    const [{ password_hash: after }] = (await rows<{ password_hash: string }>(
      "SELECT password_hash FROM users WHERE username = 'bob'",
    )) as [{ password_hash: string }];
    expect(after).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect((await login(fx, { username: "bob", password: BOB_PASSWORD })).code).toBe(200);
    expect((await login(fx, { username: "carol", password: "carol pw" })).message).toBe(
      "Current user is disabled, replace please",
    );

    // Alice's second factor came along, sealed.
    const [{ otp_secret }] = (await rows("SELECT otp_secret FROM users WHERE username = 'alice'")) as unknown as [
      { otp_secret: string },
    ];
    expect(otp_secret).toMatch(/^v1\./);
    expect(await open(otpKeys, otp_secret)).toBe(ALICE_OTP_SECRET);
    expect(await login(fx, { username: "alice", password: ALICE_PASSWORD })).toMatchObject({
      code: 402,
      message: "Invalid 2FA code",
    });
    const code = new TOTP({ secret: ALICE_OTP_SECRET, algorithm: "SHA1", digits: 6, period: 30 }).generate();
    expect((await login(fx, { username: "alice", password: ALICE_PASSWORD, otp_code: code })).code).toBe(200);
  });

  it("imports nothing new the second time", async () => {
    await importFixture(await fullFixture());
    expect((await login(fx, { username: "bob", password: BOB_PASSWORD })).code).toBe(200); // upgrades bob's hash meanwhile
    const before = await rows("SELECT * FROM users ORDER BY id");
    const second = await plan(await fullFixture());
    expect(Object.values(second.writes).flat()).toEqual([]);
    for (const table of ["roles", "storages", "metas", "sshKeys"] as const)
      expect(second.report[table].imported).toEqual([]);
    expect(second.report.users.imported).toEqual([]);
    expect(second.report.users.unchanged).toEqual(
      expect.arrayContaining(['#7 "alice"', '#10 "carol"', '#2 "admin" (Gatehouse\'s admin)']),
    );
    expect(second.report.users.skipped).toEqual([
      { row: '#9 "bob"', reason: "username exists in Gatehouse (id 4); --replace takes AList's" },
    ]);
    await applyPlan(fx.db, second);
    expect(await rows("SELECT * FROM users ORDER BY id")).toEqual(before);
  });

  it("refuses 2FA users when no key can seal their secret", async () => {
    const p = await plan(await fullFixture(), { otpKeys: null });
    expect(p.report.users.refused).toEqual([{ row: '#7 "alice"', reason: OTP_KEY_MISSING }]);
  });
});

describe("conflicts", () => {
  beforeEach(async () => {
    await client().batch([
      "INSERT INTO users (id, username, password_hash, role) VALUES (50, 'alice', 'pbkdf2-sha256$1$AA$AA', '[]')",
      "INSERT INTO storages (mount_path, driver, modified, addition) VALUES ('/media', 'Virtual', 0, '{}')",
      "INSERT INTO metas (path, readme) VALUES ('/docs', 'mine')",
      "INSERT INTO roles (id, name, permission_scopes) VALUES (9, 'editors', '[]')",
    ]);
  });

  it("reports and skips an existing username, mount path, meta path and role; users of a same-named role get Gatehouse's", async () => {
    const p = await importFixture(await fullFixture());
    expect(p.report.users.skipped).toEqual([
      { row: '#7 "alice"', reason: "username exists in Gatehouse (id 50); --replace takes AList's" },
    ]);
    expect(p.report.storages.skipped).toEqual([
      { row: '#1 "/media" (WebDav)', reason: "a storage is mounted at /media (id 1); --replace takes AList's" },
    ]);
    expect(p.report.metas.skipped).toEqual([
      { row: '#2 "/docs"', reason: "a meta exists on /docs (id 1); --replace takes AList's" },
    ]);
    expect(p.report.roles.skipped).toEqual([
      {
        row: '#3 "editors"',
        reason: "a role of that name exists (id 9); its users get that role; --replace takes AList's scopes",
      },
    ]);
    expect(await rows("SELECT username, role FROM users WHERE username IN ('alice', 'bob') ORDER BY username")).toEqual(
      [
        { username: "alice", role: "[]" },
        { username: "bob", role: "[9,10]" },
      ],
    );
    expect(await rows("SELECT driver FROM storages WHERE mount_path = '/media'")).toEqual([{ driver: "Virtual" }]);
    expect(await rows("SELECT readme FROM metas WHERE path = '/docs'")).toEqual([{ readme: "mine" }]);
  });

  it("replaces them with --replace, and the replaced user's old tokens die", async () => {
    const p = await importFixture(await fullFixture(), { replace: true });
    expect(p.report.users.replaced).toContain('#7 "alice"');
    expect(p.report.storages.replaced).toEqual(['#1 "/media" (WebDav)']);
    expect(p.report.metas.replaced).toEqual(['#2 "/docs"']);
    expect(p.report.roles.replaced).toEqual(['#3 "editors"']);
    expect(await rows("SELECT id, role, pwd_ts FROM users WHERE username = 'alice'")).toEqual([
      { id: 50, role: "[9]", pwd_ts: 1700000007 },
    ]);
    expect(await rows("SELECT driver FROM storages WHERE mount_path = '/media'")).toEqual([{ driver: "WebDav" }]);
    expect(await rows("SELECT readme, header FROM metas WHERE path = '/docs'")).toEqual([
      { readme: "", header: "Docs header" },
    ]);
    expect(await rows("SELECT permission_scopes FROM roles WHERE id = 9")).toEqual([
      { permission_scopes: '[{"path":"/media","permission":4345},{"path":"/docs","permission":1}]' },
    ]);
  });

  it("leaves an admin whose password was changed alone unless --replace", async () => {
    await client().execute("UPDATE users SET pwd_ts = 123 WHERE username = 'admin'");
    const p = await importFixture(await minimalFixture());
    expect(p.report.users.skipped).toEqual([
      { row: '#2 "admin"', reason: "Gatehouse's admin \"admin\" was changed already; --replace takes AList's" },
    ]);
    expect((await login(fx, { username: "admin", password: TEST_ADMIN_PASSWORD })).code).toBe(200);
    await importFixture(await minimalFixture(), { replace: true });
    expect((await login(fx, { username: "admin", password: ALIST_ADMIN_PASSWORD })).code).toBe(200);
    expect(await rows(`SELECT pwd_ts FROM users WHERE role = '[${ADMIN_ROLE_ID}]'`)).toEqual([{ pwd_ts: 124 }]);
  });
});

describe("bad input", () => {
  it("refuses each broken row by name and imports the rest", async () => {
    const p = await importFixture(await corruptFixture());
    expect(p.report.users.notes).toEqual(["columns unknown to AList v3.58, not imported: mcp_token"]);
    expect(p.report.roles.refused).toEqual([
      { row: '#3 "broken"', reason: 'permission scopes are not valid JSON: "[{\\"path\\":\\"/a\\","' },
    ]);
    expect(p.report.roles.imported).toEqual(['#4 "fine" as id 3']);
    expect(p.report.users.refused).toEqual([
      { row: '#3 "dave"', reason: "its role 3 was refused" },
      { row: '#5 "frank"', reason: "permission 65536 is outside 0 to 65535 (AList v3.58's bits)" },
      { row: '#6 "gina"', reason: 'role list is not valid JSON: "not json"' },
    ]);
    expect(p.report.users.imported).toEqual(['#4 "erin" as id 3']);
    expect(p.report.storages.imported).toEqual(['#1 "/good" (Virtual)']);
    expect(p.report.storages.refused).toEqual([
      { row: '#2 "/bad-json" (WebDav)', reason: 'addition is not valid JSON: "{\\"address\\": "' },
      {
        row: '#3 "/baidu" (BaiduNetdisk)',
        reason:
          'driver "BaiduNetdisk" is not one Gatehouse has (Alias, Crypt, FTP, Local, R2 Binding, S3, SFTP, SMB, UrlTree, Virtual, WebDav)',
      },
      { row: '#4 "/good/" (Virtual)', reason: "another AList storage is mounted at /good" },
      {
        row: '#5 "/bad\\u0001name" (Virtual)',
        reason: "mount_path: must not contain control characters or unpaired surrogates",
      },
      {
        row: '#6 "/bad-choice" (WebDav)',
        reason: "webdav_policy must be one of use_proxy_url, native_proxy for driver WebDav",
      },
    ]);
    expect(p.report.metas.refused).toEqual([{ row: '#2 "/good/"', reason: "another AList meta is on /good" }]);
    expect(p.report.settings.refused).toEqual([{ row: "default_page_size", reason: "must be a number" }]);
    expect(await rows("SELECT username FROM users ORDER BY id")).toEqual([
      { username: "guest" },
      { username: "admin" },
      { username: "erin" },
    ]);
    expect(await rows("SELECT mount_path FROM storages")).toEqual([{ mount_path: "/good" }]);
  });

  it("writes none of a group when one of its writes fails", async () => {
    const p = await plan(await fullFixture());
    // Someone takes a planned user id between planning and writing: the whole identity group stays out.
    await client().execute("INSERT INTO users (id, username, password_hash) VALUES (4, 'intruder', 'x')");
    await expect(applyPlan(fx.db, p)).rejects.toThrow(
      /writing the identity group failed, none of its \d+ writes were made/,
    );
    expect(await rows("SELECT username FROM users ORDER BY id")).toEqual([
      { username: "guest" },
      { username: "admin" },
      { username: "intruder" },
    ]);
    expect(await rows("SELECT count(*) AS n FROM roles")).toEqual([{ n: 2 }]);
  });
});

describe("importing again", () => {
  it("turns off a 2FA that was turned off in AList since, with --replace: the password alone signs in", async () => {
    await importFixture(await fullFixture());
    expect((await login(fx, { username: "alice", password: ALICE_PASSWORD })).message).toBe("Invalid 2FA code");
    const later = await fullFixture();
    later.rows.users!.find((row) => row.username === "alice")!.otp_secret = "";
    const p = await importFixture(later, { replace: true });
    expect(p.report.users.replaced).toContain('#7 "alice"');
    expect(await rows("SELECT otp_secret FROM users WHERE username = 'alice'")).toEqual([{ otp_secret: null }]);
    expect((await login(fx, { username: "alice", password: ALICE_PASSWORD })).code).toBe(200);
  });

  it("reports an identical meta unchanged and writes nothing for it, with or without --replace", async () => {
    await importFixture(await fullFixture());
    const before = await rows("SELECT * FROM metas ORDER BY id");
    for (const replace of [false, true]) {
      const p = await plan(await fullFixture(), { replace });
      expect(p.report.metas, `replace: ${replace}`).toMatchObject({
        unchanged: ['#1 "/media/private"', '#2 "/docs"'],
        imported: [],
        replaced: [],
        skipped: [],
      });
      expect(
        Object.values(p.writes)
          .flat()
          .filter((write) => "table" in write && write.table === "metas"),
      ).toEqual([]);
      await applyPlan(fx.db, p);
      expect(await rows("SELECT * FROM metas ORDER BY id")).toEqual(before);
    }
  });
});
