// The messages LDAP sign-in answers, each defined once. A wrong password or an unknown entry answers
// password sign-in's SIGN_IN_FAILED (src/features/auth/messages.ts), so neither reveals which.

/** The ldap_login_enabled setting is off (OpenList's wording). */
export const LDAP_DISABLED = "ldap is not enabled";

/** A local account of the same name exists and has allow_ldap off (OpenList's wording). */
export const LDAP_NOT_ALLOWED = "login via ldap is not allowed";

/** The directory could not be asked: unreachable, misconfigured, or answering nonsense. */
export const ldapUnavailable = (detail: string) => `ldap sign-in is unavailable: ${detail}`;

/**
 * The directory accepted the password for an entry whose name differs from the one typed only in
 * case: said only to someone who knows the password.
 */
export const spelledOtherwise = (name: string) => `the directory spells this user name "${name}": sign in with it`;
