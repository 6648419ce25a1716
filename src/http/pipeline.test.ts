// The request pipeline every route shares: envelope, 404/405, body limit, CORS, request id,
// validation errors, and what happens when the Worker is misconfigured.
import * as z from "zod/mini";
import { createRoute } from "./openapi.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import worker from "../index.ts";
import { ok } from "./envelope.ts";
import { FileError, type FileErrorKind } from "./errors.ts";
import { handleError } from "./on-error.ts";
import { createRouter } from "./router.ts";
import { GATEHOUSE_VERSION } from "../version.ts";
import packageJson from "../../package.json" with { type: "json" };
import { backgroundContext, createUnitFixture, readEnvelope, type UnitFixture } from "../../test/support/unit.ts";

let fixture: UnitFixture;
beforeAll(async () => (fixture = await createUnitFixture()));
afterAll(() => fixture.close());

describe("unknown routes and methods", () => {
  it("answers an unknown path with a 404 envelope", async () => {
    const response = await fixture.request("/api/nope", { method: "POST" });
    expect(response.status).toBe(200);
    expect(await readEnvelope(response)).toEqual({ code: 404, message: "no route for POST /api/nope", data: null });
  });

  it("answers a known path under the wrong method with a 405 envelope and Allow", async () => {
    const response = await fixture.request("/api/public/settings", { method: "POST" });
    expect(response.headers.get("allow")).toBe("GET");
    const body = await readEnvelope(response);
    expect(body.code).toBe(405);
    expect(body.message).toBe("method POST not allowed for /api/public/settings; use GET");
    expect(body.data).toBeNull();
  });
});

describe("body size limit", () => {
  it("refuses a body over MAX_BODY_BYTES with code 413", async () => {
    const response = await fixture.request(
      "/api/public/settings",
      { method: "POST", body: "x".repeat(64) },
      { MAX_BODY_BYTES: "16" },
    );
    expect(await readEnvelope(response)).toEqual({ code: 413, message: "request body too large", data: null });
  });

  it("refuses an oversized streamed body that declares no length", async () => {
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("y".repeat(64)));
        controller.close();
      },
    });
    const response = await fixture.request(
      "/api/public/settings",
      { method: "POST", body, duplex: "half" } as RequestInit,
      { MAX_BODY_BYTES: "16" },
    );
    expect((await readEnvelope(response)).code).toBe(413);
  });
});

describe("CORS", () => {
  it("allows any origin and the headers AList clients send", async () => {
    const response = await fixture.request("/api/public/settings", {
      method: "OPTIONS",
      headers: {
        Origin: "https://files.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,client-id,content-type",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-headers")).toBe("Authorization,Content-Type,Client-Id");
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("marks ordinary replies for any origin", async () => {
    const response = await fixture.request("/api/public/settings", { headers: { Origin: "https://files.example" } });
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("security headers", () => {
  it.each(["/ping", "/api/public/settings", "/api/nope"])("are on every reply, %s included", async (path) => {
    const response = await fixture.request(path);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(response.headers.get("strict-transport-security")).toMatch(/^max-age=\d+/);
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
  });
});

describe("request id and version headers", () => {
  it("sends a request id and Gatehouse's own version; the wire version stays v3.58.0", async () => {
    const response = await fixture.request("/ping");
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get("x-gatehouse-version")).toBe(GATEHOUSE_VERSION);
    expect(GATEHOUSE_VERSION).toBe(packageJson.version);
  });

  it("never takes a request id from the client", async () => {
    const chosen = "11111111-2222-3333-4444-555555555555";
    const [first, second] = await Promise.all(
      [1, 2].map(() => fixture.request("/ping", { headers: { "X-Request-Id": chosen } })),
    );
    const ids = [first!.headers.get("x-request-id"), second!.headers.get("x-request-id")];
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids).not.toContain(chosen);
    expect(ids[0]).not.toBe(ids[1]);
  });
});

describe("input validation", () => {
  // A minimal route on the shared router factory and error mapping, as every feature uses them.
  const login = createRoute({
    method: "post",
    path: "/echo",
    request: {
      body: {
        content: {
          "application/json": { schema: z.object({ username: z.string(), remember: z.optional(z.boolean()) }) },
        },
      },
    },
  });
  const app = createRouter();
  app.openapi(login, (c) => ok(c, c.req.valid("json").username));
  app.onError(handleError);
  const post = (body: string, contentType = "application/json;charset=UTF-8") =>
    app.request("/echo", { method: "POST", body, headers: { "Content-Type": contentType } });

  it("accepts AList's charset-qualified JSON", async () => {
    expect(await readEnvelope(await post('{"username":"alice"}'))).toEqual({
      code: 200,
      message: "success",
      data: "alice",
    });
  });

  it("answers malformed JSON with code 400", async () => {
    const body = await readEnvelope(await post('{"username":'));
    expect(body.code).toBe(400);
    expect(body.message).toMatch(/^malformed JSON body/);
  });

  it("names a missing field", async () => {
    const body = await readEnvelope(await post("{}"));
    expect(body.code).toBe(400);
    expect(body.message).toMatch(/^username: .*expected string/);
  });

  it("names a field of the wrong type", async () => {
    const body = await readEnvelope(await post('{"username":"a","remember":"yes"}'));
    expect(body.code).toBe(400);
    expect(body.message).toMatch(/^remember: .*expected boolean/);
  });

  it.each(["text/plain", "application/x-www-form-urlencoded"])(
    "answers a body sent as %s with code 400, not a crash",
    async (type) => {
      expect(await readEnvelope(await post('{"username":"alice"}', type))).toEqual({
        code: 400,
        message: "the request body must be JSON, sent with Content-Type: application/json",
        data: null,
      });
    },
  );

  it("answers an empty JSON body with code 400", async () => {
    expect((await readEnvelope(await post(""))).code).toBe(400);
  });
});

describe("misconfigured Worker", () => {
  it("answers a clear configuration error when TURSO_DATABASE_URL is missing, and /ping still works", async () => {
    const { ctx } = backgroundContext();
    const response = await worker.fetch(new Request("http://gatehouse.test/api/public/settings"), {}, ctx);
    expect(await readEnvelope(response)).toEqual({
      code: 500,
      message: "server misconfigured: TURSO_DATABASE_URL is not set (wrangler secret put TURSO_DATABASE_URL)",
      data: null,
    });
    expect(await (await worker.fetch(new Request("http://gatehouse.test/ping"), {}, ctx)).text()).toBe("pong");
  });

  it.each([
    ["TASK_PART_BYTES", "64MiB", 'TASK_PART_BYTES must be a positive number, got "64MiB"'],
    ["TASK_GROUP_FILES", "0", 'TASK_GROUP_FILES must be a positive number, got "0"'],
    ["TASK_HEARTBEAT_MS", "1.5", 'TASK_HEARTBEAT_MS must be a whole number, got "1.5"'],
    ["TASK_LEASE_MS", "-1", 'TASK_LEASE_MS must be a positive number, got "-1"'],
  ])("refuses %s=%s rather than falling back to its default", async (name, value, problem) => {
    const response = await fixture.request("/api/public/settings", {}, { [name]: value });
    expect(await readEnvelope(response)).toEqual({
      code: 500,
      message: `server misconfigured: ${problem}`,
      data: null,
    });
  });
});

describe("OpenAPI document", () => {
  it("lists the public routes", async () => {
    const document = (await (await fixture.request("/api/openapi.json")).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/api/public/settings",
        "/api/public/archive_extensions",
        "/api/public/offline_download_tools",
      ]),
    );
  });
});

describe("file-side failures", () => {
  // The envelope code of each kind; a kind left out here fails the type check.
  const codes: Record<FileErrorKind, number> = {
    not_found: 500,
    no_storage: 500,
    not_a_folder: 500,
    not_a_file: 500,
    exists: 500,
    not_implemented: 500,
    forbidden: 403,
    upstream: 500,
    unavailable: 500,
    refused: 500,
  };
  const app = createRouter();
  app.get("/fail/:kind", (c) => {
    throw new FileError(c.req.param("kind") as FileErrorKind, `the ${c.req.param("kind")} text`);
  });
  app.onError(handleError);

  it.each(Object.entries(codes))(
    "answers %s with HTTP 200 and code %i, its text as the message",
    async (kind, code) => {
      const response = await app.request(`/fail/${kind}`);
      expect(response.status).toBe(200);
      expect(await readEnvelope(response)).toEqual({ code, message: `the ${kind} text`, data: null });
    },
  );
});
