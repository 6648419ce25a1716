// Single sign-on with OpenID Connect (docs/decisions.md D20): /api/auth/sso begins it, the
// provider's redirect to /api/auth/sso_callback ends it with a token (sso_get_token) or the
// identity for the profile page to link (get_sso_id). OpenList's routes and settings
// (server/handles/ssologin.go), with a single-use state, a nonce and PKCE for every sign-in.
import { USER_DISABLED } from "../../auth/messages.ts";
import { GUEST_ROLE_ID } from "../../auth/roles.ts";
import type { Database } from "../../db/client.ts";
import type { Env } from "../../env.ts";
import { ApiError } from "../../http/errors.ts";
import { isWellFormedText } from "../../http/text.ts";
import { openSession, type SignInClient } from "../auth/rules.ts";
import { createUser } from "../users/rules.ts";
import {
  BAD_STATE,
  GUEST_NOT_SIGNED_IN,
  LINKED_TWICE,
  NO_CODE,
  NO_METHOD,
  NO_USERNAME,
  NOT_CONFIGURED,
  NOT_LINKED,
  PLATFORM_UNSUPPORTED,
  providerRefused,
  SSO_DISABLED,
  UNKNOWN_METHOD,
} from "./messages.ts";
import { signLinkProof } from "./link.ts";
import { discover, exchangeCode, pkceChallenge, randomToken, verifyIdToken } from "./oidc.ts";
import {
  consumeState,
  readLinkedAccounts,
  readSsoSettings,
  saveState,
  type SsoMethod,
  type SsoSettings,
} from "./store.ts";

/** How long the provider may keep the user before the callback (D20.2). */
const STATE_TTL_SECONDS = 600;

/** The one redirect URI to register at the provider: the method travels in the state (D20.2). */
export const CALLBACK_PATH = "/api/auth/sso_callback";

const METHODS: readonly SsoMethod[] = ["sso_get_token", "get_sso_id"];

/** `site_url` when it is absolute, else the origin the request came to. */
function siteOrigin(settings: SsoSettings, requestUrl: string): string {
  if (/^https?:\/\//i.test(settings.site_url)) return settings.site_url.replace(/\/+$/, "");
  return new URL(requestUrl).origin;
}

function usable(settings: SsoSettings) {
  if (settings.sso_login_enabled !== "true") throw new ApiError(403, SSO_DISABLED);
  if (settings.sso_login_platform !== "OIDC") throw new ApiError(400, PLATFORM_UNSUPPORTED);
  if (settings.sso_endpoint_name === "" || settings.sso_client_id === "") throw new ApiError(400, NOT_CONFIGURED);
}

/** The provider's authorization URL for a new sign-in, its state stored server-side. */
export async function beginSignIn(db: Database, method: string | undefined, requestUrl: string): Promise<string> {
  if (!method) throw new ApiError(400, NO_METHOD);
  if (!METHODS.includes(method as SsoMethod)) throw new ApiError(400, UNKNOWN_METHOD);
  const settings = await readSsoSettings(db);
  usable(settings);
  const provider = await discover(settings.sso_endpoint_name);
  const now = Math.floor(Date.now() / 1000);
  const pending = {
    state: randomToken(),
    method: method as SsoMethod,
    nonce: randomToken(),
    codeVerifier: randomToken(),
    expiresAt: now + STATE_TTL_SECONDS,
  };
  await saveState(db, pending, now);
  const url = new URL(provider.authorizationEndpoint);
  const scopes = ["openid", "profile", ...settings.sso_extra_scopes.split(/[\s,]+/)].filter(Boolean);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", settings.sso_client_id);
  url.searchParams.set("redirect_uri", siteOrigin(settings, requestUrl) + CALLBACK_PATH);
  url.searchParams.set("scope", [...new Set(scopes)].join(" "));
  url.searchParams.set("state", pending.state);
  url.searchParams.set("nonce", pending.nonce);
  url.searchParams.set("code_challenge", await pkceChallenge(pending.codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  return url.href;
}

export interface CallbackQuery {
  state: string | undefined;
  code: string | undefined;
  error: string | undefined;
  errorDescription: string | undefined;
}

/** What the callback page hands over, and whether it does so by redirect (sso_compatibility_mode). */
export type CallbackResult = { redirect: boolean } & (
  | { method: "sso_get_token"; token: string }
  | { method: "get_sso_id"; ssoId: string }
);

/** The provider's redirect: the state taken out once, the code exchanged, the ID token verified. */
export async function finishSignIn(
  env: Env,
  db: Database,
  query: CallbackQuery,
  client: SignInClient,
  requestUrl: string,
): Promise<CallbackResult> {
  if (!query.state) throw new ApiError(400, BAD_STATE);
  const { pending, settings } = await consumeState(db, query.state);
  if (!pending || pending.expiresAt <= Math.floor(Date.now() / 1000)) throw new ApiError(400, BAD_STATE);
  usable(settings);
  if (query.error) {
    throw new ApiError(
      400,
      providerRefused(query.errorDescription ? `${query.error}: ${query.errorDescription}` : query.error),
    );
  }
  if (!query.code) throw new ApiError(400, NO_CODE);

  const provider = await discover(settings.sso_endpoint_name);
  const idToken = await exchangeCode(
    provider,
    {
      clientId: settings.sso_client_id,
      clientSecret: settings.sso_client_secret,
      redirectUri: siteOrigin(settings, requestUrl) + CALLBACK_PATH,
    },
    query.code,
    pending.codeVerifier,
  );
  const claims = await verifyIdToken(provider, settings.sso_client_id, idToken, pending.nonce);
  // Issuer and subject: the one pair OpenID Connect promises is stable and unique (Core 1.0, section 5.7).
  const ssoId = `${provider.issuer}|${claims.sub}`;
  const redirect = settings.sso_compatibility_mode === "true";
  // A proof of the identity, not the identity: /api/me/update takes only that (link.ts).
  if (pending.method === "get_sso_id")
    return { method: "get_sso_id", ssoId: await signLinkProof(env, ssoId), redirect };

  const { linked, activeSessionKeys } = await readLinkedAccounts(db, ssoId);
  if (linked.length > 1) throw new ApiError(403, LINKED_TWICE);
  let user = linked[0];
  if (!user) {
    if (settings.sso_auto_register !== "true") throw new ApiError(403, NOT_LINKED);
    const claim = claims[settings.sso_oidc_username_key || "name"];
    const username = typeof claim === "string" ? claim.trim() : "";
    if (username === "" || username.length > 255 || !isWellFormedText(username)) throw new ApiError(400, NO_USERNAME);
    // A taken name is refused (users' "already taken"): an identity never signs in as a local account.
    user = await createUser(db, {
      username,
      password: randomToken(),
      basePath: settings.sso_default_dir || "/",
      permission: permissionOf(settings.sso_default_permission),
      ssoId,
    });
  }
  if (user.roleIds.includes(GUEST_ROLE_ID)) throw new ApiError(403, GUEST_NOT_SIGNED_IN);
  // Checked here, not only by the guard later: OpenList hands out a token to a disabled account.
  if (user.disabled) throw new ApiError(403, USER_DISABLED);
  // The provider's own checks (its password, its second factor) stand for ours (D20.4).
  const { token } = await openSession(env, db, {
    user,
    state: {
      maxDevices: Number.parseInt(settings.max_devices, 10) || 0,
      evictPolicy: settings.device_evict_policy === "evict_oldest" ? "evict_oldest" : "deny",
      activeSessionKeys,
    },
    client,
    now: Math.floor(Date.now() / 1000),
    otpStep: null,
    passwordUpgrade: null,
  });
  return { method: "sso_get_token", token, redirect };
}

/** sso_default_permission as AList's bit field; anything else gives no permission. */
function permissionOf(value: string): number {
  const bits = Number(value);
  return Number.isInteger(bits) && bits >= 0 && bits <= 0xffff ? bits : 0;
}
