// LDAP sign-in: POST /api/auth/login/ldap (OpenList's route and body). The directory decides the
// password; the rest is password sign-in's (src/features/auth/rules.ts completeSignIn).
import * as z from "zod/mini";
import { clientId, clientIp, userAgent } from "../../auth/client.ts";
import { ok } from "../../http/envelope.ts";
import { createRoute } from "../../http/openapi.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { wellFormed } from "../../http/text.ts";
import { ldapSignIn } from "./rules.ts";

const LdapSignInBody = z.object({
  username: wellFormed(z.string().check(z.minLength(1), z.maxLength(255))),
  password: z.string().check(z.maxLength(1024)),
  otp_code: z.optional(z.string().check(z.maxLength(32))),
});

const loginLdap = createRoute({
  method: "post",
  path: "/api/auth/login/ldap",
  request: {
    query: z.object({ client_id: z.optional(z.string().check(z.maxLength(255))) }),
    body: jsonBody(LdapSignInBody),
  },
});

export function registerLdapRoutes(app: Router) {
  app.openapi(loginLdap, async (c) => {
    const body = c.req.valid("json");
    return ok(
      c,
      await ldapSignIn(
        c.env,
        c.var.db,
        { username: body.username, password: body.password, otpCode: body.otp_code },
        { ip: clientIp(c), userAgent: userAgent(c), clientId: clientId(c) },
      ),
    );
  });
}
