// OpenID Connect as a relying party, over fetch and jose: discovery, the authorization URL, the
// code exchange with PKCE and the ID token's verification (docs/decisions.md D20.3). Refusals are
// the ApiError the callback answers; nothing here touches the database.
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from "jose";
import { ApiError } from "../../http/errors.ts";
import {
  FOREIGN_AZP,
  FOREIGN_NONCE,
  idTokenRefused,
  ISSUER_MISMATCH,
  NO_ID_TOKEN,
  providerRefused,
  providerUnreachable,
} from "./messages.ts";

export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
}

/** The provider's replies are small; a slow one fails the sign-in rather than holding the request. */
const PROVIDER_TIMEOUT_MS = 10_000;

/** Signature algorithms an ID token may use: asymmetric only, so the client secret is never a key. */
const ID_TOKEN_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

async function readJson(url: string, what: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
  } catch (error) {
    throw new ApiError(400, providerUnreachable(what, error instanceof Error ? error.message : String(error)));
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, providerUnreachable(what, `HTTP ${response.status}, not JSON`));
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError(400, providerUnreachable(what, `HTTP ${response.status}, not a JSON object`));
  }
  const object = body as Record<string, unknown>;
  if (!response.ok) {
    const error = typeof object.error === "string" ? object.error : `HTTP ${response.status}`;
    const description = typeof object.error_description === "string" ? `: ${object.error_description}` : "";
    throw new ApiError(400, providerRefused(`${error}${description}`));
  }
  return object;
}

/** OpenID Connect Discovery 1.0, section 4: the metadata at the issuer's well-known address, naming that issuer. */
export async function discover(issuer: string): Promise<ProviderMetadata> {
  const base = issuer.replace(/\/+$/, "");
  const what = "discovery document";
  const metadata = await readJson(`${base}/.well-known/openid-configuration`, what);
  const field = (name: string) => {
    const value = metadata[name];
    if (typeof value !== "string" || !/^https?:\/\//.test(value)) {
      throw new ApiError(400, providerUnreachable(what, `${name} is missing`));
    }
    return value;
  };
  // Its section 4.3: the issuer must be the one configured, or a document elsewhere could name any issuer.
  if (field("issuer").replace(/\/+$/, "") !== base) throw new ApiError(400, ISSUER_MISMATCH);
  return {
    issuer: field("issuer"),
    authorizationEndpoint: field("authorization_endpoint"),
    tokenEndpoint: field("token_endpoint"),
    jwksUri: field("jwks_uri"),
  };
}

/** RFC 7636's S256 challenge of a verifier. */
export async function pkceChallenge(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}

/** A random value of `bytes` bytes, base64url: states, nonces and PKCE verifiers (43 characters for 32). */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export interface Client {
  clientId: string;
  /** Empty: a public client, identified by client_id in the body. */
  clientSecret: string;
  redirectUri: string;
}

/** The code for tokens (RFC 6749 §4.1.3 with RFC 7636's verifier); client_secret_basic when there is a secret. */
export async function exchangeCode(
  provider: ProviderMetadata,
  client: Client,
  code: string,
  codeVerifier: string,
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code,
    redirect_uri: client.redirectUri,
    code_verifier: codeVerifier,
  });
  const headers: Record<string, string> = {
    "Content-Type": "application/x-www-form-urlencoded",
    Accept: "application/json",
  };
  if (client.clientSecret === "") form.set("client_id", client.clientId);
  else {
    // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
    const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");
    headers.Authorization = `Basic ${btoa(`${encode(client.clientId)}:${encode(client.clientSecret)}`)}`;
  }
  const tokens = await readJson(provider.tokenEndpoint, "token endpoint", { method: "POST", headers, body: form });
  if (typeof tokens.id_token !== "string") throw new ApiError(400, NO_ID_TOKEN);
  return tokens.id_token;
}

/** One key set per address, kept by the isolate: jose refetches it on an unknown key id (rotation). */
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function keySet(jwksUri: string) {
  let keys = keySets.get(jwksUri);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: PROVIDER_TIMEOUT_MS });
    keySets.set(jwksUri, keys);
  }
  return keys;
}

/**
 * OpenID Connect Core 1.0, section 3.1.3.7: signed by the provider's keys, by this issuer, for this client,
 * not expired, and carrying this sign-in's nonce. Returns its claims.
 */
export async function verifyIdToken(
  provider: ProviderMetadata,
  clientId: string,
  idToken: string,
  nonce: string,
): Promise<JWTPayload & { sub: string }> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, keySet(provider.jwksUri), {
      issuer: provider.issuer,
      audience: clientId,
      algorithms: ID_TOKEN_ALGORITHMS,
      requiredClaims: ["sub", "exp", "iat"],
    }));
  } catch (error) {
    if (error instanceof errors.JOSEError) throw new ApiError(400, idTokenRefused(error.message));
    throw error;
  }
  if (payload.nonce !== nonce) throw new ApiError(400, FOREIGN_NONCE);
  // Several audiences: the one it was issued to must be us.
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== clientId) {
    throw new ApiError(400, FOREIGN_AZP);
  }
  if (typeof payload.sub !== "string" || payload.sub === "") throw new ApiError(400, idTokenRefused("no subject"));
  return payload as JWTPayload & { sub: string };
}
