// The messages the app password routes answer, each defined once. The guest is refused with the
// SSH key routes' words, `USER_INVALID` in sshkeys/messages.ts.

/** Someone else's and a missing one answer alike. */
export const APP_PASSWORD_NOT_FOUND = "app password not found";
export const APP_PASSWORD_NAME_TAKEN = "an app password with this name already exists";
export const tooManyAppPasswords = (max: number) => `a user can have at most ${max} app passwords`;
