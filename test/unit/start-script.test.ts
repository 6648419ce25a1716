// `npm start` checks its ports before it touches anything: with PORT taken it stops in seconds,
// naming the variable to set, with no data folder, database or admin password made, and no
// process left behind.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
let dir: string;
let holder: Server;
let takenPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-start-script-"));
  holder = createServer();
  await new Promise<void>((done) => holder.listen(0, "127.0.0.1", done));
  takenPort = (holder.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((done) => holder.close(done));
  rmSync(dir, { recursive: true, force: true });
});

function start(env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((done) => {
    const started = Date.now();
    const child = execFile(
      process.execPath,
      [join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/start.ts"],
      {
        cwd: root,
        env: { ...process.env, TURSO_DATABASE_URL: "", ...env },
        timeout: 30_000,
      },
      (_error, stdout, stderr) => done({ code: child.exitCode, stdout, stderr, ms: Date.now() - started }),
    );
  });
}

it("stops before touching anything when PORT is taken, and says to set PORT", async () => {
  const dataDir = join(dir, "data");
  const result = await start({ PORT: String(takenPort), DATA_DIR: dataDir });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(`Port ${takenPort} on 127.0.0.1 is in use`);
  expect(result.stderr).toContain(`PORT=${takenPort + 1} npm start`);
  expect(result.stdout).not.toContain("initial password");
  expect(existsSync(dataDir)).toBe(false);
  expect(result.ms).toBeLessThan(15_000);
}, 30_000);

it("stops the same way when LIBSQL_PORT is taken", async () => {
  const dataDir = join(dir, "data-libsql");
  const result = await start({ LIBSQL_PORT: String(takenPort), DATA_DIR: dataDir });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(`LIBSQL_PORT=${takenPort + 1} npm start`);
  expect(existsSync(dataDir)).toBe(false);
}, 30_000);

it("refuses a PORT that is not a port number", async () => {
  for (const value of ["eighty", "0"]) {
    const result = await start({ PORT: value, DATA_DIR: join(dir, "data-bad") });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`PORT must be a TCP port number, got "${value}"`);
  }
  expect(existsSync(join(dir, "data-bad"))).toBe(false);
}, 60_000);
