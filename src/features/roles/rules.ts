// What the admin API may do to a role. The admin and guest roles are how the guard recognises those
// accounts (AList v3.58.0 internal/op/role.go:161-175, :219): the admin role is fixed, the guest
// role keeps its name and never becomes the role of new users, and neither can be deleted. Each
// decision takes plain inputs and returns the role or throws the refusal (ApiError) the wire
// answers.
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "../../auth/roles.ts";
import type { Database } from "../../db/client.ts";
import type { PermissionScope } from "../../db/schema.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { cleanPath } from "../../lib/path.ts";
import {
  ADMIN_ROLE_FIXED,
  GUEST_ROLE_NAME_FIXED,
  NOT_A_DEFAULT_ROLE,
  ROLE_NOT_DELETABLE,
  ROLE_NOT_FOUND,
  roleNameTaken,
  roleStillHeld,
} from "./messages.ts";
import { deleteRole, insertRole, updateRole, type RoleRow } from "./store.ts";

/** The role a read found; a missing one is the 404 every role route answers. */
export function foundRole(role: RoleRow | undefined): RoleRow {
  if (!role) throw new ApiError(404, ROLE_NOT_FOUND);
  return role;
}

/** Scopes with their paths cleaned like mount paths, so they compare with the paths users ask for; null is none. */
function cleanScopes(scopes: readonly PermissionScope[] | null): PermissionScope[] {
  return (scopes ?? []).map((scope) => ({ path: cleanPath(scope.path), permission: scope.permission }));
}

/** A role as the admin describes it; absent fields take their defaults. */
export interface NewRole {
  name: string;
  description?: string | undefined;
  /** True: the role of new users (the `default_role` setting follows). */
  isDefault?: boolean | undefined;
  permissionScopes?: readonly PermissionScope[] | null | undefined;
}

export async function createRole(db: Database, role: NewRole): Promise<RoleRow> {
  return refuseDuplicate(
    roleNameTaken(role.name),
    insertRole(db, {
      name: role.name,
      description: role.description ?? "",
      isDefault: role.isDefault ?? false,
      permissionScopes: cleanScopes(role.permissionScopes ?? null),
    }),
  );
}

/** An edit of a role; absent fields stay as they are. */
export interface RoleEdit {
  name?: string | undefined;
  description?: string | undefined;
  isDefault?: boolean | undefined;
  permissionScopes?: readonly PermissionScope[] | null | undefined;
}

/** Applies `edit` to role `id`; returns the role as saved. */
export async function changeRole(db: Database, id: number, edit: RoleEdit): Promise<RoleRow> {
  // AList forces the admin role to every permission on /; there is nothing to change.
  if (id === ADMIN_ROLE_ID) throw new ApiError(400, ADMIN_ROLE_FIXED);
  // The settings page refuses the same (AList v3.58.0 server/handles/setting.go:118): new users
  // never get the guest role.
  if (id === GUEST_ROLE_ID && edit.isDefault) throw new ApiError(400, NOT_A_DEFAULT_ROLE);
  const { written, role } = await refuseDuplicate(
    roleNameTaken(edit.name),
    updateRole(db, id, {
      name: edit.name,
      description: edit.description,
      isDefault: edit.isDefault,
      permissionScopes: edit.permissionScopes === undefined ? undefined : cleanScopes(edit.permissionScopes),
    }),
  );
  const saved = foundRole(role);
  // The only refusal the write makes itself: renaming the guest role.
  if (!written) throw new ApiError(400, GUEST_ROLE_NAME_FIXED);
  return saved;
}

/** Deletes a role no user holds; not the admin or guest role. */
export async function removeRole(db: Database, id: number): Promise<void> {
  if (id === ADMIN_ROLE_ID || id === GUEST_ROLE_ID) throw new ApiError(400, ROLE_NOT_DELETABLE);
  const { role, deleted, holders, holderCount } = await deleteRole(db, id);
  const found = foundRole(role);
  if (!deleted) throw new ApiError(400, roleStillHeld(found.name, holders, holderCount));
}
