// The messages sign-in answers, each defined once. The lockout's and a disabled account's are the
// core's (auth/messages.ts: the guard answers them too), the second factor's two-factor/messages.ts's.

/** One message for an unknown user and a wrong password, so neither reveals which it was (WebDAV's too). */
export const SIGN_IN_FAILED = "username or password is incorrect";

/** The max_devices setting is reached and device_evict_policy is `deny`. */
export const TOO_MANY_DEVICES = "too many active devices";
