// The bundled Worker inside workerd, against the local libSQL endpoint over Hrana/HTTP: the same
// path a request takes under wrangler dev and, with Turso instead of the endpoint, in production.
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { roundTrips, sql } from "../support/libsql-http.ts";
import { fetchPath } from "../support/workerd-client.ts";

describe("the Worker in workerd", () => {
  it("answers /ping without touching the database", async () => {
    const counter = await roundTrips();
    const response = await fetchPath("/ping");
    expect(await response.text()).toBe("pong");
    expect(await counter.count()).toBe(0);
  });

  it("serves the public settings from the database in one round trip", async () => {
    const counter = await roundTrips();
    const body = (await (await fetchPath("/api/public/settings")).json()) as {
      code: number;
      data: Record<string, string>;
    };
    expect(body.code).toBe(200);
    expect(body.data.version).toBe("v3.58.0");
    expect(body.data.default_page_size).toBe("50");
    expect(body.data).not.toHaveProperty("token");
    expect(await counter.count()).toBe(1);
  });

  it("answers unknown routes and wrong methods with envelopes", async () => {
    expect(await (await fetchPath("/api/nowhere")).json()).toEqual({
      code: 404,
      message: "no route for GET /api/nowhere",
      data: null,
    });
    expect(
      ((await (await fetchPath("/api/public/settings", { method: "DELETE" })).json()) as { code: number }).code,
    ).toBe(405);
  });
});

describe("the cron trigger", () => {
  beforeEach(async () => {
    await sql("DELETE FROM device_sessions");
    await sql("UPDATE settings SET value = '86400' WHERE key = 'device_session_ttl'");
  });

  it("removes device sessions idle longer than device_session_ttl and keeps the rest", async () => {
    const now = Math.floor(Date.now() / 1000);
    await sql(
      "INSERT INTO device_sessions (device_key, user_id, token_id, last_active) VALUES ('stale', 2, 't', ?), ('fresh', 2, 't', ?)",
      [now - 90_000, now - 60],
    );
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/10 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await sql("SELECT device_key FROM device_sessions ORDER BY device_key")).toEqual([["fresh"]]);
  });
});
