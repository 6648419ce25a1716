// The built-in roles and the permission bits, as the domain knows them (AList v3.58.0
// internal/model/user.go:36-51 for the bits, internal/bootstrap/data/role.go:14 for the roles).
// The guard, the account rules and the seed all start from these; the seed only writes them.

/** The guest account's role: what anonymous callers may do. */
export const GUEST_ROLE_ID = 1;
/** The admin account's role: everything, everywhere. */
export const ADMIN_ROLE_ID = 2;
/** Every permission bit; AList gives the admin exactly this (AList v3.58.0 internal/bootstrap/data/role.go:42). */
export const ALL_PERMISSIONS = 0xffff;
