// Route definitions: `createRoute`, the types that tie a handler's validated input to its route's
// schemas, and the `.openapi()` metadata method route schemas call.
//
// Schemas are zod/mini (`import * as z from "zod/mini"`): the same zod 4 core as classic zod, but
// functions instead of methods (`z.optional(z.string().check(z.maxLength(8)))`), so the bundle
// keeps only what the routes use, about 17 KiB gzip less than classic zod.
//
// The OpenAPI document is built ahead of time from these same definitions (scripts/openapi.ts):
// there "zod/mini" resolves to classic zod, whose schemas the generator (@asteasolutions/
// zod-to-openapi, through @hono/zod-openapi) reads, and which gives `.openapi()` its real meaning.
// Every function used here exists in both with the same meaning. The Worker serves the built file,
// so neither the generator nor the metadata ships: at run time `.openapi()` hands back the schema
// it was called on, and validation never reads metadata.
import type { Handler, MiddlewareHandler } from "hono";
import type * as core from "zod/v4/core";
import * as z from "zod/mini";
import type { AppEnv } from "./context.ts";

/** The OpenAPI fields a schema documents itself with: description, example, type, … */
type SchemaMetadata = Record<string, unknown>;

declare module "zod/mini" {
  interface ZodMiniType<out Output, out Input, out Internals extends core.$ZodTypeInternals<Output, Input>> {
    /** Documentation for the OpenAPI document (a component's name, and/or fields); nothing at run time. */
    openapi(metadata: SchemaMetadata): this;
    openapi(refId: string, metadata?: SchemaMetadata): this;
  }
}

// Under scripts/openapi.ts this module holds classic zod, whose `.openapi()` the generator set up.
const miniPrototype = (z as { ZodMiniType?: { prototype: { openapi?: unknown } } }).ZodMiniType?.prototype;
if (miniPrototype && miniPrototype.openapi === undefined) {
  miniPrototype.openapi = function (this: core.$ZodType) {
    return this;
  };
}

export type Schema = core.$ZodType;

/** A request body's media types and their schemas (`jsonBody` builds the usual one). */
type BodyContent = Record<string, { schema: Schema | object }>;

/**
 * A route as `app.openapi()` takes it: what the Worker runs (method, path, guard, the validated
 * input) and the security its guard spreads. Its tags, summary, description and responses are
 * documentation only, kept in the feature's `docs.ts` (src/http/docs.ts), out of the bundle.
 */
export interface RouteConfig {
  method: "get" | "post" | "put" | "delete" | "patch" | "head" | "options";
  path: string;
  security?: Record<string, string[]>[];
  /** Run before the validators: the guard, and a route's planned reads. */
  middleware?: MiddlewareHandler<AppEnv> | readonly MiddlewareHandler<AppEnv>[];
  /** Served but left out of the document. */
  hide?: boolean;
  request?: {
    query?: Schema;
    params?: Schema;
    headers?: Schema;
    cookies?: Schema;
    body?: { content: BodyContent; required?: boolean; description?: string };
  };
}

/** What a route's definition may not hold: its documentation, which lives in the feature's docs.ts. */
type Undocumented = { tags?: never; summary?: never; description?: never; responses?: never };

type Output<S> = S extends Schema ? core.output<S> : never;
type JsonSchemaOf<R> = R extends { request: { body: { content: { "application/json": { schema: infer S } } } } }
  ? S
  : never;

/** What `c.req.valid(target)` hands a route's handler: each declared input, parsed. */
type RouteInput<R extends RouteConfig> = {
  out: (R extends { request: { query: infer Q } } ? { query: Output<Q> } : object) &
    (R extends { request: { params: infer P } } ? { param: Output<P> } : object) &
    (R extends { request: { headers: infer H } } ? { header: Output<H> } : object) &
    ([JsonSchemaOf<R>] extends [never] ? object : { json: Output<JsonSchemaOf<R>> });
};

export type RouteHandler<R extends RouteConfig> = Handler<AppEnv, string, RouteInput<R>>;

/** A route's definition: its path in OpenAPI form (`/api/x/{id}`); the router registers it as Hono's (`/api/x/:id`). */
export function createRoute<const R extends RouteConfig & Undocumented>(config: R): R {
  return config;
}
