// GET /api/openapi.json against the router it describes: every served route is documented with its
// method, the security it really enforces, the envelope it answers and the JSON body it reads; and
// the document holds together as OpenAPI 3.1 (required fields, every $ref and scheme resolves).
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settings } from "../../src/db/schema.ts";
import { routeDocs } from "../../src/docs.ts";
import { documentedDefinitions, type RouteDocs } from "../../src/http/docs.ts";
import { servedRoutes } from "../support/authorization-matrix.ts";
import { backgroundContext, createUnitFixture, readEnvelope, testEnv, type UnitFixture } from "../support/unit.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Json }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Json }> }>;
  parameters?: { name: string; in: string; required?: boolean }[];
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  security?: unknown;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; description?: string }> };
}

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const DOCUMENT_PATH = "/api/openapi.json";

let fixture: UnitFixture;
let document: Document;
let raw: JsonObject;
/** Routes as the document names them: `get /api/me`. The ALL route (/ping) is documented as its GET. */
let routes: { operation: string; method: string; path: string }[];

const { ctx: executionContext, pending: backgroundWork } = backgroundContext();

beforeAll(async () => {
  fixture = await createUnitFixture();
  const response = await fixture.request(DOCUMENT_PATH);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  raw = (await response.json()) as JsonObject;
  // The same JSON, read through the OpenAPI types; the tests below check what they rely on.
  document = raw as unknown as Document;
  routes = servedRoutes(fixture.app.routes)
    .filter((route) => route.path !== DOCUMENT_PATH)
    .map(({ method, path }) => {
      const documented = {
        method: method === "ALL" ? "get" : method.toLowerCase(),
        path: path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}"),
      };
      return { ...documented, operation: `${documented.method} ${documented.path}` };
    });
});
afterAll(async () => {
  await Promise.allSettled(backgroundWork);
  fixture.close();
});

const operation = (route: { method: string; path: string }) => document.paths[route.path]?.[route.method];

/** `#/components/schemas/X` → the node it points at, or undefined. */
function resolvePointer(ref: string): Json | undefined {
  if (!ref.startsWith("#/")) return undefined;
  let node: Json | undefined = raw;
  for (const part of ref
    .slice(2)
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))) {
    node = node !== null && typeof node === "object" && !Array.isArray(node) ? node[part] : undefined;
  }
  return node;
}

function* references(node: Json, at: string): Generator<{ at: string; ref: Json }> {
  if (node === null || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* references(item, `${at}/${i}`);
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref") yield { at, ref: value };
    else yield* references(value, `${at}/${key}`);
  }
}

const deref = (schema: Json | undefined): Json | undefined =>
  schema !== null && typeof schema === "object" && !Array.isArray(schema) && typeof schema.$ref === "string"
    ? deref(resolvePointer(schema.$ref))
    : schema;

const permanentToken = async () =>
  (await fixture.db.select({ value: settings.value }).from(settings).where(eq(settings.key, "token")))[0]!.value;

function send(route: { method: string; path: string }, init: RequestInit = {}) {
  return fixture.app.request(route.path, { method: route.method.toUpperCase(), ...init }, testEnv, executionContext);
}

describe("the document is OpenAPI 3.1", () => {
  it("has the required top-level fields", () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof document.info.title).toBe("string");
    expect(document.info.title).not.toBe("");
    expect(typeof document.info.version).toBe("string");
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
    for (const path of Object.keys(document.paths)) expect(path, "paths start with /").toMatch(/^\//);
  });

  it("resolves every $ref inside the document", () => {
    const all = [...references(raw, "#")];
    expect(all.length, "the document uses components").toBeGreaterThan(0);
    const broken = all.filter(({ ref }) => typeof ref !== "string" || resolvePointer(ref) === undefined);
    expect(broken).toEqual([]);
  });

  it("gives every operation responses and well-formed parameters", () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!HTTP_METHODS.includes(method)) continue;
        const where = `${method} ${path}`;
        const codes = Object.keys(op.responses ?? {});
        if (codes.length === 0) problems.push(`${where}: no responses`);
        for (const code of codes) {
          if (!/^([1-5][0-9X]{2}|default)$/.test(code)) problems.push(`${where}: response key ${code}`);
          if (typeof op.responses![code]!.description !== "string")
            problems.push(`${where}: response ${code} has no description`);
        }
        const seen = new Set<string>();
        for (const parameter of op.parameters ?? []) {
          const key = `${parameter.in}:${parameter.name}`;
          if (seen.has(key)) problems.push(`${where}: parameter ${key} twice`);
          seen.add(key);
          if (!["query", "header", "path", "cookie"].includes(parameter.in))
            problems.push(`${where}: parameter ${key} in ${parameter.in}`);
          if (parameter.in === "path" && parameter.required !== true)
            problems.push(`${where}: path parameter ${parameter.name} must be required`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("names only security schemes it defines, with no document-wide default", () => {
    expect(document.security, "a global requirement would also cover the public routes").toBeUndefined();
    const schemes = document.components.securitySchemes;
    const used = Object.values(document.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op.security ?? []).flatMap(Object.keys)),
    );
    expect([...new Set(used)].filter((name) => !(name in schemes))).toEqual([]);
  });
});

describe("the two auth schemes", () => {
  it("describe the login token and the permanent token, both in the raw Authorization header", () => {
    const { token, permanentToken } = document.components.securitySchemes;
    expect(token).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
    expect(token!.description).toMatch(/login/i);
    expect(permanentToken).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
    expect(permanentToken!.description).toMatch(/permanent token/i);
  });
});

describe("every route the router serves", () => {
  it("is in the document under its method, and the document lists nothing the router does not serve", () => {
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => HTTP_METHODS.includes(method))
        .map((method) => `${method} ${path}`),
    );
    const served = routes.map((route) => route.operation);
    expect({
      missing: served.filter((op) => !documented.includes(op)),
      unserved: documented.filter((op) => !served.includes(op)),
    }).toEqual({
      missing: [],
      unserved: [],
    });
  });

  it("declares the token schemes exactly where the guard refuses an anonymous caller", async () => {
    const mismatches: string[] = [];
    for (const route of routes) {
      // The guest is disabled on a fresh install, so the guard answers 401 before any input is read.
      const response = await send(route);
      const body = response.headers.get("content-type")?.startsWith("application/json")
        ? ((await response.json()) as { code: number; message: string })
        : null;
      const guarded = body?.code === 401 && body.message === "Guest user is disabled, login please";
      const security = operation(route)?.security;
      const expected = guarded ? [{ token: [] }, { permanentToken: [] }] : undefined;
      if (JSON.stringify(security) !== JSON.stringify(expected)) {
        mismatches.push(
          `${route.operation}: ${guarded ? "guarded" : "public"} but documents ${JSON.stringify(security)}`,
        );
      }
    }
    expect(mismatches).toEqual([]);
    expect(routes.filter((route) => operation(route)?.security).length, "some routes are guarded").toBeGreaterThan(0);
  });

  it("answers the {code, message, data} envelope in its documented 200 reply (/ping: plain text)", () => {
    const problems: string[] = [];
    for (const route of routes) {
      const content = operation(route)?.responses?.["200"]?.content ?? {};
      if (route.path === "/ping") {
        if (!content["text/plain"]) problems.push(`${route.operation}: no text/plain 200`);
        continue;
      }
      // /d, /p, /sd, /sad and an archive's /ae, /ad, /ap answer bytes; /d's, /p's and the archive routes'
      // refusals are envelopes (src/features/fs/read.test.ts, src/features/archive/archive.workerd.test.ts),
      // /sd's and /sad's real HTTP statuses (src/features/shares/).
      if (/^\/(?:[dp]|sd|sad|a[edp])\//.test(route.path)) {
        if (!content["application/octet-stream"]) problems.push(`${route.operation}: no application/octet-stream 200`);
        continue;
      }
      const schema = deref(content["application/json"]?.schema) as JsonObject | undefined;
      const properties = (deref(schema?.properties) ?? {}) as JsonObject;
      const ok =
        schema?.type === "object" &&
        Object.keys(properties).sort().join() === "code,data,message" &&
        (deref(properties.code) as JsonObject).type === "integer" &&
        (deref(properties.message) as JsonObject).type === "string" &&
        JSON.stringify([...((schema.required as string[]) ?? [])].sort()) ===
          JSON.stringify(["code", "data", "message"]);
      if (!ok) problems.push(`${route.operation}: 200 is not the envelope: ${JSON.stringify(schema)}`);
    }
    expect(problems).toEqual([]);
  });

  it("documents a required JSON body exactly where the route reads one", async () => {
    const mismatches: string[] = [];
    for (const route of routes) {
      const documented = operation(route)?.requestBody;
      let readsJson = false;
      if (route.method === "post") {
        // A route that reads JSON refuses a malformed body; the others never look at it. Admin
        // callers get past every guard; the permanent token is read afresh as reset_token changes it.
        const response = await send(route, {
          headers: { Authorization: await permanentToken(), "Content-Type": "application/json;charset=UTF-8" },
          body: '{"truncated',
        });
        readsJson = (await response.text()).includes('"message":"malformed JSON body');
      }
      const schema = documented?.content?.["application/json"]?.schema;
      if (readsJson && !(documented?.required === true && schema !== undefined && deref(schema) !== undefined)) {
        mismatches.push(`${route.operation} reads JSON but documents ${JSON.stringify(documented)}`);
      }
      // Uploads document their raw body under another media type.
      if (!readsJson && documented?.content?.["application/json"] !== undefined)
        mismatches.push(`${route.operation} reads no JSON but documents a body`);
    }
    expect(mismatches).toEqual([]);
    expect(routes.filter((route) => operation(route)?.requestBody).length, "some routes take JSON").toBeGreaterThan(0);
  });
});

// The Worker serves the document scripts/openapi.ts builds from the route definitions in Node,
// where @hono/zod-openapi's generator lives (it does not ship), and publishes into the assets folder.
describe("the served document is built from the route definitions", () => {
  const root = join(import.meta.dirname, "../..");

  it("is up to date (else: npm run openapi)", { timeout: 60_000 }, async () => {
    const check = promisify(execFile)(
      process.execPath,
      [join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/openapi.ts", "--check"],
      { cwd: root },
    );
    await expect(check.then(({ stdout }) => stdout)).resolves.toMatch(/up to date/);
  });

  it("is served as generated, from the assets folder", async () => {
    const generated = JSON.parse(readFileSync(join(root, "src/generated/openapi.json"), "utf8")) as unknown;
    expect(raw).toEqual(generated);
  });

  it("is a misconfiguration, not a crash, when the assets folder lacks it", async () => {
    // A Fetcher with only `fetch`, the one member the app calls.
    const emptyAssets = { fetch: async () => new Response("not found", { status: 404 }) } as unknown as Fetcher;
    for (const env of [{ ASSETS: emptyAssets }, { ASSETS: undefined }]) {
      const response = await fixture.request(DOCUMENT_PATH, {}, env);
      expect(await readEnvelope(response)).toEqual({
        code: 500,
        message:
          "server misconfigured: the OpenAPI document is not in the assets folder (npm run openapi puts it there)",
        data: null,
      });
    }
  });

  it("leaves the routes' documentation out of the Worker: only docs modules import a docs module", () => {
    const files = (readdirSync(join(root, "src"), { recursive: true }) as string[]).filter(
      (file) => /\.tsx?$/.test(file) && !/(^|\/)docs\.ts$/.test(file),
    );
    const offenders = files.filter((file) =>
      /^import (?!type )[^;]*from "[^"]*\/docs\.ts"/m.test(readFileSync(join(root, "src", file), "utf8")),
    );
    expect(offenders).toEqual([]);
    expect(files.length).toBeGreaterThan(50);
  });

  it("leaves the generator and classic zod out of the Worker", () => {
    // Classic zod's methods keep all of it in the bundle; zod/mini keeps what the routes use. The
    // generator (@hono/zod-openapi) runs in scripts/openapi.ts only.
    const files = (readdirSync(join(root, "src"), { recursive: true }) as string[]).filter(
      (file) => /\.tsx?$/.test(file) && !/\.test\.ts$/.test(file),
    );
    const offenders = files.filter((file) => {
      const text = readFileSync(join(root, "src", file), "utf8");
      return (
        /^import (?!type )[^;]*from "@hono\/zod-openapi"/m.test(text) || /^import (?!type )[^;]*from "zod"/m.test(text)
      );
    });
    expect(offenders).toEqual([]);
    expect(files.length).toBeGreaterThan(50);
  });
});

// Each route's summary, description and responses live in its feature's docs.ts, keyed by method and
// path (src/http/docs.ts); scripts/openapi.ts joins them to the routes the router records.
describe("the routes' documentation", () => {
  const definitions = () => fixture.app.openAPIRegistry.definitions;

  it("documents every route the router records, and nothing else", () => {
    const joined = documentedDefinitions(definitions(), routeDocs);
    expect(joined.filter((definition) => definition.type === "route")).toHaveLength(Object.keys(routeDocs).length);
  });

  it("refuses a route without documentation, naming it", () => {
    const { "post /api/admin/user/create": _dropped, ...rest } = routeDocs;
    expect(() => documentedDefinitions(definitions(), rest)).toThrow(
      "post /api/admin/user/create has no documentation (add it to its feature's docs.ts)",
    );
  });

  it("refuses documentation that names no route (a typo in its method or path)", () => {
    const docs: RouteDocs = { ...routeDocs, "get /api/admin/user/create": { responses: {} } };
    expect(() => documentedDefinitions(definitions(), docs)).toThrow(
      "get /api/admin/user/create is documented but no route is (a typo in its method or path?)",
    );
  });
});
