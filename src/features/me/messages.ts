// The messages the /api/me routes answer, each defined once. A taken name reads the same as from
// the admin API: `usernameTaken` in users/messages.ts.

/** The guest is anonymous access, not an account with a profile to change; AList's text. */
export const GUEST_PROFILE = "Guest user can not update profile";
