// Administrative role management, as the AList web UI calls it (/api/admin/role/*).
import * as z from "zod";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly, planned, reading } from "../../auth/guard.ts";
import type { PermissionScope } from "../../db/schema.ts";
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "../../auth/roles.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { fromQuery, idParam, pageWindow, pagingParams } from "../../http/params.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { cleanPath } from "../../lib/path.ts";
import { Permission } from "../users/routes.ts";
import { deleteRole, insertRole, roleById, rolePage, updateRole, type RoleRow } from "./store.ts";

const ROLE_NOT_FOUND = "role not found";

const Scope = z.object({
  path: wellFormed(z.string().max(1024)).openapi({ description: "cleaned like a mount path", example: "/media" }),
  permission: Permission,
});

const RoleView = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  default: z.boolean().openapi({ description: "new users without roles get this one (setting default_role)" }),
  permission_scopes: z.array(Scope),
});

const RoleFields = {
  name: wellFormed(z.string().trim().min(1).max(255)),
  description: z.string().max(1024),
  default: z.boolean(),
  permission_scopes: z.array(Scope).max(256).nullable().openapi({ description: "null is an empty list" }),
};

const CreateRoleBody = z.object({
  name: RoleFields.name,
  description: RoleFields.description.optional(),
  default: RoleFields.default.optional(),
  permission_scopes: RoleFields.permission_scopes.optional(),
});

const UpdateRoleBody = z.object({
  id: z.number().int().positive(),
  name: RoleFields.name.optional(),
  description: RoleFields.description.optional(),
  default: RoleFields.default.optional(),
  permission_scopes: RoleFields.permission_scopes.optional(),
});

const roleListPlan = fromQuery(z.object(pagingParams), (db, query) => rolePage(db, pageWindow(query)));
const roleGetPlan = fromQuery(z.object({ id: idParam }), (db, { id }) => roleById(db, id));

const listRoles = createRoute({
  method: "get",
  path: "/api/admin/role/list",
  tags: ["roles"],
  summary: "Roles, by id",
  ...reading(adminOnly, roleListPlan),
  request: { query: z.object(pagingParams) },
  responses: envelopeResponse(z.object({ content: z.array(RoleView), total: z.number().int() }), "One page of roles and the count of all"),
});

const getRole = createRoute({
  method: "get",
  path: "/api/admin/role/get",
  tags: ["roles"],
  summary: "One role",
  ...reading(adminOnly, roleGetPlan),
  request: { query: z.object({ id: idParam }) },
  responses: envelopeResponse(RoleView, "The role"),
});

const createRole = createRoute({
  method: "post",
  path: "/api/admin/role/create",
  tags: ["roles"],
  summary: "Create a role; `default: true` makes it the role of new users",
  ...adminOnly,
  request: { body: jsonBody(CreateRoleBody) },
  responses: envelopeResponse(RoleView, "The new role"),
});

const updateRoleRoute = createRoute({
  method: "post",
  path: "/api/admin/role/update",
  tags: ["roles"],
  summary: "Change a role; absent fields stay as they are. Not the admin role; the guest role keeps its name",
  ...adminOnly,
  request: { body: jsonBody(UpdateRoleBody) },
  responses: envelopeResponse(RoleView, "The role as saved"),
});

const deleteRoleRoute = createRoute({
  method: "post",
  path: "/api/admin/role/delete",
  tags: ["roles"],
  summary: "Delete a role no user holds; not the admin or guest role",
  ...adminOnly,
  request: { query: z.object({ id: idParam }) },
  responses: envelopeResponse(z.null(), "Deleted"),
});

function roleView(role: RoleRow): z.infer<typeof RoleView> {
  return { id: role.id, name: role.name, description: role.description, default: role.isDefault, permission_scopes: role.permissionScopes };
}

function cleanScopes(scopes: readonly PermissionScope[] | null): PermissionScope[] {
  return (scopes ?? []).map((scope) => ({ path: cleanPath(scope.path), permission: scope.permission }));
}

const roleNameTaken = (name: string | undefined) => `role name ${name} is already taken`;

function stillHeldBy(role: RoleRow, holders: string[], holderCount: number): string {
  const more = holderCount > holders.length ? ` and ${holderCount - holders.length} more` : "";
  return `role ${role.name} is still assigned to ${holders.join(", ")}${more}; remove it from them first`;
}

export function registerRoleRoutes(app: Router) {
  app.openapi(listRoles, async (c) => {
    const { rows, total } = await planned(c, roleListPlan);
    return ok(c, { content: rows.map(roleView), total });
  });

  app.openapi(getRole, async (c) => {
    const role = await planned(c, roleGetPlan);
    if (!role) throw new ApiError(404, ROLE_NOT_FOUND);
    return ok(c, roleView(role));
  });

  app.openapi(createRole, async (c) => {
    const body = c.req.valid("json");
    const role = await refuseDuplicate(
      roleNameTaken(body.name),
      insertRole(c.var.db, {
        name: body.name,
        description: body.description ?? "",
        isDefault: body.default ?? false,
        permissionScopes: cleanScopes(body.permission_scopes ?? null),
      }),
    );
    return ok(c, roleView(role));
  });

  app.openapi(updateRoleRoute, async (c) => {
    const body = c.req.valid("json");
    // AList forces the admin role to every permission on /; there is nothing to change.
    if (body.id === ADMIN_ROLE_ID) throw new ApiError(400, "cannot modify admin role");
    // The settings page refuses the same (reference §13.4): new users never get the guest role.
    if (body.id === GUEST_ROLE_ID && body.default) throw new ApiError(400, "cannot set admin or guest as default role");
    const { written, role } = await refuseDuplicate(
      roleNameTaken(body.name),
      updateRole(c.var.db, body.id, {
        name: body.name,
        description: body.description,
        isDefault: body.default,
        permissionScopes: body.permission_scopes === undefined ? undefined : cleanScopes(body.permission_scopes),
      }),
    );
    if (!role) throw new ApiError(404, ROLE_NOT_FOUND);
    // The only refusal the write makes itself: renaming the guest role.
    if (!written) throw new ApiError(400, "cannot rename guest role");
    return ok(c, roleView(role));
  });

  app.openapi(deleteRoleRoute, async (c) => {
    const id = c.req.valid("query").id;
    if (id === ADMIN_ROLE_ID || id === GUEST_ROLE_ID) throw new ApiError(400, "admin or guest role can not be deleted");
    const { role, deleted, holders, holderCount } = await deleteRole(c.var.db, id);
    if (!role) throw new ApiError(404, ROLE_NOT_FOUND);
    if (!deleted) throw new ApiError(400, stillHeldBy(role, holders, holderCount));
    return ok(c, null);
  });
}
