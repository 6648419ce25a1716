// `npm run import:alist` end to end: AList data.db files written from AList's schema,
// imported into a fresh local Gatehouse database, the database read back.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient, type Client } from "@libsql/client/node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../main.ts";
import { projectRoot } from "../../db.ts";
import { ALICE_OTP_SECRET, corruptFixture, fullFixture, minimalFixture } from "../../../test/support/alist-fixtures.ts";
import { writeAListDatabase } from "../../../test/support/alist-sqlite.ts";
import { generateTestKeys, type TestKey } from "../../../test/support/ssh-keys.ts";

const JWT_SECRET = "import-test-secret-import-test-secret-0123";
let dir: string;
let target: string;
let output: string[];
let key: TestKey;
const clients: Client[] = [];

beforeAll(() => {
  key = generateTestKeys().keys[0]!;
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-import-"));
  target = join(dir, "gatehouse.db");
  output = [];
  vi.spyOn(console, "log").mockImplementation((...args) => void output.push(args.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...args) => void output.push(args.join(" ")));
});
afterEach(() => {
  vi.restoreAllMocks();
  for (const client of clients.splice(0)) client.close();
  rmSync(dir, { recursive: true, force: true });
});
afterAll(() => vi.restoreAllMocks());

// No .dev.vars: the secrets come from this environment only.
const env = (extra: Record<string, string> = {}) => ({
  TURSO_DATABASE_URL: `file:${target}`,
  JWT_SECRET,
  DATA_DIR: dir,
  ...extra,
});
const run = (args: string[], extra?: Record<string, string>) => main(args, env(extra), join(dir, ".dev.vars"));
/** Raw rows of `sql`, typed as the caller names their columns. */
const rows = async <Row = Record<string, unknown>>(sql: string): Promise<Row[]> => {
  const client = createClient({ url: `file:${target}` });
  clients.push(client);
  return (await client.execute(sql)).rows.map((r) => ({ ...r }) as Row);
};
const aListFile = async (fixture: Parameters<typeof writeAListDatabase>[1]) => {
  const file = join(dir, `data-${Math.random().toString(36).slice(2)}.db`);
  writeAListDatabase(file, fixture);
  return file;
};

describe("npm run import:alist", () => {
  it("imports a full AList database into a fresh target, and a second run writes nothing", async () => {
    const file = await aListFile(await fullFixture({ sshKey: key.line }));
    expect(await run([file])).toBe(0);
    const report = output.join("\n");
    expect(report).toContain("Users: 3 imported, 1 replaced, 1 unchanged, 0 skipped, 0 refused");
    expect(report).toContain("SSH public keys: 1 imported");
    expect(report).toContain("Storages: 2 imported");
    expect(report).toContain("note: settings Gatehouse does not know, not imported: some_future_setting");
    expect(report).not.toContain("its password:"); // the admin created by this run took AList's password

    expect(
      await rows(
        "SELECT username, role, password_hash LIKE 'alist-sha256$%' AS alist, otp_secret IS NOT NULL AS otp FROM users ORDER BY id",
      ),
    ).toEqual([
      { username: "guest", role: "[1]", alist: 0, otp: 0 },
      { username: "admin", role: "[2]", alist: 1, otp: 0 },
      { username: "alice", role: "[3]", alist: 1, otp: 1 },
      { username: "bob", role: "[3,4]", alist: 1, otp: 0 },
      { username: "carol", role: "[4]", alist: 1, otp: 0 },
    ]);
    expect(
      await rows(
        "SELECT u.username, k.title, k.fingerprint, k.key_str, k.added_time FROM ssh_public_keys k JOIN users u ON u.id = k.user_id",
      ),
    ).toEqual([
      {
        username: "alice",
        title: "laptop",
        fingerprint: key.fingerprint,
        key_str: key.line.trim(),
        added_time: Date.parse("2024-01-02T03:04:05Z") / 1000,
      },
    ]);
    expect(await rows("SELECT mount_path, driver, disabled FROM storages ORDER BY id")).toEqual([
      { mount_path: "/media", driver: "WebDav", disabled: 0 },
      { mount_path: "/docs", driver: "Virtual", disabled: 1 },
    ]);
    expect(await rows("SELECT count(*) AS n FROM metas")).toEqual([{ n: 2 }]);

    const before = await rows("SELECT * FROM users ORDER BY id");
    output = [];
    expect(await run([file])).toBe(0);
    expect(output.join("\n")).toContain("Nothing new to write.");
    expect(output.join("\n")).toMatch(/Users: 0 imported, 0 replaced, 5 unchanged/);
    expect(await rows("SELECT * FROM users ORDER BY id")).toEqual(before);
  });

  it("writes nothing on a dry run", async () => {
    expect(await run([await aListFile(await minimalFixture())])).toBe(0); // a migrated target
    const state =
      "SELECT (SELECT group_concat(username || password_hash) FROM users) AS u, (SELECT count(*) FROM roles) AS r, (SELECT count(*) FROM storages) AS s, (SELECT count(*) FROM metas) AS m, (SELECT group_concat(value) FROM settings) AS v";
    const snapshot = await rows(state);
    output = [];
    expect(await run([await aListFile(await fullFixture()), "--dry-run"])).toBe(0);
    expect(output[0]).toMatch(/^Dry run: nothing is written\./);
    expect(output.join("\n")).toContain("Users: 3 to import, 0 to be replaced, 2 unchanged");
    expect(output.join("\n")).toMatch(/\d+ row change\(s\) would be written\./);
    expect(await rows(state)).toEqual(snapshot);
  });

  it("refuses to write 2FA users' secrets without a sealing key, and seals with OTP_ENCRYPTION_KEY first", async () => {
    const file = await aListFile(await fullFixture());
    expect(await main([file], { TURSO_DATABASE_URL: `file:${target}`, DATA_DIR: dir }, join(dir, ".dev.vars"))).toBe(1);
    expect(output.join("\n")).toMatch(
      /Import refused: 1 AList user\(s\) have two-factor sign-in on, and their secrets need OTP_ENCRYPTION_KEY or JWT_SECRET .* Nothing was written\./,
    );

    const otpKey = "otp-key-otp-key-otp-key-otp-key-otp-key-0123";
    expect(await run([file], { OTP_ENCRYPTION_KEY: otpKey })).toBe(0);
    const [{ otp_secret }] = (await rows<{ otp_secret: string }>(
      "SELECT otp_secret FROM users WHERE username = 'alice'",
    )) as [{ otp_secret: string }];
    const { open } = await import("../../../src/features/two-factor/secret-box.ts");
    expect(await open([new TextEncoder().encode(otpKey)], otp_secret)).toBe(ALICE_OTP_SECRET);
  });

  it("names what is wrong with a file that is not an AList database, and writes nothing", async () => {
    const notSqlite = join(dir, "notes.txt");
    writeFileSync(notSqlite, "these are not the tables you are looking for\n".repeat(100));
    expect(await run([notSqlite])).toBe(1);
    expect(output.join("\n")).toMatch(
      /^Import refused: .*notes\.txt is not an SQLite database \(file is not a database\)\. Nothing was written\.$/,
    );

    output = [];
    const otherApp = await aListFile({ prefix: "", schema: { posts: ["`id` integer"] }, rows: {} });
    expect(await run([otherApp])).toBe(1);
    expect(output.join("\n")).toContain(
      "not an AList database: no table x_users, x_storages, x_setting_items (tables found: posts; is the table prefix right? --prefix)",
    );

    output = [];
    expect(await run([join(dir, "missing.db")])).toBe(1);
    expect(output.join("\n")).toContain("missing.db: no such file");
    expect(await run([])).toBe(2);
    expect(await run(["a.db", "--force"])).toBe(2);
  });

  it("imports a corrupt database's good rows and names each refused one", async () => {
    expect(await run([await aListFile(await corruptFixture())])).toBe(0);
    const report = output.join("\n");
    expect(report).toContain('! refused #2 "/bad-json" (WebDav): addition is not valid JSON');
    expect(report).toContain('! refused #3 "broken": permission scopes are not valid JSON');
    expect(report).toContain("note: columns unknown to AList v3.58, not imported: mcp_token");
    expect(report).toMatch(/\d+ row\(s\) refused: fix them in AList/);
    expect(await rows("SELECT mount_path FROM storages")).toEqual([{ mount_path: "/good" }]);
  });

  it("runs as the npm script, with a custom table prefix", async () => {
    const file = await aListFile({ ...(await minimalFixture()), prefix: "al_" });
    const { stdout } = await promisify(execFile)(
      "npm",
      ["run", "--silent", "import:alist", "--", file, "--prefix", "al_"],
      {
        cwd: projectRoot,
        env: { ...process.env, ...env() },
      },
    );
    expect(stdout).toContain("Users: 0 imported, 1 replaced, 1 unchanged, 0 skipped, 0 refused");
    expect(
      await rows(
        "SELECT password_hash LIKE 'alist-sha256$AdminSalt0123456$%' AS alist FROM users WHERE username = 'admin'",
      ),
    ).toEqual([{ alist: 1 }]);
  }, 60_000);
});
