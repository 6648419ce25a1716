// The messages the passkey routes answer, each defined once. OpenList's text where it has one.

/** OpenList's text for every passkey route while `webauthn_login_enabled` is off. */
export const WEBAUTHN_DISABLED = "WebAuthn is not enabled";
/** The guest has no passkeys. */
export const GUEST_PASSKEYS = "the guest account cannot have passkeys";

/** The `session` header names no challenge of this ceremony (unknown, used, expired, someone else's). */
export const CHALLENGE_INVALID = "the passkey request expired or was already used: start again";
export const CREDENTIAL_MALFORMED = "malformed passkey credential";
export const WRONG_CEREMONY = "the credential was made for another kind of request";
export const CHALLENGE_MISMATCH = "the credential answers another challenge";
export const ORIGIN_MISMATCH = "the credential was made on another site (origin mismatch)";
export const RP_ID_MISMATCH = "the credential is for another relying party (RP ID mismatch)";
export const USER_NOT_PRESENT = "the authenticator did not confirm user presence";
export const BAD_SIGNATURE = "the passkey's signature does not verify";
export const UNSUPPORTED_KEY = "unsupported passkey algorithm (ES256, RS256 and EdDSA are)";
export const CREDENTIAL_TAKEN = "this passkey is already registered";
/** A sign-in with a credential id no account has: never registered, or deleted. */
export const UNKNOWN_CREDENTIAL = "unknown passkey";
/** The counter did not grow: two authenticators share the key (docs/decisions.md D19.4). */
export const COUNTER_REGRESSED =
  "the passkey's signature counter went backwards: it may be cloned, sign in another way";
export const WRONG_USER = "this passkey belongs to another account";
export const NEEDS_USER_VERIFICATION =
  "this account uses two-factor authentication: use a passkey that verifies you (PIN or biometrics), or sign in with the password and code";
export const CREDENTIAL_NOT_FOUND = "passkey not found";
export const tooManyPasskeys = (max: number) => `a user can have at most ${max} passkeys`;

/** OpenList's answer to a registration. */
export const REGISTERED = "Registered Successfully";
