// The messages the access key routes answer, each defined once. The guest is refused with the SSH
// key routes' words, `USER_INVALID` in sshkeys/messages.ts; the guard's refusals of a key are in
// auth/messages.ts.

/** Someone else's and a missing one answer alike. */
export const ACCESS_KEY_NOT_FOUND = "access key not found";
export const ACCESS_KEY_NAME_TAKEN = "an access key with this name already exists";
export const tooManyAccessKeys = (max: number) => `a user can have at most ${max} access keys and app passwords`;
/** The key's folder is not one its user may read (outside the base path, the role scopes or the path limit). */
export const KEY_PATH_OUT_OF_REACH = "the key's folder is outside your reach";
export const KEY_RIGHTS_BEYOND_USER = "an access key cannot have rights its user lacks in its folder";
export const KEY_EXPIRY_PAST = "expires_at must be 0 (never) or a time to come";
