// The messages the admin role routes answer, each defined once. The settings page refuses the
// guest or admin as `default_role` with the same sentence as a role update (AList v3.58.0
// server/handles/setting.go:118-119).

export const ROLE_NOT_FOUND = "role not found";

export const roleNameTaken = (name: string | undefined) => `role name ${name} is already taken`;

export const ADMIN_ROLE_FIXED = "cannot modify admin role";
export const NOT_A_DEFAULT_ROLE = "cannot set admin or guest as default role";
export const GUEST_ROLE_NAME_FIXED = "cannot rename guest role";
export const ROLE_NOT_DELETABLE = "admin or guest role can not be deleted";

/** A delete refused because users hold the role: the first few by name, and how many more. */
export function roleStillHeld(roleName: string, holders: readonly string[], holderCount: number): string {
  const more = holderCount > holders.length ? ` and ${holderCount - holders.length} more` : "";
  return `role ${roleName} is still assigned to ${holders.join(", ")}${more}; remove it from them first`;
}
