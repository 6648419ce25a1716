// The authentication group: sign-in (plain and hashed) and sign-out. Two-factor enrolment, under
// /api/auth/2fa/*, is its own module: src/features/two-factor.
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import type { Context } from "hono";
import { clientId, clientIp, userAgent } from "../../auth/client.ts";
import { signedIn } from "../../auth/guard.ts";
import { staticHash } from "../../auth/password.ts";
import type { AppEnv } from "../../http/context.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { signIn, signOut } from "./rules.ts";

const SignInBody = z.object({
  username: wellFormed(z.string().check(z.minLength(1), z.maxLength(255))),
  password: z.string().check(z.maxLength(1024)),
  otp_code: z.optional(z.string().check(z.maxLength(32))),
});
const SignInQuery = z.object({ client_id: z.optional(z.string().check(z.maxLength(255))) });

const signInRoute = (path: string) =>
  createRoute({
    method: "post",
    path,
    request: { query: SignInQuery, body: jsonBody(SignInBody) },
  });

const login = signInRoute("/api/auth/login");
const loginHash = signInRoute("/api/auth/login/hash");

const logout = createRoute({
  method: "get",
  path: "/api/auth/logout",
  ...signedIn,
});

/** What the request tells of the client, for the device session a sign-in opens. */
function client(c: Context<AppEnv>) {
  return { ip: clientIp(c), userAgent: userAgent(c), clientId: clientId(c) };
}

export function registerAuthRoutes(app: Router) {
  app.openapi(login, async (c) => {
    const body = c.req.valid("json");
    return ok(
      c,
      await signIn(
        c.env,
        c.var.db,
        { username: body.username, passwordHash: await staticHash(body.password), otpCode: body.otp_code },
        client(c),
      ),
    );
  });

  app.openapi(loginHash, async (c) => {
    const body = c.req.valid("json");
    return ok(
      c,
      await signIn(
        c.env,
        c.var.db,
        { username: body.username, passwordHash: body.password.toLowerCase(), otpCode: body.otp_code },
        client(c),
      ),
    );
  });

  app.openapi(logout, async (c) => {
    await signOut(c.var.db, c.var.caller.deviceKey);
    return ok(c, null);
  });
}
