// The documentation of the sso routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import * as z from "zod/mini";
import { CALLBACK_ALIASES } from "./routes.ts";
import { CALLBACK_PATH } from "./rules.ts";
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";

/** The redirect URI and its other names (routes.ts), served outside `app.openapi`. */
const callbackDocs = (path: string) => ({
  tags: ["auth"],
  summary:
    path === CALLBACK_PATH
      ? "Single sign-on's redirect URI: a page handing the token (or identity) to the opener, on this origin only"
      : "The same as /api/auth/sso_callback (OpenList's other name for it)",
  request: {
    query: z.object({
      state: z.string(),
      code: z.optional(z.string()),
      error: z.optional(z.string()),
    }),
  },
  responses: {
    200: {
      description:
        "The page (text/html) handing the result to the opener; refusals (a bad state, nonce or ID token, a disabled account) are the envelope",
      content: {
        ...envelopeResponse(z.null(), "A refusal")[200].content,
        "text/html": { schema: z.string() },
      },
    },
    302: { description: "sso_compatibility_mode: to /@login?token= or /@manage?sso_id=" },
  },
});

export const routeDocs: RouteDocs = {
  "get /api/auth/sso": {
    tags: ["auth"],
    summary: "Begin single sign-on (OpenID Connect): 302 to the provider",
    request: {
      query: z.object({
        method: z.enum(["sso_get_token", "get_sso_id"]).openapi({
          description: "`sso_get_token` signs in; `get_sso_id` reads the identity for the profile page to link",
        }),
      }),
    },
    responses: {
      ...envelopeResponse(z.null(), "Only refusals: SSO off, not configured, the provider unreachable"),
      302: { description: "To the provider's authorization endpoint, with state, nonce and a PKCE challenge" },
    },
  },
  ...Object.fromEntries([CALLBACK_PATH, ...CALLBACK_ALIASES].map((path) => [`get ${path}`, callbackDocs(path)])),
};
