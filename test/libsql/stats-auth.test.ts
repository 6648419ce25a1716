// Round-trip counting (GET /__stats, POST /__stats/reset, server.stats()) and the optional bearer
// token of the local libSQL endpoint.
import { type Client, createClient } from "@libsql/client/node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { type TestServer, execute, pipeline, post, startTestServer } from "./support.ts";

describe("stats", () => {
  let test: TestServer;
  let client: Client;

  beforeAll(async () => {
    test = await startTestServer();
    client = createClient({ url: test.server.url });
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
    const response = await fetch(`${test.server.url}/__stats`);
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

  it("resets over HTTP", async () => {
    await client.execute("SELECT 1");
    const reply = await post(`${test.server.url}/__stats/reset`, "");
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ pipelines: 0, statements: 0 });
    expect(test.server.stats()).toEqual({ pipelines: 0, statements: 0 });
    expect(await httpStats()).toEqual({ pipelines: 0, statements: 0 });
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
    const reply = await post(`${test.server.url}/v2/pipeline`, { requests: [execute("SELECT 1")] }, {
      authorization: "Bearer wrong",
    });
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
    const reply = await post(`${test.server.url}/v2/pipeline`, { baton: null, requests: [{ type: "close" }] }, {
      authorization: "Bearer s3cret",
    });
    expect(reply.status).toBe(200);
    await expect(pipeline(test.server, null, [{ type: "close" }])).rejects.toThrow("401");
  });
});
