// The Worker's Hrana client (src/db/hrana.ts) against the local endpoint, beside @libsql/client on
// the same database: what the routes read through it must be what the library gave them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@libsql/client/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLibsqlServer, type LibsqlServer } from "../../scripts/libsql-server/server.ts";
import { eq } from "drizzle-orm";
import { blob, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { openDatabase } from "./client.ts";
import { isUniqueViolation } from "./errors.ts";
import { HranaClient, pipelineUrl, valuesOf } from "./hrana.ts";
import { keptQuery } from "./kept.ts";

let dir: string;
let server: LibsqlServer;
let ours: HranaClient;
let theirs: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-hrana-"));
  server = await startLibsqlServer({ path: join(dir, "hrana.db") });
  ours = new HranaClient(server.url, server.authToken);
  theirs = createClient({ url: server.url, authToken: server.authToken });
  await theirs.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, size REAL, data BLOB)");
});
afterAll(async () => {
  theirs.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("HranaClient", () => {
  it("reads values and rows as @libsql/client does", async () => {
    await theirs.execute({
      sql: "INSERT INTO t (id, name, size, data) VALUES (?, ?, ?, ?), (?, ?, ?, ?)",
      args: [1, "one", 1.5, new Uint8Array([0, 1, 254, 255]), 2, null, 3, null],
    });
    const query = "SELECT id, name, size, data, t.id AS id FROM t ORDER BY id";
    const [mine, library] = [await ours.execute(query), await theirs.execute(query)];
    expect(mine.columns).toEqual(library.columns);
    expect(mine.rows.map((row) => Array.prototype.slice.call(row))).toEqual(
      library.rows.map((row) => Array.prototype.slice.call(row)),
    );
    // Names are the enumerable keys (the first of a repeated name), as drizzle's raw queries read them.
    expect(mine.rows.map((row) => ({ ...row }))).toEqual(library.rows.map((row) => ({ ...row })));
    expect(mine.rows[0]!.length).toBe(5);
    expect(new Uint8Array(mine.rows[0]![3] as ArrayBuffer)).toEqual(new Uint8Array([0, 1, 254, 255]));
    // The same columns again share the rows' prototype (kept per isolate), never their values.
    const again = await ours.execute({ sql: `${query} DESC`, args: [] });
    expect(Object.getPrototypeOf(again.rows[0])).toBe(Object.getPrototypeOf(mine.rows[0]));
    expect(again.rows.map((row) => [row[0], row.name])).toEqual([
      [2, null],
      [1, "one"],
    ]);
    expect(mine.rows.map((row) => [row[0], row.name])).toEqual([
      [1, "one"],
      [2, null],
    ]);
  });

  it("binds named and positional values, and reports what a write changed", async () => {
    const written = await ours.execute({
      sql: "INSERT INTO t (name, size) VALUES (:name, :size)",
      args: { name: "named", size: 7 },
    });
    expect(written.rowsAffected).toBe(1);
    expect(typeof written.lastInsertRowid).toBe("bigint");
    const read = await ours.execute({
      sql: "SELECT name, size, typeof(size) FROM t WHERE id = ?",
      args: [written.lastInsertRowid!],
    });
    expect({ ...read.rows[0] }).toEqual({ name: "named", size: 7, "typeof(size)": "real" });
  });

  it("runs a batch as one transaction and one round trip: a failing statement undoes the ones before", async () => {
    server.resetStats();
    await expect(
      ours.batch([
        { sql: "INSERT INTO t (name) VALUES (?)", args: ["batched"] },
        { sql: "INSERT INTO t (name) VALUES (?)", args: ["one"] },
      ]),
    ).rejects.toSatisfy(isUniqueViolation);
    expect(server.stats().pipelines).toBe(1);
    expect((await theirs.execute("SELECT count(*) AS n FROM t WHERE name = 'batched'")).rows[0]!.n).toBe(0);

    const results = await ours.batch([
      { sql: "INSERT INTO t (name) VALUES (?)", args: ["batched"] },
      "SELECT name FROM t WHERE name = 'batched'",
    ]);
    expect(results.map((result) => result.rows.length)).toEqual([0, 1]);
  });

  it("hands a kept query its values, mapped as drizzle maps the rows it builds on demand", async () => {
    const table = sqliteTable("t", {
      id: integer("id").primaryKey(),
      name: text("name"),
      size: real("size"),
      data: blob("data", { mode: "buffer" }),
    });
    const db = openDatabase(server.url, server.authToken);
    const byId = keptQuery(["id"], (d, v) => d.select().from(table).where(eq(table.id, v.id)));
    const named = keptQuery(["id"], (d, v) =>
      d.select({ id: table.id, name: table.name, size: table.size }).from(table).where(eq(table.id, v.id)),
    );
    const fresh = (id: number) => db.select().from(table).where(eq(table.id, id));
    const [withBlob, plain, expected] = await db.batch([byId(db, { id: 1 }), named(db, { id: 2 }), fresh(1)]);
    // A blob goes through drizzle's own mapping (the rows, built when read); the rest from the values.
    expect(withBlob).toEqual(expected);
    expect(withBlob[0]!.data).toEqual(Buffer.from([0, 1, 254, 255]));
    expect(plain).toEqual([{ id: 2, name: null, size: 3 }]);
    const [result] = await ours.batch(["SELECT id, name FROM t WHERE id <= 2 ORDER BY id"]);
    expect(valuesOf(result)).toEqual([
      [1, "one"],
      [2, null],
    ]);
    expect(valuesOf(await theirs.execute("SELECT 1"))).toBeUndefined();
  });

  it("refuses an integer JavaScript cannot hold, and what it does not do", async () => {
    await expect(ours.execute("SELECT 9007199254740993")).rejects.toThrow(RangeError);
    await expect(ours.transaction()).rejects.toThrow(/not supported/);
  });

  it("finds the pipeline of a libsql: URL over HTTPS, or HTTP with tls=0", () => {
    expect(pipelineUrl("libsql://db-org.turso.io")).toBe("https://db-org.turso.io/v3/pipeline");
    expect(pipelineUrl("libsql://127.0.0.1:8080?tls=0")).toBe("http://127.0.0.1:8080/v3/pipeline");
    expect(pipelineUrl("http://127.0.0.1:8080/")).toBe("http://127.0.0.1:8080/v3/pipeline");
    expect(() => pipelineUrl("file:local.db")).toThrow(TypeError);
  });
});
