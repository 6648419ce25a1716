// The documentation of the me routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const PermissionEntry = z.object({ path: z.string(), permission: z.number().check(z.int()) });

const CurrentUser = z.object({
  id: z.number().check(z.int()),
  username: z.string(),
  password: z.literal("").openapi({ description: "always empty" }),
  base_path: z.string(),
  role: z.array(z.number().check(z.int())),
  role_names: z.array(z.string()),
  disabled: z.boolean(),
  permission: z.number().check(z.int()).openapi({
    description:
      "The user's own bits, except 14 and 15: what the web UI reads as may share and may choose share ids, from the scopes of the user's roles",
  }),
  permissions: z.array(PermissionEntry),
  sso_id: z.string(),
  otp: z.boolean(),
});
export const routeDocs: RouteDocs = {
  "get /api/me": {
    tags: ["me"],
    summary: "The current user, with role names and permissions merged by path",
    responses: envelopeResponse(CurrentUser, "The current user"),
  },
  "post /api/me/update": {
    tags: ["me"],
    summary: "Change one's own username, password or SSO id; a new password ends every other sign-in",
    responses: envelopeResponse(z.null(), "Saved"),
  },
};
