// The messages sign-in answers, each defined once. The lockout's is auth/lockout.ts's, the second
// factor's two-factor/messages.ts's; a disabled account reads the same at sign-in and at the guard.

/** One message for an unknown user and a wrong password, so neither reveals which it was. */
export const SIGN_IN_FAILED = "username or password is incorrect";

/** AList's text, at sign-in (403) and for a token of a user disabled since (401, auth/guard.ts). */
export const USER_DISABLED = "Current user is disabled, replace please";

/** The max_devices setting is reached and device_evict_policy is `deny`. */
export const TOO_MANY_DEVICES = "too many active devices";
