// The signed-in user: who they are, and changing their own name and password.
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { accountOnly, signedIn } from "../../auth/guard.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { GUEST_PROFILE } from "./messages.ts";
import { ownSsoId } from "../sso/link.ts";
import { changeOwnProfile, mergedPermissions, roleNames } from "./rules.ts";
import { SHARE, SHARE_CUSTOM_ID, sharingBits } from "../shares/rules.ts";

const me = createRoute({
  method: "get",
  path: "/api/me",
  ...signedIn,
});

const updateMe = createRoute({
  method: "post",
  path: "/api/me/update",
  ...accountOnly(403, GUEST_PROFILE),
  request: {
    body: jsonBody(
      z.object({
        username: z.optional(wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(255)))),
        password: z
          .optional(z.string().check(z.maxLength(1024)))
          .openapi({ description: "empty or absent: unchanged" }),
        sso_id: z
          .optional(z.string().check(z.maxLength(2048)))
          .openapi({ description: "empty: none; else the proof single sign-on's get_sso_id handed over" }),
      }),
    ),
  },
});

export function registerMeRoutes(app: Router) {
  app.openapi(me, (c) => {
    const { user, roles } = c.var.caller;
    return ok(c, {
      id: user.id,
      username: user.username,
      password: "" as const,
      base_path: user.basePath,
      role: user.roleIds,
      role_names: roleNames(user.roleIds, roles),
      disabled: user.disabled,
      permission: (user.permission & ~(SHARE | SHARE_CUSTOM_ID)) | sharingBits(roles),
      permissions: mergedPermissions(user.roleIds, roles),
      sso_id: user.ssoId,
      otp: user.otpSecret !== null,
    });
  });

  app.openapi(updateMe, async (c) => {
    const body = c.req.valid("json");
    await changeOwnProfile(c.var.db, c.var.caller.user, {
      username: body.username,
      password: body.password,
      ssoId: await ownSsoId(c.env, body.sso_id, c.var.caller.user.ssoId),
    });
    return ok(c, null);
  });
}
