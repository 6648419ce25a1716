// The documentation of the auth routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const SignInResult = z.object({ token: z.string(), device_key: z.string() });

const signIn = (summary: string) => ({
  tags: ["auth"],
  summary,
  description: "A `Client-Id` header (or `client_id` query) keeps one device session across sign-ins.",
  responses: envelopeResponse(SignInResult, "A token valid for TOKEN_EXPIRES_IN_HOURS, and the device session key"),
});

export const routeDocs: RouteDocs = {
  "post /api/auth/login": signIn("Sign in with a password"),
  "post /api/auth/login/hash": signIn("Sign in with sha256(password + '-https://github.com/alist-org/alist')"),
  "get /api/auth/logout": {
    tags: ["auth"],
    summary: "Sign out: the device session becomes inactive and its token stops working",
    responses: envelopeResponse(z.null(), "Signed out"),
  },
};
