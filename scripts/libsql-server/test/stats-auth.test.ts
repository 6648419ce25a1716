// Round-trip counting (GET /__stats, POST /__stats/reset, server.stats()), recording pipelines
// (server.record(), the bench's replays), the statements that read
// a table whole (GET /__scans, server.scans()), and who may use the
// local libSQL endpoint: the bearer token, the Host header and no browser Origin.
import { request } from "node:http";
import { type Client, createClient } from "@libsql/client/node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { type TestServer, authorized, execute, pipeline, post, startTestServer } from "./support.ts";

/** A request with exactly these headers (fetch will not send a Host of our choosing). */
function raw(
  url: string,
  method: string,
  headers: Record<string, string>,
  body = "",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, setHost: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("stats", () => {
  let test: TestServer;
  let client: Client;

  beforeAll(async () => {
    test = await startTestServer();
    client = createClient({ url: test.server.url, authToken: test.server.authToken });
    await client.execute("CREATE TABLE t (x INTEGER)");
  });

  afterAll(async () => {
    client.close();
    await test.stop();
  });

  beforeEach(() => {
    test.server.resetStats();
  });

  async function httpStats(): Promise<unknown> {
    const response = await fetch(`${test.server.url}/__stats`, { headers: authorized });
    expect(response.status).toBe(200);
    return response.json();
  }

  it("counts one pipeline and one statement for an execute", async () => {
    expect(test.server.stats()).toEqual({ pipelines: 0, statements: 0 });
    await client.execute("INSERT INTO t VALUES (1)");
    expect(test.server.stats()).toEqual({ pipelines: 1, statements: 1 });
    expect(await httpStats()).toEqual({ pipelines: 1, statements: 1 });
  });

  it("counts a batch as one pipeline", async () => {
    await client.batch(["INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)"], "write");
    // BEGIN IMMEDIATE, the two inserts and COMMIT; the ROLLBACK step is skipped.
    expect(test.server.stats()).toEqual({ pipelines: 1, statements: 4 });
  });

  it("counts each round trip of an interactive transaction", async () => {
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO t VALUES (1)"); // BEGIN IMMEDIATE + INSERT
    await tx.execute("SELECT count(*) FROM t");
    await tx.commit();
    expect(test.server.stats()).toEqual({ pipelines: 3, statements: 4 });
  });

  it("counts each statement of a sequence", async () => {
    await client.executeMultiple("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); -- done;");
    expect(test.server.stats()).toEqual({ pipelines: 1, statements: 2 });
  });

  it("records the bodies of the pipelines that arrive until stopped, replayable as they came", async () => {
    await client.execute("SELECT 0");
    const stop = test.server.record();
    await client.execute({ sql: "INSERT INTO t VALUES (?)", args: [41] });
    await client.batch(["SELECT count(*) FROM t"], "read");
    const bodies = stop();
    await client.execute("SELECT 2");
    expect(bodies).toHaveLength(2);
    expect(JSON.stringify(bodies[0])).toContain('"sql":"INSERT INTO t VALUES (?)"');
    expect(JSON.stringify(bodies[1])).toContain('"sql":"SELECT count(*) FROM t"');
    expect(stop()).toHaveLength(2);
    // What the bench's replays do: the recorded body sent again runs the same statement.
    const before = await client.execute("SELECT count(*) AS n FROM t WHERE x = 41");
    const again = await post(`${test.server.url}/v3/pipeline`, bodies[0]);
    expect(again.status).toBe(200);
    const after = await client.execute("SELECT count(*) AS n FROM t WHERE x = 41");
    expect(Number(after.rows[0]!.n)).toBe(Number(before.rows[0]!.n) + 1);
  });

  it("resets over HTTP", async () => {
    await client.execute("SELECT 1");
    const reply = await post(`${test.server.url}/__stats/reset`, "");
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ pipelines: 0, statements: 0 });
    expect(test.server.stats()).toEqual({ pipelines: 0, statements: 0 });
    expect(await httpStats()).toEqual({ pipelines: 0, statements: 0 });
  });
});

describe("table scans", () => {
  let test: TestServer;
  let client: Client;

  beforeAll(async () => {
    test = await startTestServer();
    client = createClient({ url: test.server.url, authToken: test.server.authToken });
    await client.batch(["CREATE TABLE s (path TEXT, status TEXT)", "CREATE UNIQUE INDEX s_path ON s (path)"], "write");
  });

  afterAll(async () => {
    client.close();
    await test.stop();
  });

  beforeEach(() => {
    test.server.resetStats();
  });

  it("lists each statement that reads a table whole, with its plan's steps and its runs", async () => {
    const whole = "SELECT path FROM s WHERE status = ?";
    await client.execute({ sql: whole, args: [""] });
    await client.execute({ sql: whole, args: ["work"] });
    await client.execute("SELECT count(*) FROM s");
    expect(test.server.scans()).toEqual([
      { sql: whole, scans: ["SCAN s"], runs: 2 },
      { sql: "SELECT count(*) FROM s", scans: ["SCAN s USING COVERING INDEX s_path"], runs: 1 },
    ]);
    const reply = await fetch(`${test.server.url}/__scans`, { headers: authorized });
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual(test.server.scans());
  });

  it("leaves out index lookups, table-valued functions and constant rows", async () => {
    await client.batch(
      [
        { sql: "SELECT status FROM s WHERE path = ?", args: ["/a"] },
        { sql: "SELECT status FROM s WHERE path >= ? AND path < ?", args: ["/a/", "/a0"] },
        { sql: "SELECT value FROM json_each(?)", args: ['["/a"]'] },
        "SELECT 1",
        { sql: "INSERT INTO s VALUES (?, ?)", args: ["/b", ""] },
      ],
      "write",
    );
    expect(test.server.scans()).toEqual([]);
  });

  it("is emptied with the counters, over HTTP too", async () => {
    await client.execute("SELECT * FROM s");
    expect(test.server.scans()).toHaveLength(1);
    expect((await post(`${test.server.url}/__stats/reset`, "")).status).toBe(200);
    expect(test.server.scans()).toEqual([]);
    expect((await fetch(`${test.server.url}/__scans`)).status).toBe(401);
  });
});

describe("auth token", () => {
  let test: TestServer;

  beforeAll(async () => {
    test = await startTestServer({ authToken: "s3cret" });
  });

  afterAll(async () => {
    await test.stop();
  });

  it("accepts the right bearer token", async () => {
    const client = createClient({ url: test.server.url, authToken: "s3cret" });
    try {
      expect((await client.execute("SELECT 1 AS one")).rows[0]!.one).toBe(1);
    } finally {
      client.close();
    }
  });

  it("rejects a missing or wrong token", async () => {
    test.server.resetStats();
    for (const authToken of [undefined, "wrong"]) {
      const client = createClient({ url: test.server.url, ...(authToken ? { authToken } : {}) });
      try {
        await expect(client.execute("SELECT 1")).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      } finally {
        client.close();
      }
    }
    const reply = await post(
      `${test.server.url}/v2/pipeline`,
      { requests: [execute("SELECT 1")] },
      {
        authorization: "Bearer wrong",
      },
    );
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await fetch(`${test.server.url}/__stats`)).status).toBe(401);
    expect(test.server.stats()).toEqual({ pipelines: 0, statements: 0 });
  });

  it("leaves the version probes and the health check open", async () => {
    for (const path of ["/v2", "/v3", "/health"]) {
      expect((await fetch(`${test.server.url}${path}`)).status).toBe(200);
    }
  });

  it("protects raw pipelines too", async () => {
    const reply = await post(
      `${test.server.url}/v2/pipeline`,
      { baton: null, requests: [{ type: "close" }] },
      {
        authorization: "Bearer s3cret",
      },
    );
    expect(reply.status).toBe(200);
    await expect(pipeline(test.server, null, [{ type: "close" }])).rejects.toThrow("401");
  });
});

describe("who may connect", () => {
  let test: TestServer;
  const selectPasswords = JSON.stringify({ requests: [execute("SELECT 'secret' AS password_hash")] });

  beforeAll(async () => {
    test = await startTestServer({ authToken: "s3cret" });
  });

  afterAll(async () => {
    await test.stop();
  });

  const host = () => `127.0.0.1:${test.server.port}`;
  const pipelineUrl = () => `${test.server.url}/v2/pipeline`;

  it("answers a loopback Host with the port and the token", async () => {
    for (const name of ["127.0.0.1", "localhost", "LOCALHOST", "[::1]"]) {
      const reply = await raw(
        pipelineUrl(),
        "POST",
        { host: `${name}:${test.server.port}`, authorization: "Bearer s3cret" },
        selectPasswords,
      );
      expect(reply.status, name).toBe(200);
      expect(reply.body).toContain("secret");
    }
  });

  it("refuses a foreign Host header (DNS rebinding), even with the token", async () => {
    test.server.resetStats();
    for (const foreign of [
      "evil.example",
      `evil.example:${test.server.port}`,
      "127.0.0.1",
      "127.0.0.1:1",
      `127.0.0.1.nip.io:${test.server.port}`,
    ]) {
      const headers: Record<string, string> = { authorization: "Bearer s3cret", "content-type": "application/json" };
      if (foreign) headers.host = foreign;
      const reply = await raw(pipelineUrl(), "POST", headers, selectPasswords);
      expect(reply.status, foreign).toBe(403);
      expect(JSON.parse(reply.body)).toMatchObject({ code: "FORBIDDEN_HOST" });
    }
    expect((await raw(`${test.server.url}/health`, "GET", { host: "evil.example" })).status).toBe(403);
    expect(test.server.stats()).toEqual({ pipelines: 0, statements: 0 });
  });

  it("refuses any request with an Origin header: a web page cannot use it, simple text/plain POSTs included", async () => {
    test.server.resetStats();
    for (const origin of ["http://evil.example", `http://${host()}`, "null"]) {
      const reply = await raw(
        pipelineUrl(),
        "POST",
        { host: host(), origin, authorization: "Bearer s3cret", "content-type": "text/plain" },
        selectPasswords,
      );
      expect(reply.status, origin).toBe(403);
      expect(JSON.parse(reply.body)).toMatchObject({ code: "FORBIDDEN_ORIGIN" });
    }
    expect(test.server.stats()).toEqual({ pipelines: 0, statements: 0 });
  });

  it("refuses a missing, wrong or differently cased token with 401, and runs nothing", async () => {
    test.server.resetStats();
    for (const authorization of [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      "Bearer s3cre",
      "Bearer s3cret2",
      "bearer s3cret",
      "Basic s3cret",
      "s3cret",
    ]) {
      const headers: Record<string, string> = { host: host(), "content-type": "text/plain" };
      if (authorization !== undefined) headers.authorization = authorization;
      const reply = await raw(pipelineUrl(), "POST", headers, selectPasswords);
      expect(reply.status, String(authorization)).toBe(401);
      expect(reply.body).not.toContain('secret"');
    }
    expect((await raw(`${test.server.url}/v3/cursor`, "POST", { host: host() }, "{}")).status).toBe(401);
    expect(test.server.stats()).toEqual({ pipelines: 0, statements: 0 });
  });

  it("makes up a random token when none is given: never open", async () => {
    const [a, b] = await Promise.all([startTestServer({ authToken: undefined }), startTestServer({ authToken: "" })]);
    try {
      expect(a.server.authToken).toMatch(/^[\w-]{40,}$/);
      expect(b.server.authToken).toMatch(/^[\w-]{40,}$/);
      expect(a.server.authToken).not.toBe(b.server.authToken);
      expect(
        (await post(`${a.server.url}/v2/pipeline`, { requests: [execute("SELECT 1")] }, { authorization: "" })).status,
      ).toBe(401);
      const ok = await post(
        `${a.server.url}/v2/pipeline`,
        { requests: [execute("SELECT 1")] },
        { authorization: `Bearer ${a.server.authToken}` },
      );
      expect(ok.status).toBe(200);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
