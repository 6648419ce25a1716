// Passkeys (WebAuthn), on OpenList's wire (server/handles/webauthn.go): the profile page registers
// and lists them, the login page signs in with one. The behaviour is ours: docs/decisions.md D19.
import * as z from "zod/mini";
import type { Context } from "hono";
import { clientId, clientIp, userAgent } from "../../auth/client.ts";
import { accountOnly } from "../../auth/guard.ts";
import { ok } from "../../http/envelope.ts";
import type { AppEnv } from "../../http/context.ts";
import { createRoute } from "../../http/openapi.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { wellFormed } from "../../http/text.ts";
import { GUEST_PASSKEYS, REGISTERED } from "./messages.ts";
import {
  beginLogin,
  beginRegistration,
  finishLogin,
  finishRegistration,
  ownPasskeys,
  removeOwnPasskey,
} from "./rules.ts";

const ownPasskeysOnly = accountOnly(403, GUEST_PASSKEYS);

/** base64url fields of a credential; a few KiB at most (an RSA key, a long client data). */
const encoded = z.string().check(z.maxLength(16384));

/** `PublicKeyCredential.toJSON()` (WebAuthn Level 3); fields the server does not use are dropped. */
const Credential = z.object({
  id: z.string().check(z.minLength(1), z.maxLength(1400)),
  response: z.object({
    clientDataJSON: encoded,
    attestationObject: z.optional(encoded),
    authenticatorData: z.optional(encoded),
    signature: z.optional(encoded),
    userHandle: z.optional(z.nullable(encoded)),
  }),
});

/** The `session` header: what the begin route answered, verbatim. Anything else names no challenge. */
const SESSION_HEADER_NOTE = "Send the begin route's `session` back verbatim in a `session` header.";

const Begun = z.object({
  options: z.object({
    publicKey: z.record(z.string(), z.unknown()).openapi({ description: "The standard JSON of the WebAuthn options" }),
  }),
  session: z.string().openapi({
    description: "An opaque handle of the challenge kept on the server; send it back in the `session` header",
  }),
});

const UsernameQuery = z.object({
  username: z._default(wellFormed(z.string().check(z.maxLength(255))), ""),
});

const beginRegistrationRoute = createRoute({
  method: "get",
  path: "/api/authn/webauthn_begin_registration",
  tags: ["passkeys"],
  summary: "Begin adding a passkey: creation options and the handle of a challenge valid for 5 minutes",
  ...ownPasskeysOnly,
  responses: envelopeResponse(Begun, "Options for navigator.credentials.create"),
});

const finishRegistrationRoute = createRoute({
  method: "post",
  path: "/api/authn/webauthn_finish_registration",
  tags: ["passkeys"],
  summary: "Finish adding a passkey with the new credential; its challenge is used up",
  description: SESSION_HEADER_NOTE,
  ...ownPasskeysOnly,
  request: {
    query: z.object({ name: z.optional(wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(255)))) }),
    body: jsonBody(Credential),
  },
  responses: envelopeResponse(z.string().openapi({ example: REGISTERED }), "Registered"),
});

const beginLoginRoute = createRoute({
  method: "get",
  path: "/api/authn/webauthn_begin_login",
  tags: ["passkeys"],
  summary: "Begin a passkey sign-in, for a user name or (empty) any discoverable passkey",
  request: { query: UsernameQuery },
  responses: envelopeResponse(Begun, "Options for navigator.credentials.get"),
});

const finishLoginRoute = createRoute({
  method: "post",
  path: "/api/authn/webauthn_finish_login",
  tags: ["passkeys"],
  summary: "Sign in with a passkey's assertion: a token and device session as a password sign-in gives",
  description: `${SESSION_HEADER_NOTE} \`username\` must be the one the sign-in was begun with. A \`Client-Id\` header keeps one device session across sign-ins.`,
  request: { query: UsernameQuery, body: jsonBody(Credential) },
  responses: envelopeResponse(z.object({ token: z.string(), device_key: z.string() }), "Signed in"),
});

const Passkey = z.object({
  id: z.string().openapi({ description: "The credential id, base64url" }),
  fingerprint: z.string().openapi({ description: "The authenticator model's AAGUID in hex (zeros when private)" }),
  name: z.string(),
  created_at: z.string().openapi({ description: "RFC 3339" }),
  last_used_at: z.nullable(z.string()).openapi({ description: "RFC 3339; null until the first sign-in with it" }),
});

const listRoute = createRoute({
  method: "get",
  path: "/api/authn/getcredentials",
  tags: ["passkeys"],
  summary: "The caller's passkeys",
  ...ownPasskeysOnly,
  responses: envelopeResponse(z.array(Passkey), "The caller's passkeys, oldest first"),
});

const deleteRoute = createRoute({
  method: "post",
  path: "/api/authn/delete_authn",
  tags: ["passkeys"],
  summary: "Delete one of the caller's passkeys",
  ...ownPasskeysOnly,
  request: { body: jsonBody(z.object({ id: z.string().check(z.minLength(1), z.maxLength(1400)) })) },
  responses: envelopeResponse(z.null(), "Deleted"),
});

function client(c: Context<AppEnv>) {
  return { ip: clientIp(c), userAgent: userAgent(c), clientId: clientId(c) };
}

export function registerPasskeyRoutes(app: Router) {
  app.openapi(beginRegistrationRoute, async (c) => {
    const { user } = c.var.caller;
    return ok(c, await beginRegistration(c.var.db, user, c.req.url));
  });

  app.openapi(finishRegistrationRoute, async (c) => {
    await finishRegistration(c.var.db, c.var.caller.user.id, {
      session: c.req.header("session"),
      credential: c.req.valid("json"),
      name: c.req.valid("query").name,
      requestUrl: c.req.url,
    });
    return ok(c, REGISTERED);
  });

  app.openapi(beginLoginRoute, async (c) =>
    ok(c, await beginLogin(c.var.db, c.req.valid("query").username, c.req.url)),
  );

  app.openapi(finishLoginRoute, async (c) =>
    ok(
      c,
      await finishLogin(
        c.env,
        c.var.db,
        {
          session: c.req.header("session"),
          username: c.req.valid("query").username,
          credential: c.req.valid("json"),
          requestUrl: c.req.url,
        },
        client(c),
      ),
    ),
  );

  app.openapi(listRoute, async (c) => ok(c, await ownPasskeys(c.var.db, c.var.caller.user.id)));

  app.openapi(deleteRoute, async (c) => {
    await removeOwnPasskey(c.var.db, c.var.caller.user.id, c.req.valid("json").id);
    return ok(c, null);
  });
}
