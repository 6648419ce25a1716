// The documentation of the ldap routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

export const routeDocs: RouteDocs = {
  "post /api/auth/login/ldap": {
    tags: ["auth"],
    summary: "Sign in with a directory account (LDAP); the first sign-in creates the local account",
    description:
      "403 while ldap_login_enabled is off, or when a local account of the same name has allow_ldap off. " +
      "Counted by the same lockout as password sign-in; a user with two-factor on sends otp_code.",
    responses: envelopeResponse(
      z.object({ token: z.string(), device_key: z.string() }),
      "A token valid for TOKEN_EXPIRES_IN_HOURS, and the device session key",
    ),
  },
};
