// The local libSQL endpoint driven by @libsql/client (node and web entry points) and drizzle-orm,
// the way the Worker and the scripts use it.
import { type Client, LibsqlBatchError, LibsqlError, createClient } from "@libsql/client/node";
import { createClient as createWebClient } from "@libsql/client/web";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/libsql";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { type TestServer, startTestServer } from "./support.ts";

let test: TestServer;
let client: Client;

beforeAll(async () => {
  test = await startTestServer();
  client = createClient({ url: test.server.url, authToken: test.server.authToken, intMode: "bigint" });
});

afterAll(async () => {
  client.close();
  await test.stop();
});

beforeEach(async () => {
  await client.executeMultiple(`
    DROP TABLE IF EXISTS items;
    CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, qty INTEGER);
  `);
});

async function names(): Promise<string[]> {
  const rs = await client.execute("SELECT name FROM items ORDER BY id");
  return rs.rows.map((row) => row.name as string);
}

describe("execute", () => {
  it("round-trips every value type", async () => {
    await client.execute("CREATE TABLE IF NOT EXISTS vals (id INTEGER PRIMARY KEY, n, i, f, t, b)");
    const big = 2n ** 62n + 3n; // beyond Number.MAX_SAFE_INTEGER
    const blob = new Uint8Array([0, 1, 127, 128, 254, 255]);
    const unicode = "héllo wörld — 日本語 😀";
    const inserted = await client.execute({
      sql: "INSERT INTO vals (n, i, f, t, b) VALUES (?, ?, ?, ?, ?)",
      args: [null, big, 3.25, unicode, blob],
    });
    await client.execute({ sql: "INSERT INTO vals (i) VALUES (?)", args: [-(2n ** 63n)] });

    const rs = await client.execute({
      sql: "SELECT n, i, f, t, b, typeof(i) AS ti, typeof(f) AS tf FROM vals WHERE id = ?",
      args: [inserted.lastInsertRowid!],
    });
    expect(rs.columns).toEqual(["n", "i", "f", "t", "b", "ti", "tf"]);
    const row = rs.rows[0]!;
    expect(row.n).toBeNull();
    expect(row.i).toBe(big);
    expect(row.f).toBe(3.25);
    expect(row.t).toBe(unicode);
    expect(new Uint8Array(row.b as ArrayBuffer)).toEqual(blob);
    expect([row.ti, row.tf]).toEqual(["integer", "real"]);

    const min = await client.execute("SELECT i FROM vals WHERE id = 2");
    expect(min.rows[0]!.i).toBe(-(2n ** 63n));
  });

  it("binds JS numbers as REAL and bigints as INTEGER, like sqld", async () => {
    const rs = await client.execute({ sql: "SELECT typeof(?) AS a, typeof(?) AS b", args: [2, 2n] });
    expect(rs.rows[0]).toMatchObject({ a: "real", b: "integer" });
  });

  it("reports declared column types", async () => {
    await client.execute("INSERT INTO items (name, qty) VALUES ('a', 1)");
    const rs = await client.execute("SELECT id, name, qty, qty * 2 AS double FROM items");
    expect(rs.columnTypes).toEqual(["INTEGER", "TEXT", "INTEGER", ""]);
  });

  it("binds positional, numbered and named arguments", async () => {
    const positional = await client.execute({ sql: "SELECT ? AS a, ? AS b", args: [1n, "x"] });
    expect(positional.rows[0]).toMatchObject({ a: 1n, b: "x" });

    const numbered = await client.execute({ sql: "SELECT ?2 AS a, ?1 AS b, ?2 AS c", args: ["one", "two"] });
    expect(numbered.rows[0]).toMatchObject({ a: "two", b: "one", c: "two" });

    const named = await client.execute({
      sql: "SELECT :a AS a, @b AS b, $c AS c, :a AS again",
      args: { a: 7n, b: "bee", c: null },
    });
    expect(named.rows[0]).toMatchObject({ a: 7n, b: "bee", c: null, again: 7n });

    const prefixed = await client.execute({ sql: "SELECT :a AS a", args: { ":a": "with prefix" } });
    expect(prefixed.rows[0]!.a).toBe("with prefix");
  });

  it("returns lastInsertRowid and rowsAffected", async () => {
    const first = await client.execute({ sql: "INSERT INTO items (name, qty) VALUES (?, ?)", args: ["a", 1n] });
    expect(first.rowsAffected).toBe(1);
    expect(first.lastInsertRowid).toBe(1n);

    const second = await client.execute("INSERT INTO items (name, qty) VALUES ('b', 2), ('c', 3)");
    expect(second.rowsAffected).toBe(2);
    expect(second.lastInsertRowid).toBe(3n);

    const updated = await client.execute("UPDATE items SET qty = qty + 1 WHERE qty >= 2");
    expect(updated.rowsAffected).toBe(2);
    expect(updated.lastInsertRowid).toBeUndefined();

    const selected = await client.execute("SELECT * FROM items");
    expect(selected.rowsAffected).toBe(0);
    expect(selected.lastInsertRowid).toBeUndefined();

    const returning = await client.execute("DELETE FROM items WHERE qty > 2 RETURNING name");
    expect(returning.rows.map((r) => r.name)).toEqual(["b", "c"]);
    expect(returning.rowsAffected).toBe(2);

    const big = await client.execute("INSERT INTO items (id, name) VALUES (9007199254740993, 'big') RETURNING id");
    expect(big.lastInsertRowid).toBe(9007199254740993n);
    expect(big.rows[0]!.id).toBe(9007199254740993n);
  });
});

describe("errors", () => {
  it("reports constraint violations as SQLITE_CONSTRAINT, like sqld", async () => {
    await client.execute("INSERT INTO items (name) VALUES ('dup')");
    const error = await client.execute("INSERT INTO items (name) VALUES ('dup')").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LibsqlError);
    expect((error as LibsqlError).code).toBe("SQLITE_CONSTRAINT");
    expect((error as LibsqlError).message).toContain("UNIQUE constraint failed: items.name");
  });

  it("reports other SQLite errors with their code", async () => {
    await expect(client.execute("SELECT * FROM missing")).rejects.toMatchObject({
      code: "SQLITE_ERROR",
      message: expect.stringContaining("no such table: missing"),
    });
    await expect(client.execute("SELEC 1")).rejects.toMatchObject({ code: "SQLITE_ERROR" });
    await expect(client.execute("INSERT INTO items (name) VALUES (NULL)")).rejects.toMatchObject({
      code: "SQLITE_CONSTRAINT",
      message: expect.stringContaining("NOT NULL constraint failed"),
    });
  });

  it("rejects what sqld rejects: several statements, missing arguments", async () => {
    await expect(client.execute("SELECT 1; SELECT 2")).rejects.toMatchObject({ code: "SQL_MANY_STATEMENTS" });
    await expect(client.execute({ sql: "SELECT ?, ?", args: [1n] })).rejects.toMatchObject({ code: "ARGS_INVALID" });
    await expect(client.execute({ sql: "SELECT ?", args: [1n, 2n] })).rejects.toMatchObject({ code: "ARGS_INVALID" });
    await expect(client.execute({ sql: "SELECT :a", args: { b: 1n } })).rejects.toMatchObject({ code: "ARGS_INVALID" });
  });
});

describe("batch", () => {
  it("runs all statements in one transaction and returns each result", async () => {
    const results = await client.batch(
      [
        { sql: "INSERT INTO items (name, qty) VALUES (?, ?)", args: ["a", 1n] },
        { sql: "INSERT INTO items (name, qty) VALUES (:name, :qty)", args: { name: "b", qty: 2n } },
        "SELECT count(*) AS n, sum(qty) AS total FROM items",
      ],
      "write",
    );
    expect(results.map((r) => r.lastInsertRowid)).toEqual([1n, 2n, undefined]);
    expect(results[2]!.rows[0]).toMatchObject({ n: 2n, total: 3n });
  });

  it("rolls the whole batch back when a statement in the middle fails", async () => {
    await client.execute("INSERT INTO items (name) VALUES ('existing')");
    const error = await client
      .batch(
        [
          "INSERT INTO items (name) VALUES ('first')",
          "INSERT INTO items (name) VALUES ('existing')",
          "INSERT INTO items (name) VALUES ('third')",
        ],
        "write",
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LibsqlBatchError);
    expect((error as LibsqlBatchError).code).toBe("SQLITE_CONSTRAINT");
    expect((error as LibsqlBatchError).statementIndex).toBe(1);
    expect(await names()).toEqual(["existing"]);
  });

  it("works in every transaction mode", async () => {
    for (const mode of ["write", "read", "deferred"] as const) {
      const [rs] = await client.batch(["SELECT 42 AS answer"], mode);
      expect(rs!.rows[0]!.answer).toBe(42n);
    }
  });
});

describe("interactive transactions", () => {
  it("commits across several round trips", async () => {
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO items (name) VALUES ('a')");
    await tx.batch(["INSERT INTO items (name) VALUES ('b')", "INSERT INTO items (name) VALUES ('c')"]);
    expect((await tx.execute("SELECT count(*) AS n FROM items")).rows[0]!.n).toBe(3n);
    expect(await names()).toEqual([]); // not visible outside before COMMIT
    await tx.commit();
    expect(await names()).toEqual(["a", "b", "c"]);
  });

  it("rolls back", async () => {
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO items (name) VALUES ('a')");
    await tx.rollback();
    expect(await names()).toEqual([]);
    expect(tx.closed).toBe(true);
  });

  it("keeps the transaction usable after a failed statement", async () => {
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO items (name) VALUES ('a')");
    await expect(tx.execute("INSERT INTO items (name) VALUES ('a')")).rejects.toMatchObject({
      code: "SQLITE_CONSTRAINT",
    });
    await tx.execute("INSERT INTO items (name) VALUES ('b')");
    await tx.commit();
    expect(await names()).toEqual(["a", "b"]);
  });

  it("runs executeMultiple inside a transaction", async () => {
    const tx = await client.transaction("write");
    await tx.executeMultiple("INSERT INTO items (name) VALUES ('a'); INSERT INTO items (name) VALUES ('b');");
    await tx.rollback();
    expect(await names()).toEqual([]);
  });

  it("serializes two concurrent write transactions on separate streams", async () => {
    const first = await client.transaction("write");
    await first.execute("INSERT INTO items (name) VALUES ('first')");

    const order: string[] = [];
    const second = await client.transaction("write");
    // BEGIN IMMEDIATE waits for the first transaction's lock without blocking the server.
    const secondInsert = second.execute("INSERT INTO items (name) VALUES ('second')").then(() => {
      order.push("second inserted");
    });
    expect((await client.execute("SELECT count(*) AS n FROM items")).rows[0]!.n).toBe(0n);
    await new Promise((resolve) => setTimeout(resolve, 50));
    order.push("first committing");
    await first.commit();
    await secondInsert;
    await second.commit();

    expect(order).toEqual(["first committing", "second inserted"]);
    expect(await names()).toEqual(["first", "second"]);
  });

  it("gives concurrent read transactions their own snapshots", async () => {
    await client.execute("INSERT INTO items (name) VALUES ('before')");
    const reader = await client.transaction("read");
    expect((await reader.execute("SELECT count(*) AS n FROM items")).rows[0]!.n).toBe(1n);

    const writer = await client.transaction("write");
    await writer.execute("INSERT INTO items (name) VALUES ('during')");
    await writer.commit();

    expect((await reader.execute("SELECT count(*) AS n FROM items")).rows[0]!.n).toBe(1n);
    await reader.commit();
    expect(await names()).toEqual(["before", "during"]);
  });
});

describe("executeMultiple and migrate", () => {
  it("runs a script, including a trigger body with semicolons", async () => {
    await client.executeMultiple(`
      CREATE TABLE log (msg TEXT);
      -- a comment; with a semicolon
      CREATE TRIGGER items_log AFTER INSERT ON items BEGIN
        INSERT INTO log VALUES ('added ' || new.name);
        INSERT INTO log VALUES (CASE WHEN new.qty > 1 THEN 'many' ELSE 'one' END);
      END;
      INSERT INTO items (name, qty) VALUES ('a;b', 2);
    `);
    const rs = await client.execute("SELECT msg FROM log ORDER BY rowid");
    expect(rs.rows.map((r) => r.msg)).toEqual(["added a;b", "many"]);
    await client.executeMultiple("DROP TABLE log");
  });

  it("stops at the first failing statement", async () => {
    await expect(
      client.executeMultiple(`
        INSERT INTO items (name) VALUES ('a');
        INSERT INTO items (name) VALUES ('a');
        INSERT INTO items (name) VALUES ('b');
      `),
    ).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT" });
    expect(await names()).toEqual(["a"]);
  });

  it("migrates with foreign keys off, and turns them back on", async () => {
    const results = await client.migrate([
      "CREATE TABLE parents (id INTEGER PRIMARY KEY)",
      "CREATE TABLE children (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents (id))",
      // Accepted only because foreign keys are off during the migration.
      "INSERT INTO children (parent) VALUES (99)",
    ]);
    expect(results).toHaveLength(3);
    expect((await client.execute("PRAGMA foreign_keys")).rows[0]![0]).toBe(1n);
    await client.executeMultiple("DROP TABLE children; DROP TABLE parents;");
  });
});

describe("@libsql/client/web", () => {
  it("executes, batches and runs transactions", async () => {
    const web = createWebClient({ url: test.server.url, authToken: test.server.authToken });
    try {
      await web.execute({ sql: "INSERT INTO items (name, qty) VALUES (?, ?)", args: ["web", 5] });
      const [, rs] = await web.batch(["INSERT INTO items (name) VALUES ('web2')", "SELECT count(*) AS n FROM items"]);
      expect(rs!.rows[0]!.n).toBe(2);

      const tx = await web.transaction("write");
      await tx.execute("DELETE FROM items WHERE name = 'web2'");
      await tx.commit();
      const rows = (await web.execute("SELECT name, qty FROM items")).rows;
      expect(rows.map((r) => [r.name, r.qty])).toEqual([["web", 5]]);
    } finally {
      web.close();
    }
  });
});

describe("drizzle-orm/libsql", () => {
  const items = sqliteTable("items", {
    id: integer("id").primaryKey(),
    name: text("name").notNull(),
    qty: integer("qty"),
  });

  it("inserts, selects and runs transactions", async () => {
    const db = drizzle({ client: createClient({ url: test.server.url, authToken: test.server.authToken }) });
    try {
      const [row] = await db.insert(items).values({ name: "drizzle", qty: 3 }).returning();
      expect(row).toEqual({ id: 1, name: "drizzle", qty: 3 });

      await db.transaction(async (tx) => {
        await tx.update(items).set({ qty: 4 }).where(eq(items.id, 1));
        await tx.insert(items).values({ name: "second" });
      });
      await expect(
        db.transaction(async (tx) => {
          await tx.insert(items).values({ name: "rolled back" });
          throw new Error("abort");
        }),
      ).rejects.toThrow("abort");

      expect(await db.select().from(items).orderBy(items.id)).toEqual([
        { id: 1, name: "drizzle", qty: 4 },
        { id: 2, name: "second", qty: null },
      ]);
    } finally {
      db.$client.close();
    }
  });
});
