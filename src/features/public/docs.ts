// The documentation of the public routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

export const routeDocs: RouteDocs = {
  "get /api/public/settings": {
    tags: ["public"],
    summary: "Public site settings (flag public or read-only), values as strings",
    responses: envelopeResponse(z.record(z.string(), z.string()), "Settings by key"),
  },
  "get /api/public/archive_extensions": {
    tags: ["public"],
    summary: "Archive extensions the gateway can open (.zip)",
    responses: envelopeResponse(z.array(z.string()), "Extensions"),
  },
  "get /api/public/offline_download_tools": {
    tags: ["public"],
    summary: "Offline download tools available: SimpleHttp (the web UI may add `?path=`; ignored)",
    responses: envelopeResponse(z.array(z.string()), "Tool names"),
  },
};
