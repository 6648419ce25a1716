// Two-factor enrolment (AList v3.58.0 server/handles/auth.go:216, :250; docs/decisions.md D4.5):
// generate hands out a TOTP secret, verify turns two-factor on once a code from it checks out (that
// decision is rules.ts). Sign-in's second step is sign-in.ts; the admin turns it off with
// cancel_2fa (src/features/users/routes.ts), through store.ts.
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { accountOnly } from "../../auth/guard.ts";
import { otpSealingKeys } from "../../env.ts";
import { ok } from "../../http/envelope.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { GUEST_2FA } from "./messages.ts";
import { verifiedEnrolment } from "./rules.ts";
import { seal } from "./secret-box.ts";
import { enableTwoFactor, readPendingEnrolment, savePendingEnrolment } from "./store.ts";
import { enrolmentQr, newTotpSecret } from "./totp.ts";

const generate2fa = createRoute({
  method: "post",
  path: "/api/auth/2fa/generate",
  ...accountOnly(403, GUEST_2FA),
});

const verify2fa = createRoute({
  method: "post",
  path: "/api/auth/2fa/verify",
  ...accountOnly(403, GUEST_2FA),
  request: {
    body: jsonBody(
      z.object({
        code: z.string().check(z.minLength(1), z.maxLength(32)),
        secret: z.string().check(z.minLength(1), z.maxLength(128)),
      }),
    ),
  },
});

export function registerTwoFactorRoutes(app: Router) {
  app.openapi(generate2fa, async (c) => {
    const { user } = c.var.caller;
    const secret = newTotpSecret();
    const qr = enrolmentQr(secret, user.username); // before saving: a failure leaves no enrolment behind
    await savePendingEnrolment(
      c.var.db,
      user.id,
      await seal(otpSealingKeys(c.env), secret),
      Math.floor(Date.now() / 1000),
    );
    return ok(c, { qr, secret });
  });

  app.openapi(verify2fa, async (c) => {
    const { user } = c.var.caller;
    const { code, secret } = c.req.valid("json");
    const pending = await readPendingEnrolment(c.var.db, user.id);
    const enrolment = await verifiedEnrolment(otpSealingKeys(c.env), pending, Date.now(), { secret, code });
    await enableTwoFactor(c.var.db, user.id, enrolment.sealedSecret, enrolment.step);
    return ok(c, null);
  });
}
