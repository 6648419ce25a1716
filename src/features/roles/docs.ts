// The documentation of the roles routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";
import { type RoleReply, Scope } from "./routes.ts";

const RoleView: z.ZodMiniType<RoleReply> = z.object({
  id: z.number().check(z.int()),
  name: z.string(),
  description: z.string(),
  default: z.boolean().openapi({ description: "new users without roles get this one (setting default_role)" }),
  permission_scopes: z.array(Scope),
});

export const routeDocs: RouteDocs = {
  "get /api/admin/role/list": {
    tags: ["roles"],
    summary: "Roles, by id",
    responses: envelopeResponse(
      z.object({ content: z.array(RoleView), total: z.number().check(z.int()) }),
      "One page of roles and the count of all",
    ),
  },
  "get /api/admin/role/get": {
    tags: ["roles"],
    summary: "One role",
    responses: envelopeResponse(RoleView, "The role"),
  },
  "post /api/admin/role/create": {
    tags: ["roles"],
    summary: "Create a role; `default: true` makes it the role of new users",
    responses: envelopeResponse(RoleView, "The new role"),
  },
  "post /api/admin/role/update": {
    tags: ["roles"],
    summary: "Change a role; absent fields stay as they are. Not the admin role; the guest role keeps its name",
    responses: envelopeResponse(RoleView, "The role as saved"),
  },
  "post /api/admin/role/delete": {
    tags: ["roles"],
    summary: "Delete a role no user holds; not the admin or guest role",
    responses: envelopeResponse(z.null(), "Deleted"),
  },
};
