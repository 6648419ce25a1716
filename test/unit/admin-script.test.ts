// `npm run admin -- set-password | random`: it changes the account holding the admin role, never
// whoever is called "admin", and says whom it changed.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrateAndSeed, openNodeDatabase } from "../../scripts/db.ts";
import { hashStaticHash, staticHash, verifyStaticHash } from "../../src/auth/password.ts";
import { users } from "../../src/db/schema.ts";

const root = resolve(import.meta.dirname, "../..");
let dir: string;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-admin-script-"));
  url = `file:${join(dir, "gatehouse.db")}`;
  await migrateAndSeed({ url }, { adminPassword: "first admin password" });
  // The admin renames itself; an ordinary user takes the name "admin".
  const { db, close } = openNodeDatabase({ url });
  try {
    await db
      .update(users)
      .set({ username: "root", passwordChangedAt: 4_000_000_000 })
      .where(eq(users.username, "admin"));
    await db
      .insert(users)
      .values({ username: "admin", passwordHash: await hashStaticHash(await staticHash("impostor pw")), roleIds: [] });
  } finally {
    close();
  }
}, 30_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/admin.ts", ...args], {
    cwd: root,
    env: { ...process.env, TURSO_DATABASE_URL: url },
  });

async function rows() {
  const { db, close } = openNodeDatabase({ url });
  try {
    return await db.select().from(users);
  } finally {
    close();
  }
}

async function passwordOf(username: string, password: string): Promise<boolean> {
  const row = (await rows()).find((r) => r.username === username)!;
  return verifyStaticHash(await staticHash(password), row.passwordHash);
}

it("set-password changes the admin by role, not the user named admin, and says whom", async () => {
  const before = await rows();
  const { stdout } = await run("set-password", "a new admin password");
  const adminId = before.find((r) => r.username === "root")!.id;
  expect(stdout.trim()).toBe(`Password of the admin "root" (user id ${adminId}) updated`);
  expect(await passwordOf("root", "a new admin password")).toBe(true);
  expect(await passwordOf("admin", "impostor pw")).toBe(true);
  expect(await passwordOf("admin", "a new admin password")).toBe(false);
  // pwd_ts moves forward even from a timestamp in the future, so older tokens die.
  expect((await rows()).find((r) => r.id === adminId)!.passwordChangedAt).toBe(4_000_000_001);
}, 30_000);

it("random prints the new password with the admin's name", async () => {
  const { stdout } = await run("random");
  const match = /^New password of the admin "root" \(user id \d+\): ([A-Za-z0-9]{16})$/.exec(stdout.trim());
  expect(match, stdout).not.toBeNull();
  expect(await passwordOf("root", match![1]!)).toBe(true);
  expect(await passwordOf("admin", "impostor pw")).toBe(true);
}, 30_000);
