// The documentation of the sessions routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const OwnSession = z.object({
  session_id: z.string().openapi({ description: "equals the device_key returned at sign-in" }),
  last_active: z.number().check(z.int()).openapi({ description: "unix seconds" }),
  status: z.number().check(z.int()).openapi({ description: "0 active (only active sessions are listed)" }),
  ua: z.string(),
  ip: z.string().openapi({ description: "masked, e.g. 192.*.*.23" }),
});
const AnySession = z.object({ ...OwnSession.shape, user_id: z.number().check(z.int()) });

export const routeDocs: RouteDocs = {
  "get /api/me/sessions": {
    tags: ["sessions"],
    summary:
      "The caller's active device sessions, most recently used first; `page`/`per_page` (at most 1000) as AList's",
    responses: envelopeResponse(z.array(OwnSession), "Sessions"),
  },
  "post /api/me/sessions/evict": {
    tags: ["sessions"],
    summary: "End one of the caller's device sessions; its token is refused from the next request on",
    responses: envelopeResponse(z.null(), "Evicted"),
  },
  "get /api/admin/session/list": {
    tags: ["sessions", "admin"],
    summary:
      "Every user's active device sessions, most recently used first; `page`/`per_page` (at most 1000) as AList's",
    responses: envelopeResponse(z.array(AnySession), "Sessions"),
  },
  "post /api/admin/session/evict": {
    tags: ["sessions", "admin"],
    summary: "End anyone's device session",
    responses: envelopeResponse(z.null(), "Evicted"),
  },
};
