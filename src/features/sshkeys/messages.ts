// The messages the SSH key routes answer, each defined once (AList's texts where it has them).
// App passwords refuse the guest with the same words: `USER_INVALID` here.

/** AList's text: the guest has no keys (401), and an admin asked for the keys of a missing user (404). */
export const USER_INVALID = "user invalid";

/** Someone else's key and a missing one answer alike. */
export const KEY_NOT_FOUND = "failed to get public key";
export const KEY_TITLE_TAKEN = "key with the same title already exists";

/** A key parse.ts refuses; `reason` says why. */
export const keyInvalid = (reason: string) => `provided key invalid: ${reason}`;
export const tooManyKeys = (max: number) => `a user can have at most ${max} keys`;
