// The documentation of the drivers routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const DriverItem = z
  .object({
    name: z.string(),
    type: z.enum(["string", "number", "text", "select", "bool"]),
    default: z.string(),
    options: z.string().openapi({ description: "comma-separated choices of a select" }),
    required: z.boolean(),
    help: z.string(),
  })
  .openapi("DriverItem");

const DriverInfo = z
  .object({
    common: z.array(DriverItem),
    additional: z.array(DriverItem),
    config: z.object({
      name: z.string(),
      local_sort: z.boolean(),
      only_local: z.boolean(),
      only_proxy: z.boolean(),
      no_cache: z.boolean(),
      no_upload: z.boolean(),
      need_ms: z.boolean(),
      default_root: z.string(),
      alert: z.string(),
    }),
  })
  .openapi("DriverInfo");
export const routeDocs: RouteDocs = {
  "get /api/admin/driver/list": {
    tags: ["drivers"],
    summary: "Every driver's template, by driver name",
    responses: envelopeResponse(z.record(z.string(), DriverInfo), "Templates by driver name"),
  },
  "get /api/admin/driver/names": {
    tags: ["drivers"],
    summary: "The driver names, in alphabetical order",
    responses: envelopeResponse(z.array(z.string()), "Driver names"),
  },
  "get /api/admin/driver/info": {
    tags: ["drivers"],
    summary: "One driver's template; an unknown driver gets code 404",
    responses: envelopeResponse(DriverInfo, "The template"),
  },
};
