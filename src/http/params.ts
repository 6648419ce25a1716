// Query-string parameters shared by many routes. Ids arrive as strings (`?id=3`) on POSTs with an
// empty body; `0`, negatives and non-numbers are refused, never read as "the first row".
import * as z from "zod";
import "./openapi.ts";

/** A positive integer id as a query string, parsed to a number (at most 2^53 - 1, which ids never pass). */
export const idParam = z
  .string({ error: "is required" })
  .refine((value) => /^[1-9][0-9]{0,15}$/.test(value) && Number.isSafeInteger(Number(value)), { error: "must be a positive integer" })
  .transform(Number)
  .openapi({ type: "integer", example: 1 });

/** `page` (from 1) and `per_page` (at most 1000; 0 or absent means all, as AList treats it). */
export const pagingParams = {
  page: z
    .string()
    .regex(/^[0-9]{1,9}$/, { error: "must be a non-negative integer" })
    .transform((v) => Math.max(1, Number(v)))
    .optional()
    .openapi({ type: "integer", example: 1 }),
  per_page: z
    .string()
    .regex(/^[0-9]{1,9}$/, { error: "must be a non-negative integer" })
    .transform(Number)
    .optional()
    .openapi({ type: "integer", example: 50 }),
};

export const MAX_PAGE_SIZE = 1000;

/** Limit and offset for a page; per_page 0 or absent = everything up to MAX_PAGE_SIZE. */
export function pageWindow(query: { page?: number | undefined; per_page?: number | undefined }): { limit: number; offset: number } {
  const limit = query.per_page ? Math.min(query.per_page, MAX_PAGE_SIZE) : MAX_PAGE_SIZE;
  return { limit, offset: ((query.page ?? 1) - 1) * limit };
}
