// The built-in roles and the permission bits, as the domain knows them (AList v3.58.0
// internal/model/user.go:36-51 for the bits, internal/bootstrap/data/role.go:14 for the roles).
// The guard, the account rules and the seed all start from these; the seed only writes them.

/** The guest account's role: what anonymous callers may do. */
export const GUEST_ROLE_ID = 1;
/** The admin account's role: everything, everywhere. */
export const ADMIN_ROLE_ID = 2;
/** Every permission bit; AList gives the admin exactly this (AList v3.58.0 internal/bootstrap/data/role.go:42). */
export const ALL_PERMISSIONS = 0xffff;

/**
 * A user's roles as OpenList 4 names them, one number: 2 the admin, 1 the guest, 0 anyone else (a
 * user of custom roles is OpenList's "general" user; OpenList internal/model/user.go:17-21). What the
 * served web UI reads (docs/decisions.md D17) and what share replies carry (D14).
 */
export function openListRole(roleIds: readonly number[]): 0 | 1 | 2 {
  if (roleIds.includes(ADMIN_ROLE_ID)) return 2;
  return roleIds.includes(GUEST_ROLE_ID) ? 1 : 0;
}
