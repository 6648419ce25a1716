// The local libSQL endpoint at the Hrana level: the parts of the protocol @libsql/client does not
// expose (batons, conditions, stored SQL, describe, cursors) and the error responses.
import Database from "libsql";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { type TestServer, authorized, execute, int, pipeline, post, startTestServer, text } from "./support.ts";

let test: TestServer;

beforeAll(async () => {
  test = await startTestServer();
});

afterAll(async () => {
  await test.stop();
});

beforeEach(async () => {
  await pipeline(test.server, null, [
    { type: "sequence", sql: "DROP TABLE IF EXISTS t; CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE);" },
    { type: "close" },
  ]);
});

describe("endpoints", () => {
  it("answers the version probes and the health check", async () => {
    for (const path of ["/v2", "/v3", "/health"]) {
      expect((await fetch(`${test.server.url}${path}`)).status).toBe(200);
    }
    // No Protobuf: clients that probe for it fall back to JSON.
    expect((await fetch(`${test.server.url}/v3-protobuf`, { headers: authorized })).status).toBe(404);
  });

  it("serves /v3/pipeline like /v2/pipeline", async () => {
    const reply = await post(`${test.server.url}/v3/pipeline`, {
      baton: null,
      requests: [execute("SELECT 1 AS one"), { type: "get_autocommit" }, { type: "close" }],
    });
    expect(reply.status).toBe(200);
    expect(reply.body.results.map((r: { type: string }) => r.type)).toEqual(["ok", "ok", "ok"]);
    expect(reply.body.results[1].response).toEqual({ type: "get_autocommit", is_autocommit: true });
  });

  it("answers unknown paths with a JSON 404", async () => {
    const reply = await post(`${test.server.url}/v1/execute`, {});
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("pipeline", () => {
  it("returns results in the Hrana shape", async () => {
    const reply = await pipeline(test.server, null, [
      execute("INSERT INTO t (name) VALUES (?)", { args: [text("a")] }),
      execute("SELECT id, name, 1.5 AS f, x'00ff' AS b, NULL AS n FROM t"),
      { type: "close" },
    ]);
    expect(reply).toEqual({
      baton: null,
      base_url: null,
      results: [
        {
          type: "ok",
          response: {
            type: "execute",
            result: { cols: [], rows: [], affected_row_count: 1, last_insert_rowid: "1" },
          },
        },
        {
          type: "ok",
          response: {
            type: "execute",
            result: {
              cols: [
                { name: "id", decltype: "INTEGER" },
                { name: "name", decltype: "TEXT" },
                { name: "f", decltype: null },
                { name: "b", decltype: null },
                { name: "n", decltype: null },
              ],
              rows: [
                [int(1), text("a"), { type: "float", value: 1.5 }, { type: "blob", base64: "AP8=" }, { type: "null" }],
              ],
              affected_row_count: 0,
              last_insert_rowid: null,
            },
          },
        },
        { type: "ok", response: { type: "close" } },
      ],
    });
  });

  it("runs every request even after one fails, and none after close", async () => {
    const reply = await pipeline(test.server, null, [
      execute("SELECT * FROM missing"),
      execute("SELECT 2"),
      { type: "close" },
      execute("SELECT 3"),
    ]);
    expect(reply.results[0]).toEqual({
      type: "error",
      error: { message: "SQLite error: no such table: missing", code: "SQLITE_ERROR" },
    });
    expect(reply.results[1].type).toBe("ok");
    expect(reply.results[3]).toMatchObject({ type: "error", error: { code: "STREAM_CLOSED" } });
    expect(reply.baton).toBeNull();
  });

  it("omits rows when want_rows is false", async () => {
    const reply = await pipeline(test.server, null, [execute("SELECT 1 AS a", { want_rows: false })]);
    expect(reply.results[0].response.result).toMatchObject({ cols: [{ name: "a", decltype: null }], rows: [] });
  });

  it("binds named arguments with or without their prefix", async () => {
    const reply = await pipeline(test.server, null, [
      execute("SELECT :a, @b, $c", {
        named_args: [
          { name: ":a", value: int(1) },
          { name: "b", value: int(2) },
          { name: "$c", value: int(3) },
        ],
      }),
    ]);
    expect(reply.results[0].response.result.rows).toEqual([[int(1), int(2), int(3)]]);
  });

  it("rejects arguments that do not match the parameters, without crashing", async () => {
    const reply = await pipeline(test.server, null, [
      // `libsql` itself aborts the process when named arguments meet a nameless `?`.
      execute("SELECT ?, :a", { named_args: [{ name: "a", value: int(1) }] }),
      execute("SELECT ?", { args: [int(1)], named_args: [{ name: "a", value: int(1) }] }),
      execute("SELECT :a", { named_args: [{ name: "b", value: int(1) }] }),
      execute("SELECT 1", { args: [int(1)] }),
      // EXPLAIN may leave parameters unbound.
      execute("EXPLAIN SELECT ?"),
    ]);
    expect(reply.results.map((r: { error?: { code: string } }) => r.error?.code)).toEqual([
      "ARGS_INVALID",
      "ARGS_BOTH_POSITIONAL_AND_NAMED",
      "ARGS_INVALID",
      "ARGS_INVALID",
      undefined,
    ]);
  });

  it("accepts exactly one statement per execute", async () => {
    const reply = await pipeline(test.server, null, [
      execute("SELECT 1; SELECT 2"),
      execute("  -- nothing but a comment\n"),
      execute('SELECT \';\' AS a, "x;y" FROM (SELECT 1 AS "x;y"); -- trailing; comment'),
      execute(`CREATE TRIGGER t_upper AFTER INSERT ON t BEGIN
                 UPDATE t SET name = upper(new.name) WHERE id = new.id;
                 SELECT CASE WHEN new.name = '' THEN RAISE(ABORT, 'empty; name') END;
               END`),
      execute("INSERT INTO t (name) VALUES ('low')"),
      execute("SELECT name FROM t"),
    ]);
    expect(reply.results[0].error.code).toBe("SQL_MANY_STATEMENTS");
    expect(reply.results[1].error.code).toBe("SQL_NO_STATEMENT");
    expect(reply.results[2].response.result.rows).toEqual([[text(";"), int(1)]]);
    expect(reply.results[3].type).toBe("ok");
    expect(reply.results[5].response.result.rows).toEqual([[text("LOW")]]);
  });

  it("stores SQL texts for the stream", async () => {
    const first = await pipeline(test.server, null, [
      { type: "store_sql", sql_id: 1, sql: "INSERT INTO t (name) VALUES (?)" },
      { type: "execute", stmt: { sql_id: 1, args: [text("a")] } },
      { type: "store_sql", sql_id: 1, sql: "SELECT 1" },
      { type: "store_sql", sql_id: 2, sql: "INSERT INTO t (name) VALUES ('b'); INSERT INTO t (name) VALUES ('c')" },
    ]);
    expect(first.results[2].error.code).toBe("SQL_EXISTS");

    const second = await pipeline(test.server, first.baton, [
      { type: "sequence", sql_id: 2 },
      { type: "close_sql", sql_id: 1 },
      { type: "execute", stmt: { sql_id: 1, args: [text("d")] } },
      { type: "close_sql", sql_id: 42 }, // closing an unknown id is not an error
      execute("SELECT group_concat(name) FROM t"),
      { type: "close" },
    ]);
    expect(second.results.map((r: { type: string }) => r.type)).toEqual(["ok", "ok", "error", "ok", "ok", "ok"]);
    expect(second.results[2].error.code).toBe("SQL_NOT_FOUND");
    expect(second.results[4].response.result.rows).toEqual([[text("a,b,c")]]);

    // Stored texts belong to their stream.
    const other = await pipeline(test.server, null, [{ type: "sequence", sql_id: 2 }]);
    expect(other.results[0].error.code).toBe("SQL_NOT_FOUND");
  });

  it("describes statements", async () => {
    const reply = await pipeline(test.server, null, [
      { type: "describe", sql: "SELECT id, name AS n, :x, ?3 FROM t WHERE id = ?" },
      { type: "describe", sql: "INSERT INTO t (name) VALUES (@name)" },
      { type: "describe", sql: "EXPLAIN SELECT 1" },
    ]);
    expect(reply.results[0].response).toEqual({
      type: "describe",
      result: {
        params: [{ name: ":x" }, { name: null }, { name: "?3" }, { name: null }],
        cols: [
          { name: "id", decltype: "INTEGER" },
          { name: "n", decltype: "TEXT" },
          { name: ":x", decltype: null },
          { name: "?3", decltype: null },
        ],
        is_explain: false,
        is_readonly: true,
      },
    });
    expect(reply.results[1].response.result).toMatchObject({
      params: [{ name: "@name" }],
      cols: [],
      is_readonly: false,
    });
    expect(reply.results[2].response.result).toMatchObject({ is_explain: true, is_readonly: true });
  });
});

describe("batch conditions", () => {
  it("evaluates ok, error, not, and, or", async () => {
    const steps = [
      { stmt: { sql: "INSERT INTO t (name) VALUES ('a')" } }, // 0 ok
      { stmt: { sql: "INSERT INTO t (name) VALUES ('a')" } }, // 1 error
      { condition: { type: "ok", step: 1 }, stmt: { sql: "SELECT 'skipped'" } }, // 2 skipped
      { condition: { type: "error", step: 1 }, stmt: { sql: "SELECT 'ran'" } }, // 3 ok
      { condition: { type: "error", step: 2 }, stmt: { sql: "SELECT 'skipped'" } }, // 4: a skipped step is no error
      {
        condition: {
          type: "and",
          conds: [
            { type: "ok", step: 0 },
            { type: "not", cond: { type: "ok", step: 2 } },
          ],
        },
        stmt: { sql: "SELECT 'ran'" },
      }, // 5 ok
      {
        condition: {
          type: "or",
          conds: [
            { type: "ok", step: 1 },
            { type: "ok", step: 4 },
          ],
        },
        stmt: { sql: "SELECT 'skipped'" },
      }, // 6 skipped
      { condition: { type: "ok", step: 9 }, stmt: { sql: "SELECT 'invalid'" } }, // 7 refers to a later step
    ];
    const reply = await pipeline(test.server, null, [{ type: "batch", batch: { steps } }]);
    const { step_results, step_errors } = reply.results[0].response.result;
    expect(step_results.map((r: unknown) => r !== null)).toEqual([true, false, false, true, false, true, false, false]);
    expect(step_errors.map((e: { code: string } | null) => e?.code ?? null)).toEqual([
      null,
      "SQLITE_CONSTRAINT",
      null,
      null,
      null,
      null,
      null,
      "BATCH_COND_INVALID",
    ]);
  });

  it("evaluates is_autocommit as the batch goes", async () => {
    const notAutocommit = { type: "not", cond: { type: "is_autocommit" } };
    const reply = await pipeline(test.server, null, [
      {
        type: "batch",
        batch: {
          steps: [
            { condition: notAutocommit, stmt: { sql: "SELECT 'skipped'" } },
            { stmt: { sql: "BEGIN" } },
            { condition: notAutocommit, stmt: { sql: "INSERT INTO t (name) VALUES ('in tx')" } },
            { stmt: { sql: "COMMIT" } },
            { condition: { type: "is_autocommit" }, stmt: { sql: "SELECT count(*) FROM t" } },
          ],
        },
      },
    ]);
    const { step_results } = reply.results[0].response.result;
    expect(step_results[0]).toBeNull();
    expect(step_results[4].rows).toEqual([[int(1)]]);
  });
});

describe("connections", () => {
  it("of a stream closed inside a transaction are not reused: the transaction is rolled back", async () => {
    await pipeline(test.server, null, [
      execute("BEGIN"),
      execute("INSERT INTO t (name) VALUES ('left open')"),
      { type: "close" },
    ]);
    // Closed streams hand their connections to the next ones; none may still be in that transaction.
    for (let i = 0; i < 3; i++) {
      const next = await pipeline(test.server, null, [
        { type: "get_autocommit" },
        execute("SELECT count(*) FROM t"),
        { type: "close" },
      ]);
      expect(next.results[0].response.is_autocommit).toBe(true);
      expect(next.results[1].response.result.rows).toEqual([[int(0)]]);
    }
  });

  it("keep statements prepared across streams, and see a schema change", async () => {
    const select = () => pipeline(test.server, null, [execute("SELECT * FROM t"), { type: "close" }]);
    expect((await select()).results[0].response.result.cols.map((c: { name: string }) => c.name)).toEqual([
      "id",
      "name",
    ]);
    await pipeline(test.server, null, [
      execute("ALTER TABLE t ADD COLUMN size INTEGER DEFAULT 7"),
      execute("INSERT INTO t (name) VALUES ('a')"),
      { type: "close" },
    ]);
    for (let i = 0; i < 3; i++) {
      const { result } = (await select()).results[0].response;
      expect(result.cols.map((c: { name: string }) => c.name)).toEqual(["id", "name", "size"]);
      expect(result.rows[0].slice(1)).toEqual([text("a"), int(7)]);
    }
  });

  it("run a kept statement without columns across a schema change, and refuse it once it no longer fits", async () => {
    const insert = (name: string) =>
      pipeline(test.server, null, [
        execute("INSERT INTO t (name) VALUES (?)", { args: [text(name)] }),
        { type: "close" },
      ]);
    expect((await insert("kept 1")).results[0].type).toBe("ok");
    await pipeline(test.server, null, [execute("ALTER TABLE t ADD COLUMN size INTEGER DEFAULT 3"), { type: "close" }]);
    const after = await insert("kept 2");
    expect(after.results[0].response.result.affected_row_count).toBe(1);
    const read = await pipeline(test.server, null, [
      execute("SELECT name, size FROM t WHERE name LIKE 'kept %' ORDER BY name"),
      { type: "close" },
    ]);
    expect(read.results[0].response.result.rows).toEqual([
      [text("kept 1"), int(3)],
      [text("kept 2"), int(3)],
    ]);
    await pipeline(test.server, null, [execute("ALTER TABLE t RENAME COLUMN name TO label"), { type: "close" }]);
    const refused = await insert("kept 3");
    expect(refused.results[0].type).toBe("error");
    expect(refused.results[0].error.message).toMatch(/name/);
  });
});

describe("batons", () => {
  it("keep a transaction on its own connection across requests", async () => {
    const first = await pipeline(test.server, null, [execute("BEGIN"), execute("INSERT INTO t (name) VALUES ('a')")]);
    expect(first.baton).toEqual(expect.any(String));

    // A request without a baton gets another connection, which does not see the insert.
    const outside = await pipeline(test.server, null, [execute("SELECT count(*) FROM t"), { type: "close" }]);
    expect(outside.results[0].response.result.rows).toEqual([[int(0)]]);

    const second = await pipeline(test.server, first.baton, [
      { type: "get_autocommit" },
      execute("SELECT count(*) FROM t"),
      execute("COMMIT"),
      { type: "get_autocommit" },
    ]);
    expect(second.results[0].response.is_autocommit).toBe(false);
    expect(second.results[1].response.result.rows).toEqual([[int(1)]]);
    expect(second.results[3].response.is_autocommit).toBe(true);
    // The stream stays open until closed, with a new baton each time.
    expect(second.baton).toEqual(expect.any(String));
    expect(second.baton).not.toBe(first.baton);

    const closed = await pipeline(test.server, second.baton, [{ type: "close" }]);
    expect(closed.baton).toBeNull();
  });

  it("are single-use", async () => {
    const first = await pipeline(test.server, null, [execute("SELECT 1")]);
    await pipeline(test.server, first.baton, [execute("SELECT 2")]);
    const reused = await post(`${test.server.url}/v2/pipeline`, { baton: first.baton, requests: [] });
    expect(reused.status).toBe(400);
    expect(reused.contentType).toBe("application/json");
    expect(reused.body).toMatchObject({ code: "BATON_REUSED", error: expect.any(String), message: expect.any(String) });
  });

  it("are rejected when unknown or malformed", async () => {
    const unknown = await post(`${test.server.url}/v2/pipeline`, { baton: "123456.abc", requests: [] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("STREAM_EXPIRED");
    const malformed = await post(`${test.server.url}/v2/pipeline`, { baton: "not a baton", requests: [] });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BATON_INVALID");
  });
});

describe("malformed requests", () => {
  it.each([
    ["a body that is not JSON", "{not json"],
    ["a body without requests", { baton: null }],
    ["an unknown request type", { requests: [{ type: "explode" }] }],
    ["a statement without SQL", { requests: [{ type: "execute", stmt: {} }] }],
    ["both sql and sql_id", { requests: [{ type: "execute", stmt: { sql: "SELECT 1", sql_id: 1 } }] }],
    ["an integer that is not a string", { requests: [execute("SELECT ?", { args: [{ type: "integer", value: 1 }] })] }],
    ["an integer beyond 64 bits", { requests: [execute("SELECT ?", { args: [int(2n ** 63n)] })] }],
    ["an unknown value type", { requests: [execute("SELECT ?", { args: [{ type: "date", value: "x" }] })] }],
    [
      "an unknown condition",
      {
        requests: [{ type: "batch", batch: { steps: [{ condition: { type: "maybe" }, stmt: { sql: "SELECT 1" } }] } }],
      },
    ],
  ])("rejects %s with HTTP 400", async (_, body) => {
    const reply = await post(`${test.server.url}/v2/pipeline`, body);
    expect(reply.status).toBe(400);
    expect(reply.contentType).toBe("application/json");
    expect(reply.body).toEqual({ error: expect.any(String), message: reply.body.error, code: "PROTOCOL_ERROR" });
  });
});

describe("cursor", () => {
  it("streams a batch result as lines of JSON", async () => {
    const response = await fetch(`${test.server.url}/v3/cursor`, {
      method: "POST",
      headers: authorized,
      body: JSON.stringify({
        baton: null,
        batch: {
          steps: [
            { stmt: { sql: "INSERT INTO t (name) VALUES ('a'), ('b')" } },
            { stmt: { sql: "SELECT name FROM t ORDER BY id" } },
            { stmt: { sql: "SELECT * FROM missing" } },
            { condition: { type: "ok", step: 2 }, stmt: { sql: "SELECT 'skipped'" } },
          ],
        },
      }),
    });
    expect(response.status).toBe(200);
    const lines = (await response.text())
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toEqual({ baton: expect.any(String), base_url: null });
    expect(lines.slice(1)).toEqual([
      { type: "step_begin", step: 0, cols: [] },
      { type: "step_end", affected_row_count: 2, last_insert_rowid: "2" },
      { type: "step_begin", step: 1, cols: [{ name: "name", decltype: "TEXT" }] },
      { type: "row", row: [text("a")] },
      { type: "row", row: [text("b")] },
      { type: "step_end", affected_row_count: 0, last_insert_rowid: null },
      { type: "step_error", step: 2, error: { message: "SQLite error: no such table: missing", code: "SQLITE_ERROR" } },
    ]);
    await pipeline(test.server, lines[0].baton, [{ type: "close" }]);
  });
});

describe("streams and locks", () => {
  let short: TestServer;

  beforeAll(async () => {
    short = await startTestServer({ streamIdleTimeoutMs: 200 });
    await pipeline(short.server, null, [execute("CREATE TABLE t (name TEXT)"), { type: "close" }]);
  });

  afterAll(async () => {
    await short.stop();
  });

  it("expire when idle, rolling back their transaction", async () => {
    const open = await pipeline(short.server, null, [execute("BEGIN"), execute("INSERT INTO t VALUES ('lost')")]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const late = await post(`${short.server.url}/v2/pipeline`, { baton: open.baton, requests: [execute("COMMIT")] });
    expect(late.status).toBe(400);
    expect(late.body.code).toBe("STREAM_EXPIRED");
    const count = await pipeline(short.server, null, [execute("SELECT count(*) FROM t"), { type: "close" }]);
    expect(count.results[0].response.result.rows).toEqual([[int(0)]]);
  });

  it("let a writer wait for a transaction abandoned by its client", async () => {
    await pipeline(short.server, null, [execute("BEGIN IMMEDIATE"), execute("INSERT INTO t VALUES ('abandoned')")]);
    const started = Date.now();
    const reply = await pipeline(short.server, null, [execute("INSERT INTO t VALUES ('waited')"), { type: "close" }]);
    expect(reply.results[0].type).toBe("ok");
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    const rows = await pipeline(short.server, null, [execute("SELECT name FROM t"), { type: "close" }]);
    expect(rows.results[0].response.result.rows).toEqual([[text("waited")]]);
  });

  it("recover a connection whose statement timed out waiting for a lock", async () => {
    // Another process (here: a direct connection) holds the write lock longer than the wait.
    const holder = new Database(short.path);
    holder.exec("BEGIN IMMEDIATE");
    const tx = await pipeline(short.server, null, [execute("BEGIN"), execute("SELECT count(*) FROM t")]);
    const busy = await pipeline(short.server, tx.baton, [execute("INSERT INTO t VALUES ('timed out')")]);
    expect(busy.results[0].error.code).toBe("SQLITE_BUSY");
    holder.exec("ROLLBACK");
    holder.close();

    // That transaction can no longer commit, but it can roll back...
    const end = await pipeline(short.server, busy.baton, [execute("COMMIT"), execute("ROLLBACK")]);
    expect(end.results[0].type).toBe("error");
    expect(end.results[1].type).toBe("ok");
    // ...and the stream then goes on, committing, on a fresh connection.
    const after = await pipeline(short.server, end.baton, [
      execute("INSERT INTO t VALUES ('after')"),
      { type: "close" },
    ]);
    expect(after.results[0].type).toBe("ok");
    const rows = await pipeline(short.server, null, [execute("SELECT name FROM t ORDER BY rowid"), { type: "close" }]);
    expect(rows.results[0].response.result.rows).toEqual([[text("waited")], [text("after")]]);
  });
});
