// Administrative user management, as the AList web UI calls it (/api/admin/user/*).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly, planned, reading } from "../../auth/guard.ts";
import { ALL_PERMISSIONS } from "../../auth/roles.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { fromQuery, idParam, pageWindow, pagingParams } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { changeUser, createUser, foundUser, removeUser, turnOffTwoFactor } from "./rules.ts";
import { userById, userPage, type UserRow } from "./store.ts";

/**
 * A permission bit field (AList v3.58.0 internal/model/user.go:36-51). 0xFFFF is what AList gives
 * the admin (internal/bootstrap/data/user.go:59); bits 16 and up do not exist in v3.58.
 */
const PERMISSION_RANGE = `must be an integer from 0 to ${ALL_PERMISSIONS}`;
export const Permission = z
  .number()
  .check(z.int(), z.gte(0, PERMISSION_RANGE), z.lte(ALL_PERMISSIONS, PERMISSION_RANGE))
  .openapi({ description: "permission bits (AList v3.58: 0 to 65535)", example: 264 });

const RoleIds = z
  .array(z.number().check(z.int(), z.positive()))
  .check(z.maxLength(64))
  .openapi({ description: "role ids, in order", example: [3] });

const UserFields = {
  username: wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(255))),
  base_path: wellFormed(z.string().check(z.maxLength(1024))).openapi({
    description: "cleaned like a mount path; empty means /",
  }),
  role: RoleIds,
  disabled: z.boolean(),
  permission: Permission,
  sso_id: z.string().check(z.maxLength(255)),
  allow_ldap: z.boolean(),
};

const CreateUserBody = z.object({
  username: UserFields.username,
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
  base_path: z.optional(UserFields.base_path),
  role: z
    .optional(UserFields.role)
    .openapi({ description: "absent or empty: the role of the default_role setting, unless that is guest or admin" }),
  disabled: z.optional(UserFields.disabled),
  permission: z.optional(UserFields.permission),
  sso_id: z.optional(UserFields.sso_id),
  allow_ldap: z.optional(UserFields.allow_ldap),
});

const UpdateUserBody = z.object({
  id: z.number().check(z.int(), z.positive()),
  username: z.optional(UserFields.username),
  password: z
    .optional(z.string().check(z.maxLength(1024)))
    .openapi({ description: "empty or absent: unchanged; otherwise the user's tokens die" }),
  base_path: z.optional(UserFields.base_path),
  role: z.optional(UserFields.role),
  disabled: z.optional(UserFields.disabled),
  permission: z.optional(UserFields.permission),
  sso_id: z.optional(UserFields.sso_id),
  allow_ldap: z.optional(UserFields.allow_ldap),
});

const userListPlan = fromQuery(z.object(pagingParams), (db, query) => userPage(db, pageWindow(query)));
const userGetPlan = fromQuery(z.object({ id: idParam }), (db, { id }) => userById(db, id));

const listUsers = createRoute({
  method: "get",
  path: "/api/admin/user/list",
  ...reading(adminOnly, userListPlan),
  request: { query: z.object(pagingParams) },
});

const getUser = createRoute({
  method: "get",
  path: "/api/admin/user/get",
  ...reading(adminOnly, userGetPlan),
  request: { query: z.object({ id: idParam }) },
});

const createUserRoute = createRoute({
  method: "post",
  path: "/api/admin/user/create",
  ...adminOnly,
  request: { body: jsonBody(CreateUserBody) },
});

const updateUserRoute = createRoute({
  method: "post",
  path: "/api/admin/user/update",
  ...adminOnly,
  request: { body: jsonBody(UpdateUserBody) },
});

const deleteUserRoute = createRoute({
  method: "post",
  path: "/api/admin/user/delete",
  ...adminOnly,
  request: { query: z.object({ id: idParam }) },
});

const cancelTwoFactorRoute = createRoute({
  method: "post",
  path: "/api/admin/user/cancel_2fa",
  ...adminOnly,
  request: { query: z.object({ id: idParam }) },
});

const deleteUserCache = createRoute({
  method: "post",
  path: "/api/admin/user/del_cache",
  ...adminOnly,
  request: { query: z.object({ username: z.optional(z.string()) }) },
});

/** A user as replies show it (docs.ts `UserView`): never the password hash, pwd_ts or the TOTP secret. */
export interface UserReply {
  id: number;
  username: string;
  password: "";
  base_path: string;
  role: number[];
  disabled: boolean;
  permission: number;
  otp: boolean;
  sso_id: string;
  allow_ldap: boolean;
}

/** A user as replies show it: never the password hash, pwd_ts or the TOTP secret. */
function userView(user: UserRow): UserReply {
  return {
    id: user.id,
    username: user.username,
    password: "",
    base_path: user.basePath,
    role: user.roleIds,
    disabled: user.disabled,
    permission: user.permission,
    otp: user.otpSecret !== null,
    sso_id: user.ssoId,
    allow_ldap: user.allowLdap,
  };
}

/** A create or update body's fields in the domain's names (username and password apart: required on create only). */
const userFields = (body: {
  base_path?: string | undefined;
  role?: number[] | undefined;
  disabled?: boolean | undefined;
  permission?: number | undefined;
  sso_id?: string | undefined;
  allow_ldap?: boolean | undefined;
}) => ({
  basePath: body.base_path,
  roleIds: body.role,
  disabled: body.disabled,
  permission: body.permission,
  ssoId: body.sso_id,
  allowLdap: body.allow_ldap,
});

export function registerUserRoutes(app: Router) {
  app.openapi(listUsers, async (c) => {
    const { rows, total } = await planned(c, userListPlan);
    return ok(c, { content: rows.map(userView), total });
  });

  app.openapi(getUser, async (c) => ok(c, userView(foundUser(await planned(c, userGetPlan)))));

  app.openapi(createUserRoute, async (c) => {
    const body = c.req.valid("json");
    const user = await createUser(c.var.db, { ...userFields(body), username: body.username, password: body.password });
    return ok(c, userView(user));
  });

  app.openapi(updateUserRoute, async (c) => {
    const { id, ...body } = c.req.valid("json");
    const user = await changeUser(c.var.db, id, {
      ...userFields(body),
      username: body.username,
      password: body.password,
    });
    return ok(c, userView(user));
  });

  app.openapi(deleteUserRoute, async (c) => {
    await removeUser(c.var.db, c.req.valid("query").id);
    return ok(c, null);
  });

  app.openapi(cancelTwoFactorRoute, async (c) => {
    await turnOffTwoFactor(c.var.db, c.req.valid("query").id);
    return ok(c, null);
  });

  app.openapi(deleteUserCache, (c) => ok(c, null));
}
