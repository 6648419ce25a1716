// The texts the core answers (the guard, tokens, the sign-in lockout), each defined once. Features
// that answer the same words (sign-in, WebDAV, the file side) import them from here, so the core
// never imports from a feature folder. AList's texts, grammar included: clients show them as they are.

export const NOT_AN_ADMIN = "You are not an admin";
export const GUEST_DISABLED = "Guest user is disabled, login please";

/** A login token whose user is gone or renamed since it was signed. */
export const TOKEN_USER_NOT_FOUND = "failed find user: record not found";
export const PASSWORD_CHANGED = "Password has been changed, login please";

/** AList's text, at sign-in (403), for a token of a user disabled since (401) and on WebDAV (403). */
export const USER_DISABLED = "Current user is disabled, replace please";

export const SESSION_INACTIVE = "session inactive";

/** A permanent token that does not match, or a login token someone else signed. */
export const TOKEN_INVALIDATED = "token is invalidated";

/** Five failures in the window (auth/lockout.ts), at sign-in and on WebDAV alike. */
export const LOCKED_OUT_MESSAGE =
  "Too many unsuccessful sign-in attempts have been made using an incorrect username or password, Try again later.";

// Access keys (docs/decisions.md D16): their own words, AList has none.
export const ACCESS_KEY_EXPIRED = "access key expired";
/** A key used where its `usage` does not allow it (`api`, `webdav`). */
export const accessKeyNotFor = (use: string) => `this access key is not for ${use === "api" ? "the API" : use}`;
/** A key on an account or admin route: it reaches the file side only. */
export const ACCESS_KEY_FILES_ONLY = "an access key reaches the file side only";
