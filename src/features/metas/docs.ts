// The documentation of the metas routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const Meta = z.object({
  id: z.number().check(z.int()),
  path: z.string(),
  password: z.string(),
  p_sub: z.boolean(),
  write: z.boolean(),
  w_sub: z.boolean(),
  hide: z.string(),
  h_sub: z.boolean(),
  readme: z.string(),
  r_sub: z.boolean(),
  header: z.string(),
  header_sub: z.boolean(),
});

export const routeDocs: RouteDocs = {
  "get /api/admin/meta/list": {
    tags: ["metas"],
    summary: "Metas by id; per_page absent or 0 lists them all",
    responses: envelopeResponse(
      z.object({ content: z.array(Meta), total: z.number().check(z.int()) }),
      "One page and the total",
    ),
  },
  "get /api/admin/meta/get": {
    tags: ["metas"],
    summary: "One meta",
    responses: envelopeResponse(Meta, "The meta"),
  },
  "post /api/admin/meta/create": {
    tags: ["metas"],
    summary: "Attach a meta to a path (one meta a path)",
    responses: envelopeResponse(z.null(), "Created"),
  },
  "post /api/admin/meta/update": {
    tags: ["metas"],
    summary: "Save a meta whole (every field; absent ones take their defaults, as AList saves the row)",
    responses: envelopeResponse(z.null(), "Saved"),
  },
  "post /api/admin/meta/delete": {
    tags: ["metas"],
    summary: "Delete a meta",
    responses: envelopeResponse(z.null(), "Deleted"),
  },
};
