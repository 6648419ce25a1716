// The local libSQL endpoint writes to its SQLite file: the data is there for `libsql` itself once
// the server is closed, and for the next server on the same file.
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { createClient } from "@libsql/client/node";
import Database from "libsql";
import { afterAll, beforeAll, expect, it } from "vitest";

import { openNodeDatabase } from "../../db.ts";
import { type LibsqlServer, startLibsqlServer } from "../server.ts";

const mode = (file: string) => statSync(file).mode & 0o777;

let dir: string;
let path: string;
let server: LibsqlServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-libsql-"));
  // The parent directories do not exist yet: the server creates them.
  path = join(dir, "nested", "deeper", "gatehouse.db");
  server = await startLibsqlServer({ path, port: 0 });
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

it("persists committed data to the file", async () => {
  const client = createClient({ url: server.url, authToken: server.authToken });
  await client.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  await client.execute({ sql: "INSERT INTO notes (body) VALUES (?)", args: ["kept"] });
  const tx = await client.transaction("write");
  await tx.execute("INSERT INTO notes (body) VALUES ('committed')");
  await tx.commit();
  const open = await client.transaction("write");
  await open.execute("INSERT INTO notes (body) VALUES ('never committed')");
  client.close();
  // Closing with a transaction still open rolls it back.
  await server.close();

  const db = new Database(path);
  try {
    expect(db.prepare("SELECT body FROM notes ORDER BY id").raw(true).all()).toEqual([["kept"], ["committed"]]);
    expect(db.prepare("PRAGMA journal_mode").raw(true).get()).toEqual(["wal"]);
  } finally {
    db.close();
  }

  server = await startLibsqlServer({ path, port: 0 });
  const again = createClient({ url: server.url, authToken: server.authToken });
  try {
    expect((await again.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n).toBe(2);
  } finally {
    again.close();
  }
});

it("keeps the database private: folders it creates 0700, the file and its WAL 0600", async () => {
  expect(mode(join(dir, "nested"))).toBe(0o700);
  expect(mode(join(dir, "nested", "deeper"))).toBe(0o700);
  expect(mode(path)).toBe(0o600);
  const client = createClient({ url: server.url, authToken: server.authToken });
  try {
    await client.execute("INSERT INTO notes (body) VALUES ('wal')");
  } finally {
    client.close();
  }
  expect(mode(`${path}-wal`)).toBe(0o600);
});

it("narrows an existing world-readable database file to 0600, through the endpoint and the scripts alike", async () => {
  const viaServer = join(dir, "old-server.db");
  const viaScripts = join(dir, "fresh", "old-scripts.db");
  writeFileSync(viaServer, "");
  chmodSync(viaServer, 0o644);
  const other = await startLibsqlServer({ path: viaServer, port: 0 });
  await other.close();
  expect(mode(viaServer)).toBe(0o600);

  const { close } = openNodeDatabase({ url: `file:${viaScripts}` });
  close();
  expect(mode(join(dir, "fresh"))).toBe(0o700);
  expect(mode(viaScripts)).toBe(0o600);
});
