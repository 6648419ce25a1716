// The built-in roles and the permission bits, as the domain knows them (reference §1.2, §2.2-2.4).
// The guard, the account rules and the seed all start from these; the seed only writes them.

/** The guest account's role: what anonymous callers may do. */
export const GUEST_ROLE_ID = 1;
/** The admin account's role: everything, everywhere. */
export const ADMIN_ROLE_ID = 2;
/** Every permission bit of reference §1.2; AList forces the admin to exactly this. */
export const ALL_PERMISSIONS = 0xffff;
