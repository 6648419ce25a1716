// The documentation of the messenger routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const tags = ["messenger"];

export const routeDocs: RouteDocs = {
  "post /api/admin/message/get": {
    summary:
      "The next message for the web UI: there never is one (code 404 `no message`, as OpenList answers an empty inbox)",
    tags,
    responses: envelopeResponse(
      z.object({ type: z.string(), content: z.string() }),
      "Never: nothing in Gatehouse sends messages",
    ),
  },
  "post /api/admin/message/send": {
    summary: "Refused (code 400): nothing in Gatehouse reads messages from the web UI",
    tags,
    responses: envelopeResponse(z.null(), "Never"),
  },
};
