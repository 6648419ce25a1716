// Two-factor enrolment (reference §5): generate hands out a TOTP secret, verify turns two-factor
// on once a code from it checks out. Sign-in's second step is sign-in.ts; the admin turns it off
// with cancel_2fa (src/features/users/routes.ts), through store.ts.
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { accountOnly } from "../../auth/guard.ts";
import { otpSealingKeys } from "../../env.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { GUEST_2FA, INVALID_OTP, SECRET_NOT_ISSUED } from "./messages.ts";
import { open, seal } from "./secret-box.ts";
import { enableTwoFactor, OTP_ENROLMENT_TTL_SECONDS, readPendingEnrolment, savePendingEnrolment } from "./store.ts";
import { enrolmentQr, matchTotpStep, newTotpSecret, normaliseSecret } from "./totp.ts";

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
    body: jsonBody(z.object({ code: z.string().check(z.minLength(1), z.maxLength(32)), secret: z.string().check(z.minLength(1), z.maxLength(128)) })),
  },
  responses: envelopeResponse(z.null(), "Two-factor authentication is on"),
});

export function registerTwoFactorRoutes(app: Router) {
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
    if (issued === null || normaliseSecret(issued) !== normaliseSecret(secret)) throw new ApiError(400, SECRET_NOT_ISSUED);
    const step = matchTotpStep(issued, code);
    if (step === null) throw new ApiError(400, INVALID_OTP);
    await enableTwoFactor(c.var.db, user.id, await seal(keys, issued), step);
    return ok(c, null);
  });
}
