// The signed-in user: who they are, and changing their own name and password.
import * as z from "zod";
import { createRoute } from "../../http/openapi.ts";
import type { Caller } from "../../auth/caller.ts";
import { accountOnly, signedIn } from "../../auth/guard.ts";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { refuseDuplicate } from "../../http/errors.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { cleanPath } from "../../lib/path.ts";
import { usernameTaken } from "../users/messages.ts";
import { updateProfile } from "./store.ts";

const PermissionEntry = z.object({ path: z.string(), permission: z.number().int() });
const CurrentUser = z.object({
  id: z.number().int(),
  username: z.string(),
  password: z.literal("").openapi({ description: "always empty" }),
  base_path: z.string(),
  role: z.array(z.number().int()),
  role_names: z.array(z.string()),
  disabled: z.boolean(),
  permission: z.number().int(),
  permissions: z.array(PermissionEntry),
  sso_id: z.string(),
  otp: z.boolean(),
});

const me = createRoute({
  method: "get",
  path: "/api/me",
  tags: ["me"],
  summary: "The current user, with role names and permissions merged by path",
  ...signedIn,
  responses: envelopeResponse(CurrentUser, "The current user"),
});

const updateMe = createRoute({
  method: "post",
  path: "/api/me/update",
  tags: ["me"],
  summary: "Change one's own username, password or SSO id; a new password ends every other sign-in",
  ...accountOnly(403, "Guest user can not update profile"),
  request: {
    body: jsonBody(z.object({
      username: wellFormed(z.string().trim().min(1).max(255)).optional(),
      password: z.string().max(1024).optional().openapi({ description: "empty or absent: unchanged" }),
      sso_id: z.string().max(255).optional(),
    })),
  },
  responses: envelopeResponse(z.null(), "Saved"),
});

/**
 * Permission scopes of all the user's roles merged by cleaned path, first appearance first,
 * permissions OR-ed (reference §7).
 */
export function mergedPermissions(caller: Caller): { path: string; permission: number }[] {
  const merged = new Map<string, number>();
  const order = new Map(caller.user.roleIds.map((id, i) => [id, i]));
  const roles = [...caller.roles].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  for (const scope of roles.flatMap((role) => role.permissionScopes)) {
    const path = cleanPath(scope.path);
    merged.set(path, (merged.get(path) ?? 0) | scope.permission);
  }
  return [...merged].map(([path, permission]) => ({ path, permission }));
}

export function registerMeRoutes(app: Router) {
  app.openapi(me, (c) => {
    const caller = c.var.caller;
    const { user } = caller;
    const byId = new Map(caller.roles.map((role) => [role.id, role.name]));
    return ok(c, {
      id: user.id,
      username: user.username,
      password: "" as const,
      base_path: user.basePath,
      role: user.roleIds,
      role_names: user.roleIds.flatMap((id) => byId.get(id) ?? []),
      disabled: user.disabled,
      permission: user.permission,
      permissions: mergedPermissions(caller),
      sso_id: user.ssoId,
      otp: user.otpSecret !== null,
    });
  });

  app.openapi(updateMe, async (c) => {
    const caller = c.var.caller;
    const body = c.req.valid("json");
    const { user } = caller;
    const password = body.password ? { hash: await hashStaticHash(await staticHash(body.password)), now: Math.floor(Date.now() / 1000) } : undefined;
    await refuseDuplicate(
      usernameTaken(body.username),
      updateProfile(c.var.db, user.id, { username: body.username ?? user.username, ssoId: body.sso_id ?? user.ssoId, ...(password ? { password } : {}) }),
    );
    return ok(c, null);
  });
}
