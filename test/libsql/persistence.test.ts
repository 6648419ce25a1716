// The local libSQL endpoint writes to its SQLite file: the data is there for `libsql` itself once
// the server is closed, and for the next server on the same file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { createClient } from "@libsql/client/node";
import Database from "libsql";
import { afterAll, beforeAll, expect, it } from "vitest";

import { type LibsqlServer, startLibsqlServer } from "../../scripts/libsql-server/server.ts";

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
  const client = createClient({ url: server.url });
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
  const again = createClient({ url: server.url });
  try {
    expect((await again.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n).toBe(2);
  } finally {
    again.close();
  }
});
