// The documentation of the app-passwords routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const AppPassword = z.object({
  id: z.number().check(z.int()),
  name: z.string(),
  created: z.string().openapi({ description: "RFC 3339" }),
  last_used: z
    .nullable(z.string())
    .openapi({ description: "RFC 3339; null until first used. Updated at most once every 5 minutes." }),
});

export const routeDocs: RouteDocs = {
  "get /api/me/app_password/list": {
    tags: ["app passwords"],
    summary: "The caller's app passwords (names and use, never the passwords)",
    responses: envelopeResponse(z.array(AppPassword), "The app passwords, oldest first"),
  },
  "post /api/me/app_password/create": {
    tags: ["app passwords"],
    summary: "Make an app password for a WebDAV client; the password is in this reply and never again",
    responses: envelopeResponse(
      z.object({ ...AppPassword.shape, password: z.string().openapi({ example: "gh-app-3fQ9…" }) }),
      "Made",
    ),
  },
  "post /api/me/app_password/delete": {
    tags: ["app passwords"],
    summary: "Revoke one of the caller's app passwords: WebDAV refuses it from the next request",
    responses: envelopeResponse(z.null(), "Revoked"),
  },
};
