// The fuzz table (test/support/fuzz.ts) against the router and the OpenAPI document: a route that
// takes input and has no row, a row for a route that is gone, or a field the table does not know
// fails here, so nothing is silently left unfuzzed. (A JSON row's fields and a query row's
// parameters are read from its route's schema, so a row that exists names the right ones; a
// missing row still fails.)
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  BODYLESS_ROUTES,
  HEADER_ROUTES,
  JSON_ROUTES,
  QUERY_ROUTES,
  queryRoute,
  type QueryRow,
} from "../support/fuzz.ts";
import { createUnitFixture, type UnitFixture } from "../support/unit.ts";

type Schema = { $ref?: string; type?: string; properties?: Record<string, unknown>; items?: Schema };
type Operation = {
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
};
type OpenApi = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

let fixture: UnitFixture;
let doc: OpenApi;
beforeAll(async () => {
  fixture = await createUnitFixture();
  doc = (await (await fixture.request("/api/openapi.json")).json()) as OpenApi;
});
afterAll(() => fixture.close());

const routerRoutes = (method: string) =>
  [
    ...new Set(
      fixture.app.routes
        .filter((r) => r.method === method && r.path.startsWith("/api/"))
        .map((r) => r.path.replace(/:(\w+)/g, "{$1}")),
    ),
  ].sort();
const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
const queryNames = (op: Operation) =>
  (op.parameters ?? [])
    .filter((p) => p.in === "query")
    .map((p) => p.name)
    .sort();
const resolve = (schema: Schema): Schema =>
  schema.$ref ? resolve(doc.components!.schemas![schema.$ref.split("/").pop()!]!) : schema;

/** The fields of a request body: an object's properties, or those of an array's items (settings/save). */
function bodyFields(op: Operation): string[] {
  const schema = resolve(op.requestBody!.content["application/json"]!.schema);
  const object = schema.type === "array" ? resolve(schema.items!) : schema;
  return Object.keys(object.properties ?? {}).sort();
}

it("has a row for every POST route of the router, and none for a route that does not exist", () => {
  const table = [
    ...JSON_ROUTES.map((r) => r.path),
    ...QUERY_ROUTES.filter((r) => r.method === "POST").map((r) => r.path),
    ...BODYLESS_ROUTES.map((r) => r.path),
    ...HEADER_ROUTES,
  ];
  expect([...new Set(table)].sort()).toEqual(routerRoutes("POST"));
  expect(routerRoutes("POST").length).toBeGreaterThan(20);
});

it("documents every GET route of the router, so their query parameters can be read from the document", () => {
  // The document itself takes no input.
  const documented = [
    "/api/openapi.json",
    ...operations()
      .filter((o) => o.method === "GET")
      .map((o) => o.path),
  ];
  expect(routerRoutes("GET").filter((path) => !documented.includes(path))).toEqual([]);
});

it("has a query row for every route with query parameters, with exactly the documented parameters", () => {
  const documented = operations()
    .filter(({ op }) => queryNames(op).length > 0)
    .map(({ method, path, op }) => `${method} ${path}: ${queryNames(op).join(",")}`)
    .sort();
  const table = QUERY_ROUTES.map((r) => `${r.method} ${r.path}: ${Object.keys(r.params).sort().join(",")}`).sort();
  expect(table).toEqual(documented);
});

it("has a JSON row for every route with a request body, naming exactly the documented fields", () => {
  const documented = operations()
    .filter(({ op }) => op.requestBody?.content["application/json"])
    .map(({ method, path, op }) => `${method} ${path}: ${bodyFields(op).join(",")}`)
    .sort();
  const table = JSON_ROUTES.map((r) => `POST ${r.path}: ${Object.keys(r.fields).sort().join(",")}`).sort();
  expect(table).toEqual(documented);
});

it("gives every JSON route a refused body whose anchors are fields of the route", () => {
  for (const route of JSON_ROUTES) {
    expect(route.variants.length, route.path).toBeGreaterThan(0);
    for (const variant of route.variants) {
      for (const name of [...variant.anchor, ...Object.keys(variant.body)])
        expect(Object.keys(route.fields), `${route.path}: ${name}`).toContain(name);
      for (const name of variant.anchor)
        expect(route.fields[name]!.invalid, `${route.path}: anchor ${name} needs invalid values`).not.toBeNull();
    }
  }
});

it("reads each query row's parameters and their kinds from the document, and refuses a hint the schema cannot take", () => {
  const params = (path: string) => QUERY_ROUTES.find((r) => r.path === path)!.params;
  expect(params("/api/admin/user/sshkey/list")).toMatchObject({
    uid: { kind: "id" },
    page: { kind: "page" },
    per_page: { kind: "page" },
  });
  expect(params("/api/auth/login")).toEqual({ client_id: { kind: "text", maxLength: 255 } });
  expect(params("/api/admin/setting/list").groups).toMatchObject({
    kind: "text",
    pattern: expect.any(String),
    words: expect.arrayContaining(["5,0"]),
  });
  const row: QueryRow = {
    method: "GET",
    path: "/api/admin/user/get",
    group: "users-roles",
    caller: "admin",
    answers: [200],
  };
  expect(queryRoute(row).params).toEqual({ id: { kind: "id" } });
  expect(() => queryRoute({ ...row, hints: { uid: { words: ["1"] } } })).toThrow(
    /a hint for "uid", which the schema does not have/,
  );
  expect(() => queryRoute({ ...row, refusedIds: { uid: [] } })).toThrow(/"uid", which the schema does not have/);
  expect(() => queryRoute({ ...row, method: "POST" })).toThrow(/takes no query parameters/);
});
