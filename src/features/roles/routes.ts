// Administrative role management, as the AList web UI calls it (/api/admin/role/*).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly, planned, reading } from "../../auth/guard.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { fromQuery, idParam, pageWindow, pagingParams } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { Permission } from "../users/routes.ts";
import { changeRole, createRole, foundRole, removeRole } from "./rules.ts";
import { roleById, rolePage, type RoleRow } from "./store.ts";

export const Scope = z.object({
  path: wellFormed(z.string().check(z.maxLength(1024))).openapi({
    description: "cleaned like a mount path",
    example: "/media",
  }),
  permission: Permission,
});

const RoleFields = {
  name: wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(255))),
  description: z.string().check(z.maxLength(1024)),
  default: z.boolean(),
  permission_scopes: z
    .nullable(z.array(Scope).check(z.maxLength(256)))
    .openapi({ description: "null is an empty list" }),
};

const CreateRoleBody = z.object({
  name: RoleFields.name,
  description: z.optional(RoleFields.description),
  default: z.optional(RoleFields.default),
  permission_scopes: z.optional(RoleFields.permission_scopes),
});

const UpdateRoleBody = z.object({
  id: z.number().check(z.int(), z.positive()),
  name: z.optional(RoleFields.name),
  description: z.optional(RoleFields.description),
  default: z.optional(RoleFields.default),
  permission_scopes: z.optional(RoleFields.permission_scopes),
});

const roleListPlan = fromQuery(z.object(pagingParams), (db, query) => rolePage(db, pageWindow(query)));
const roleGetPlan = fromQuery(z.object({ id: idParam }), (db, { id }) => roleById(db, id));

const listRoles = createRoute({
  method: "get",
  path: "/api/admin/role/list",
  ...reading(adminOnly, roleListPlan),
  request: { query: z.object(pagingParams) },
});

const getRole = createRoute({
  method: "get",
  path: "/api/admin/role/get",
  ...reading(adminOnly, roleGetPlan),
  request: { query: z.object({ id: idParam }) },
});

const createRoleRoute = createRoute({
  method: "post",
  path: "/api/admin/role/create",
  ...adminOnly,
  request: { body: jsonBody(CreateRoleBody) },
});

const updateRoleRoute = createRoute({
  method: "post",
  path: "/api/admin/role/update",
  ...adminOnly,
  request: { body: jsonBody(UpdateRoleBody) },
});

const deleteRoleRoute = createRoute({
  method: "post",
  path: "/api/admin/role/delete",
  ...adminOnly,
  request: { query: z.object({ id: idParam }) },
});

/** A role as replies show it (docs.ts `RoleView`). */
export interface RoleReply {
  id: number;
  name: string;
  description: string;
  default: boolean;
  permission_scopes: z.output<typeof Scope>[];
}

function roleView(role: RoleRow): RoleReply {
  return {
    id: role.id,
    name: role.name,
    description: role.description,
    default: role.isDefault,
    permission_scopes: role.permissionScopes,
  };
}

export function registerRoleRoutes(app: Router) {
  app.openapi(listRoles, async (c) => {
    const { rows, total } = await planned(c, roleListPlan);
    return ok(c, { content: rows.map(roleView), total });
  });

  app.openapi(getRole, async (c) => ok(c, roleView(foundRole(await planned(c, roleGetPlan)))));

  app.openapi(createRoleRoute, async (c) => {
    const body = c.req.valid("json");
    const role = await createRole(c.var.db, {
      name: body.name,
      description: body.description,
      isDefault: body.default,
      permissionScopes: body.permission_scopes,
    });
    return ok(c, roleView(role));
  });

  app.openapi(updateRoleRoute, async (c) => {
    const { id, ...body } = c.req.valid("json");
    const role = await changeRole(c.var.db, id, {
      name: body.name,
      description: body.description,
      isDefault: body.default,
      permissionScopes: body.permission_scopes,
    });
    return ok(c, roleView(role));
  });

  app.openapi(deleteRoleRoute, async (c) => {
    await removeRole(c.var.db, c.req.valid("query").id);
    return ok(c, null);
  });
}
