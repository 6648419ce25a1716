// Route definitions: `createRoute`, and the `.openapi()` metadata method route schemas call.
//
// The OpenAPI document is built ahead of time from these same definitions (scripts/openapi.ts, with
// @hono/zod-openapi's generator, which gives `.openapi()` its real meaning before any schema is
// built) and the Worker serves that file, so neither the generator nor the metadata ships. At run
// time `.openapi()` only hands back the schema it was called on: validation never reads metadata.
//
// Schemas import zod as `import * as z from "zod"`, never `import { z } from "zod"`: the bundler
// keeps only the parts a namespace import uses, but the `z` object drags in all of zod (its 64
// locales, JSON Schema conversion). A file that calls `.openapi()` at load imports this module.
import type { createRoute as CreateRoute } from "@hono/zod-openapi";
import * as z from "zod";

const schemaPrototype = z.ZodType.prototype as { openapi?: unknown };
if (schemaPrototype.openapi === undefined) {
  schemaPrototype.openapi = function (this: z.ZodType) {
    return this;
  };
}

/** A route's definition: method, path, schemas, responses (as @hono/zod-openapi's `createRoute`). */
export const createRoute = ((config: { path: string }) => {
  const route = {
    ...config,
    getRoutingPath() {
      return config.path.replaceAll(/\/{(.+?)}/g, "/:$1");
    },
  };
  return Object.defineProperty(route, "getRoutingPath", { enumerable: false });
}) as typeof CreateRoute;
