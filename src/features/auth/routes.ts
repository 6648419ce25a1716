// The authentication group: sign-in (plain and hashed) and sign-out. Two-factor enrolment, under
// /api/auth/2fa/*, is its own module: src/features/two-factor.
import * as z from "zod";
import { createRoute } from "../../http/openapi.ts";
import { signedIn } from "../../auth/guard.ts";
import { staticHash } from "../../auth/password.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { signIn } from "./login.ts";
import { deactivateSession } from "./store.ts";

const SignInBody = z.object({
  username: wellFormed(z.string().min(1).max(255)),
  password: z.string().max(1024),
  otp_code: z.string().max(32).optional(),
});
const SignInQuery = z.object({ client_id: z.string().max(255).optional() });
const SignInResult = z.object({ token: z.string(), device_key: z.string() });

const signInRoute = (path: string, summary: string) =>
  createRoute({
    method: "post",
    path,
    tags: ["auth"],
    summary,
    description: "A `Client-Id` header (or `client_id` query) keeps one device session across sign-ins.",
    request: { query: SignInQuery, body: jsonBody(SignInBody) },
    responses: envelopeResponse(SignInResult, "A token valid for TOKEN_EXPIRES_IN_HOURS, and the device session key"),
  });

const login = signInRoute("/api/auth/login", "Sign in with a password");
const loginHash = signInRoute("/api/auth/login/hash", "Sign in with sha256(password + '-https://github.com/alist-org/alist')");

const logout = createRoute({
  method: "get",
  path: "/api/auth/logout",
  tags: ["auth"],
  summary: "Sign out: the device session becomes inactive and its token stops working",
  ...signedIn,
  responses: envelopeResponse(z.null(), "Signed out"),
});

export function registerAuthRoutes(app: Router) {
  app.openapi(login, async (c) => {
    const body = c.req.valid("json");
    return ok(c, await signIn(c, { username: body.username, passwordHash: await staticHash(body.password), otpCode: body.otp_code }));
  });

  app.openapi(loginHash, async (c) => {
    const body = c.req.valid("json");
    return ok(c, await signIn(c, { username: body.username, passwordHash: body.password.toLowerCase(), otpCode: body.otp_code }));
  });

  app.openapi(logout, async (c) => {
    const { deviceKey } = c.var.caller;
    if (deviceKey !== null) await deactivateSession(c.var.db, deviceKey);
    return ok(c, null);
  });
}
