// Passkeys (WebAuthn), on OpenList's wire (server/handles/webauthn.go): the profile page registers
// and lists them, the login page signs in with one. The behaviour is ours: docs/decisions.md D19.
import * as z from "zod/mini";
import type { Context } from "hono";
import { clientId, clientIp, userAgent } from "../../auth/client.ts";
import { accountOnly } from "../../auth/guard.ts";
import { ok } from "../../http/envelope.ts";
import type { AppEnv } from "../../http/context.ts";
import { createRoute } from "../../http/openapi.ts";
import { jsonBody, type Router } from "../../http/router.ts";
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

const UsernameQuery = z.object({
  username: z._default(wellFormed(z.string().check(z.maxLength(255))), ""),
});

const beginRegistrationRoute = createRoute({
  method: "get",
  path: "/api/authn/webauthn_begin_registration",
  ...ownPasskeysOnly,
});

const finishRegistrationRoute = createRoute({
  method: "post",
  path: "/api/authn/webauthn_finish_registration",
  ...ownPasskeysOnly,
  request: {
    query: z.object({ name: z.optional(wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(255)))) }),
    body: jsonBody(Credential),
  },
});

const beginLoginRoute = createRoute({
  method: "get",
  path: "/api/authn/webauthn_begin_login",
  request: { query: UsernameQuery },
});

const finishLoginRoute = createRoute({
  method: "post",
  path: "/api/authn/webauthn_finish_login",
  request: { query: UsernameQuery, body: jsonBody(Credential) },
});

const listRoute = createRoute({
  method: "get",
  path: "/api/authn/getcredentials",
  ...ownPasskeysOnly,
});

const deleteRoute = createRoute({
  method: "post",
  path: "/api/authn/delete_authn",
  ...ownPasskeysOnly,
  request: { body: jsonBody(z.object({ id: z.string().check(z.minLength(1), z.maxLength(1400)) })) },
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
