// Query-string parameters shared by many routes. Ids arrive as strings (`?id=3`) on POSTs with an
// empty body; `0`, negatives and non-numbers are refused, never read as "the first row".
import * as z from "zod/mini";
import "./openapi.ts";
import type { SQL } from "drizzle-orm";
import type { Context } from "hono";
import type { Plan } from "../db/plan.ts";
import type { Database } from "../db/client.ts";
import type { AppEnv } from "./context.ts";

/** A positive integer id as a query string, parsed to a number (at most 2^53 - 1, which ids never pass). */
export const idParam = z
  .pipe(
    z.string({ error: "is required" }).check(
      z.refine((value) => /^[1-9][0-9]{0,15}$/.test(value) && Number.isSafeInteger(Number(value)), {
        error: "must be a positive integer",
      }),
    ),
    z.transform(Number),
  )
  .openapi({ type: "integer", example: 1 });

const nonNegativeInteger = () => z.string().check(z.regex(/^[0-9]{1,9}$/, { error: "must be a non-negative integer" }));

/** `page` (from 1) and `per_page` (at most 1000; 0 or absent means all, as AList treats it). */
export const pagingParams = {
  page: z
    .optional(
      z.pipe(
        nonNegativeInteger(),
        z.transform((v) => Math.max(1, Number(v))),
      ),
    )
    .openapi({ type: "integer", example: 1 }),
  per_page: z.optional(z.pipe(nonNegativeInteger(), z.transform(Number))).openapi({ type: "integer", example: 50 }),
};

const MAX_PAGE_SIZE = 1000;

/** Limit and offset for a page; per_page 0 or absent = everything up to MAX_PAGE_SIZE. */
export function pageWindow(query: { page?: number | undefined; per_page?: number | undefined }): {
  limit: number;
  offset: number;
} {
  const limit = query.per_page ? Math.min(query.per_page, MAX_PAGE_SIZE) : MAX_PAGE_SIZE;
  return { limit, offset: ((query.page ?? 1) - 1) * limit };
}

/**
 * A route's read planned from its query string (auth/guard.ts `reading`): parsed with the route's
 * own schema; null when it does not parse (the route's validator then answers 400).
 */
export function fromQuery<S extends z.ZodMiniType, T>(
  schema: S,
  build: (db: Database, query: z.output<S>, callerId: SQL, callerIsAdmin: SQL) => Plan<T>,
) {
  return (c: Context<AppEnv>, callerId: SQL, callerIsAdmin: SQL): Plan<T> | null => {
    const query = schema.safeParse(c.req.query());
    return query.success ? build(c.var.db, query.data, callerId, callerIsAdmin) : null;
  };
}

/**
 * The same, planned from the JSON body (read once, before the guard; the validator reads it again
 * from Hono's cache). What the schema made of it is kept on the context: the route's validator,
 * given the same body and schema, takes it instead of parsing it again (docs/decisions.md D26.7).
 */
export function fromJson<S extends z.ZodMiniType, T>(
  schema: S,
  build: (db: Database, body: z.output<S>, callerId: SQL, callerIsAdmin: SQL) => Plan<T>,
) {
  const planFromBody = (c: Context<AppEnv>, callerId: SQL, callerIsAdmin: SQL): Plan<T> | null => {
    const input = c.var.json;
    const body = schema.safeParse(input);
    if (!body.success) return null;
    // Undefined: no JSON content type, or a body that is not JSON, which the validator answers.
    if (input !== undefined) c.set("parsedJson", { schema, data: body.data });
    return build(c.var.db, body.data, callerId, callerIsAdmin);
  };
  return Object.assign(planFromBody, { readsJson: true });
}
