// The documentation of the passkeys routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";
import { REGISTERED } from "./messages.ts";

const Begun = z.object({
  options: z.object({
    publicKey: z.record(z.string(), z.unknown()).openapi({ description: "The standard JSON of the WebAuthn options" }),
  }),
  session: z.string().openapi({
    description: "An opaque handle of the challenge kept on the server; send it back in the `session` header",
  }),
});
/** The `session` header: what the begin route answered, verbatim. Anything else names no challenge. */
const SESSION_HEADER_NOTE = "Send the begin route's `session` back verbatim in a `session` header.";
const Passkey = z.object({
  id: z.string().openapi({ description: "The credential id, base64url" }),
  fingerprint: z.string().openapi({ description: "The authenticator model's AAGUID in hex (zeros when private)" }),
  name: z.string(),
  created_at: z.string().openapi({ description: "RFC 3339" }),
  last_used_at: z.nullable(z.string()).openapi({ description: "RFC 3339; null until the first sign-in with it" }),
});

export const routeDocs: RouteDocs = {
  "get /api/authn/webauthn_begin_registration": {
    tags: ["passkeys"],
    summary: "Begin adding a passkey: creation options and the handle of a challenge valid for 5 minutes",
    responses: envelopeResponse(Begun, "Options for navigator.credentials.create"),
  },
  "post /api/authn/webauthn_finish_registration": {
    tags: ["passkeys"],
    summary: "Finish adding a passkey with the new credential; its challenge is used up",
    description: SESSION_HEADER_NOTE,
    responses: envelopeResponse(z.string().openapi({ example: REGISTERED }), "Registered"),
  },
  "get /api/authn/webauthn_begin_login": {
    tags: ["passkeys"],
    summary: "Begin a passkey sign-in, for a user name or (empty) any discoverable passkey",
    responses: envelopeResponse(Begun, "Options for navigator.credentials.get"),
  },
  "post /api/authn/webauthn_finish_login": {
    tags: ["passkeys"],
    summary: "Sign in with a passkey's assertion: a token and device session as a password sign-in gives",
    description: `${SESSION_HEADER_NOTE} \`username\` must be the one the sign-in was begun with. A \`Client-Id\` header keeps one device session across sign-ins.`,
    responses: envelopeResponse(z.object({ token: z.string(), device_key: z.string() }), "Signed in"),
  },
  "get /api/authn/getcredentials": {
    tags: ["passkeys"],
    summary: "The caller's passkeys",
    responses: envelopeResponse(z.array(Passkey), "The caller's passkeys, oldest first"),
  },
  "post /api/authn/delete_authn": {
    tags: ["passkeys"],
    summary: "Delete one of the caller's passkeys",
    responses: envelopeResponse(z.null(), "Deleted"),
  },
};
