// The documentation of the users routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";
import type { UserReply } from "./routes.ts";

const UserView: z.ZodMiniType<UserReply> = z.object({
  id: z.number().check(z.int()),
  username: z.string(),
  password: z.literal("").openapi({ description: "always empty" }),
  base_path: z.string(),
  role: z.array(z.number().check(z.int())),
  disabled: z.boolean(),
  permission: z.number().check(z.int()),
  otp: z.boolean().openapi({ description: "two-factor authentication is on" }),
  sso_id: z.string(),
  allow_ldap: z.boolean().openapi({ description: "a directory entry of the same name may sign in as this user" }),
});

export const routeDocs: RouteDocs = {
  "get /api/admin/user/list": {
    tags: ["users"],
    summary: "Users, by id",
    responses: envelopeResponse(
      z.object({ content: z.array(UserView), total: z.number().check(z.int()) }),
      "One page of users and the count of all",
    ),
  },
  "get /api/admin/user/get": {
    tags: ["users"],
    summary: "One user",
    responses: envelopeResponse(UserView, "The user"),
  },
  "post /api/admin/user/create": {
    tags: ["users"],
    summary: "Create a user; the admin and guest roles cannot be given",
    responses: envelopeResponse(UserView, "The new user"),
  },
  "post /api/admin/user/update": {
    tags: ["users"],
    summary: "Change a user; absent fields stay as they are",
    description:
      "The admin keeps its role, stays enabled and is forced to base path / and permission 65535. The guest keeps its role. " +
      "A new password or disabling ends the user's tokens at once.",
    responses: envelopeResponse(UserView, "The user as saved"),
  },
  "post /api/admin/user/delete": {
    tags: ["users"],
    summary: "Delete a user with their device sessions, SSH keys and 2FA enrolment; not the admin or the guest",
    responses: envelopeResponse(z.null(), "Deleted"),
  },
  "post /api/admin/user/cancel_2fa": {
    tags: ["users"],
    summary: "Turn a user's two-factor authentication off",
    responses: envelopeResponse(z.null(), "Two-factor authentication is off"),
  },
  "post /api/admin/user/del_cache": {
    tags: ["users"],
    summary: "Accepted for AList clients; Gatehouse keeps no user cache, so there is nothing to drop",
    responses: envelopeResponse(z.null(), "Nothing to do"),
  },
};
