// A fault of the server at /dav, not a refusal: the database unreachable, or answering what it
// should not. A WebDAV client reads the HTTP status, so the reply is a bare 5xx (never the API's
// envelope with HTTP 200, which a client takes for an answer) and the fault is logged.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { ADMIN_BASIC } from "../../../test/support/dav-client.ts";
import worker from "../../index.ts";

/** PROPFIND Depth 1 of /dav/ by the Worker with its database at `databaseUrl`; the reply and what it logged. */
async function propfindWith(databaseUrl: string | undefined) {
  const logged = vi.spyOn(console, "error").mockImplementation(() => {});
  const ctx = createExecutionContext();
  const reply = await worker.fetch(
    new Request("http://gatehouse.test/dav/", {
      method: "PROPFIND",
      headers: { Authorization: ADMIN_BASIC, Depth: "1", "CF-Connecting-IP": "198.51.100.251" },
    }),
    { ...env, TURSO_DATABASE_URL: databaseUrl },
    ctx,
  );
  const body = await reply.text();
  await waitOnExecutionContext(ctx);
  return { reply, body, logged: logged.mock.calls.map((call) => call.map(String).join(" ")) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a fault of the server at /dav", () => {
  it("answers 503 with Retry-After, as text, when the database cannot be reached, and logs it", async () => {
    // Port 9 (discard) on 127.0.0.1: nothing listens there, the connection is refused.
    const { reply, body, logged } = await propfindWith("http://127.0.0.1:9");
    expect(reply.status).toBe(503);
    expect(reply.headers.get("Retry-After")).toBe("5");
    expect(reply.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(body).toMatch(/^the database is not answering now, try again later \(request id [\w-]+\)\n$/);
    expect(() => JSON.parse(body)).toThrow();
    expect(logged.some((line) => line.includes("The database could not be reached"))).toBe(true);
  });

  it("answers 500 as text, never an envelope, when the database answers what it should not, and logs it", async () => {
    // A server that is no database (the upstream WebDAV server): its 4xx is no transient failure.
    const { reply, body, logged } = await propfindWith(inject("storageServers").webdavUrl);
    expect(reply.status).toBe(500);
    expect(reply.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(body).toMatch(/^internal error \(request id [\w-]+\)\n$/);
    expect(body).not.toContain('"code"');
    expect(logged.some((line) => line.includes("The database answered HTTP 4"))).toBe(true);
  });

  it("answers 500 as text when a middleware before the WebDAV server fails (no database configured)", async () => {
    const { reply, body, logged } = await propfindWith(undefined);
    expect(reply.status).toBe(500);
    expect(reply.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(body).toMatch(/^internal error \(request id [\w-]+\)\n$/);
    expect(logged.some((line) => line.includes("TURSO_DATABASE_URL is not set"))).toBe(true);
  });
});
