// The authentication group: sign-in (plain and hashed), sign-out, two-factor enrolment.
import * as z from "zod";
import { createRoute } from "../../http/openapi.ts";
import { accountOnly, signedIn } from "../../auth/guard.ts";
import { staticHash } from "../../auth/password.ts";
import { open, seal } from "../../auth/secret-box.ts";
import { enrolmentQr, matchTotpStep, newTotpSecret, normaliseSecret } from "../../auth/totp.ts";
import { OTP_ENROLMENT_TTL_SECONDS } from "../../cron/cleanup.ts";
import { otpSealingKeys } from "../../env.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { INVALID_OTP, signIn } from "./login.ts";
import { deactivateSession, enableTwoFactor, readPendingEnrolment, savePendingEnrolment } from "./store.ts";

const GUEST_2FA = "Guest user can not generate 2FA code";

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

const generate2fa = createRoute({
  method: "post",
  path: "/api/auth/2fa/generate",
  tags: ["auth"],
  summary: "Start two-factor enrolment: a new TOTP secret and its QR code, valid for 10 minutes",
  ...accountOnly(403, GUEST_2FA),
  responses: envelopeResponse(z.object({ qr: z.string(), secret: z.string() }), "The secret and an SVG QR code as a data URL"),
});

const verify2fa = createRoute({
  method: "post",
  path: "/api/auth/2fa/verify",
  tags: ["auth"],
  summary: "Finish two-factor enrolment with a code from the authenticator",
  ...accountOnly(403, GUEST_2FA),
  request: {
    body: jsonBody(z.object({ code: z.string().min(1).max(32), secret: z.string().min(1).max(128) })),
  },
  responses: envelopeResponse(z.null(), "Two-factor authentication is on"),
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

  app.openapi(generate2fa, async (c) => {
    const { user } = c.var.caller;
    const secret = newTotpSecret();
    const qr = enrolmentQr(secret, user.username); // before saving: a failure leaves no enrolment behind
    await savePendingEnrolment(c.var.db, user.id, await seal(otpSealingKeys(c.env), secret), Math.floor(Date.now() / 1000));
    return ok(c, { qr, secret });
  });

  app.openapi(verify2fa, async (c) => {
    const { user } = c.var.caller;
    const { code, secret } = c.req.valid("json");
    const keys = otpSealingKeys(c.env);
    const pending = await readPendingEnrolment(c.var.db, user.id);
    const issued = pending && pending.createdAt > Math.floor(Date.now() / 1000) - OTP_ENROLMENT_TTL_SECONDS ? await open(keys, pending.secret) : null;
    // Only the secret this server issued to this user, recently, can be enrolled.
    if (issued === null || normaliseSecret(issued) !== normaliseSecret(secret)) {
      throw new ApiError(400, "this 2FA secret was not issued to you or has expired; generate a new one");
    }
    const step = matchTotpStep(issued, code);
    if (step === null) throw new ApiError(400, INVALID_OTP);
    await enableTwoFactor(c.var.db, user.id, await seal(keys, issued), step);
    return ok(c, null);
  });
}
