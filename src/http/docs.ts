// The routes' documentation, apart from the routes. A feature's routes.ts defines what runs (method,
// path, guard, request schemas); its docs.ts holds, for each route keyed by method and path, what
// only the OpenAPI document reads: tags, summary, description and responses. scripts/openapi.ts joins
// the two (`documentedDefinitions`); the Worker never imports a docs.ts, so none of it is in the
// bundle (docs/decisions.md D27.4). The schemas here are zod/mini, like the routes' (classic zod
// when scripts/openapi.ts builds the document), and `.openapi()` is ./openapi.ts's.
import * as z from "zod/mini";
import type { RouteConfig, Schema } from "./openapi.ts";
import type { OpenApiDefinition } from "./router.ts";
import "./openapi.ts";

/** A route's documentation: the fields of its OpenAPI operation that the Worker never reads. */
export interface RouteDoc {
  tags?: string[];
  summary?: string;
  description?: string;
  /** Only for a path served outside `app.openapi` (registered by hand): the parameters it reads. */
  request?: RouteConfig["request"];
  /** Handlers answer with the envelope helpers; this says what they answer. */
  responses: Record<string | number, unknown>;
}

/** A module's documentation, by route: `"post /api/admin/user/create": {...}`. */
export type RouteDocs = Record<`${RouteConfig["method"]} /${string}`, RouteDoc>;

/** The `{code, message, data}` envelope around a payload schema. */
function envelopeOf<T extends Schema>(data: T) {
  return z.object({
    code: z.number().check(z.int()).openapi({ example: 200 }),
    message: z.string().openapi({ example: "success" }),
    data,
  });
}

/** A route's one documented response: always HTTP 200 with the envelope (failures included). */
export function envelopeResponse<T extends Schema>(data: T, description: string) {
  return {
    200: {
      description: `${description}. Failures use the same envelope with another code and data null.`,
      content: { "application/json": { schema: envelopeOf(data) } },
    },
  } as const;
}

/** Every module's documentation in one table; a route documented twice is a mistake. */
export function allDocs(modules: readonly RouteDocs[]): RouteDocs {
  const all: RouteDocs = {};
  for (const docs of modules)
    for (const [key, doc] of Object.entries(docs) as [keyof RouteDocs, RouteDoc][]) {
      if (key in all) throw new Error(`${key} is documented twice`);
      all[key] = doc;
    }
  return all;
}

/**
 * The router's recorded definitions with each route's documentation joined in, as the generator
 * reads them. Throws when a recorded route has no documentation, or documentation names no route.
 */
export function documentedDefinitions(
  definitions: readonly OpenApiDefinition[],
  docs: RouteDocs,
): (Exclude<OpenApiDefinition, { type: "route" }> | { type: "route"; route: RouteConfig & RouteDoc })[] {
  const unused = new Set(Object.keys(docs));
  const undocumented: string[] = [];
  const joined = definitions.map((definition) => {
    if (definition.type !== "route") return definition;
    const { method, path, request, ...guard } = definition.route;
    const key = `${method} ${path}` as keyof RouteDocs;
    const doc = docs[key];
    if (!doc) {
      undocumented.push(key);
      return { type: "route" as const, route: { ...definition.route, responses: {} } };
    }
    unused.delete(key);
    const { responses, request: documentedRequest, ...about } = doc;
    if (request && documentedRequest) throw new Error(`${key}: its request is in its route, not its documentation`);
    const parameters = request ?? documentedRequest;
    // The generator keeps these fields in the order given: tags, summary and description come
    // before the guard's security in every operation of the document.
    return {
      type: "route" as const,
      route: { method, path, ...about, ...guard, ...(parameters ? { request: parameters } : {}), responses },
    };
  });
  const problems = [
    ...undocumented.map((key) => `${key} has no documentation (add it to its feature's docs.ts)`),
    ...[...unused].map((key) => `${key} is documented but no route is (a typo in its method or path?)`),
  ];
  if (problems.length > 0) throw new Error(problems.join("\n"));
  return joined;
}
