// `tsx scripts/libsql-server/main.ts`: starts the endpoint, prints where, stops on SIGTERM.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

import { afterAll, beforeAll, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
let dir: string;
let child: ChildProcess;
let firstLine: string;
let secondLine: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-libsql-cli-"));
  child = spawn(
    process.execPath,
    [
      join(root, "node_modules/tsx/dist/cli.mjs"),
      ...["scripts/libsql-server/main.ts", "--file", join(dir, "cli.db"), "--port", "0"],
    ],
    { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  firstLine = (await lines.next()).value as string;
  secondLine = (await lines.next()).value as string;
}, 30_000);

afterAll(() => {
  if (child.exitCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

it("serves the file until SIGTERM", async () => {
  const match = /^libSQL endpoint listening on (http:\/\/127\.0\.0\.1:\d+) \(file: (.+)\)$/.exec(firstLine);
  expect(match, firstLine).not.toBeNull();
  expect(match![2]).toBe(join(dir, "cli.db"));

  const token = /^auth token: ([\w-]{40,})$/.exec(secondLine)?.[1];
  expect(token, secondLine).toBeDefined();
  const refused = await fetch(`${match![1]}/v2/pipeline`, { method: "POST", body: "{}" });
  expect(refused.status).toBe(401);

  const response = await fetch(`${match![1]}/v2/pipeline`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql: "SELECT 40 + 2" } }, { type: "close" }] }),
  });
  const body = (await response.json()) as { results: { response: { result: { rows: unknown[][] } } }[] };
  expect(body.results[0]!.response.result.rows).toEqual([[{ type: "integer", value: "42" }]]);

  child.kill("SIGTERM");
  const [code] = await once(child, "exit");
  expect(code).toBe(0);
});
