// Every text single sign-on answers, each defined once. OpenList's wording where it has the case
// (server/handles/ssologin.go); ours where OpenList checks nothing (docs/decisions.md D20).

export const SSO_DISABLED = "Single sign-on is not enabled";
export const NO_METHOD = "no method provided";
export const UNKNOWN_METHOD = "method must be sso_get_token or get_sso_id";
export const PLATFORM_UNSUPPORTED = "single sign-on supports the OIDC platform only (sso_login_platform)";
export const NOT_CONFIGURED = "single sign-on is not configured: sso_endpoint_name and sso_client_id are needed";
/** Unknown, used already, expired, or the callback came without one. */
export const BAD_STATE = "incorrect or expired state parameter";
export const NO_CODE = "the provider sent no authorization code";
export const providerRefused = (error: string) => `the provider refused the sign-in: ${error}`;
export const providerUnreachable = (what: string, reason: string) =>
  `the OpenID provider's ${what} could not be read: ${reason}`;
export const ISSUER_MISMATCH = "the OpenID provider's discovery names another issuer than sso_endpoint_name";
export const NO_ID_TOKEN = "no id_token found in oauth2 token";
export const idTokenRefused = (reason: string) => `the ID token was refused: ${reason}`;
export const FOREIGN_NONCE = "the ID token was refused: its nonce is not this sign-in's";
export const FOREIGN_AZP = "the ID token was refused: it was issued to another client (azp)";
export const NO_USERNAME = "cannot get username from OIDC provider";
export const NOT_LINKED =
  "no account is linked to this identity: link it from the profile page, or ask the admin to enable sso_auto_register";
export const LINKED_TWICE = "this identity is linked to more than one account; the admin must keep one";
export const GUEST_NOT_SIGNED_IN = "the guest account cannot be signed in to";
export const LINK_PROOF_REFUSED =
  "sso_id can only be set by connecting single sign-on from the profile page (or by the admin)";
