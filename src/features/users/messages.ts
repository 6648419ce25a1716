// The messages the admin user routes answer, each defined once. /api/me/update shares the refusal
// of a taken name, so a rename reads the same from either place.

export const USER_NOT_FOUND = "user not found";

/** The refusal of a name another account has, from the admin API and from /api/me/update alike. */
export const usernameTaken = (username: string | undefined) => `username ${username} is already taken`;

export const ROLE_NOT_ASSIGNABLE = "admin or guest role can not be assigned";
export const ACCOUNT_NOT_DELETABLE = "admin or guest user can not be deleted";
export const ADMIN_ROLE_FIXED = "cannot change role of admin user";
export const ADMIN_NOT_DISABLEABLE = "admin user can not be disabled";
export const GUEST_ROLE_FIXED = "cannot change role of guest user";

/** Role ids a create or update named that do not exist, as one sentence. */
export const rolesNotFound = (missing: readonly number[]) =>
  `${missing.length === 1 ? "role" : "roles"} ${missing.join(", ")} not found`;
