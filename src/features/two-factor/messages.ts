// The messages of two-factor enrolment and of sign-in's second step, in one place. (WebDAV's
// refusal of a password when two-factor is on stays with the WebDAV sign-in, in dav/messages.ts.)

/** A wrong or reused code, at sign-in (402) and at enrolment (400); AList's text. */
export const INVALID_OTP = "Invalid 2FA code";

/** The guest account is anonymous access, not a person who can hold a second factor; AList's text. */
export const GUEST_2FA = "Guest user can not generate 2FA code";

export const SECRET_NOT_ISSUED = "this 2FA secret was not issued to you or has expired; generate a new one";

export const SECRET_UNREADABLE =
  "the 2FA secret of this user cannot be decrypted (was OTP_ENCRYPTION_KEY or JWT_SECRET changed?); an admin can cancel the user's 2FA";
