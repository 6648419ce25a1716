// What the passkey routes decide (docs/decisions.md D19): the relying party, the options a
// ceremony begins with, and whether its finish is accepted. The challenge lives on the server
// (store.ts), single-use and short-lived; the cryptography is webauthn.ts's. Refusals are the
// ApiError the wire answers.
import { USER_DISABLED } from "../../auth/messages.ts";
import type { Database } from "../../db/client.ts";
import type { Env } from "../../env.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { type SignInClient, signInVerified } from "../auth/rules.ts";
import {
  CHALLENGE_INVALID,
  COUNTER_REGRESSED,
  CREDENTIAL_MALFORMED,
  CREDENTIAL_NOT_FOUND,
  CREDENTIAL_TAKEN,
  NEEDS_USER_VERIFICATION,
  tooManyPasskeys,
  UNKNOWN_CREDENTIAL,
  WEBAUTHN_DISABLED,
  WRONG_USER,
} from "./messages.ts";
import {
  addPasskey,
  advanceCounter,
  beginCeremony,
  type Ceremony,
  consumeChallenge,
  deletePasskey,
  listPasskeys,
  type PasskeySettings,
} from "./store.ts";
import {
  COSE_ALGORITHMS,
  type Expected,
  fromBase64Url,
  toBase64Url,
  userHandle,
  userIdOfHandle,
  verifyAssertion,
  verifyRegistration,
} from "./webauthn.ts";

/** How long a begun ceremony may take: long enough for a PIN, short enough to be useless when captured. */
const CHALLENGE_TTL_SECONDS = 300;
/** Enough for every device a person owns; stops one account from filling the table. */
const MAX_PASSKEYS_PER_USER = 50;
/** What the authenticator is asked to show for the site when `site_title` is empty. */
const DEFAULT_RP_NAME = "Gatehouse";

/** A credential as `PublicKeyCredential.toJSON()` spells it (WebAuthn Level 3, section 5.1). */
export interface CredentialJson {
  id: string;
  response: {
    clientDataJSON: string;
    attestationObject?: string | undefined;
    authenticatorData?: string | undefined;
    signature?: string | undefined;
    userHandle?: string | null | undefined;
  };
}

/**
 * The relying party (D19.3): `site_url` when it is an absolute http(s) URL, else the URL the request
 * came to. Never X-Forwarded-Host: a phishing proxy sets it, and the origin check would then accept
 * the proxy's own site. An IP address cannot be an RP ID; browsers refuse such options themselves.
 */
function relyingParty(siteUrl: string, requestUrl: string): { rpId: string; origin: string } {
  const site = /^https?:\/\//i.test(siteUrl) ? new URL(siteUrl) : new URL(requestUrl);
  return { rpId: site.hostname, origin: site.origin };
}

function requireEnabled(settings: PasskeySettings) {
  if (!settings.enabled) throw new ApiError(403, WEBAUTHN_DISABLED);
}

function newChallenge() {
  return {
    handle: toBase64Url(crypto.getRandomValues(new Uint8Array(32))),
    challenge: toBase64Url(crypto.getRandomValues(new Uint8Array(32))),
  };
}

const seconds = () => Math.floor(Date.now() / 1000);
const descriptor = (id: string) => ({ type: "public-key" as const, id });

/** Creation options (WebAuthn Level 3, section 5.4, as JSON) for `user`, and the handle of the challenge stored for it. */
export async function beginRegistration(db: Database, user: { id: number; username: string }, requestUrl: string) {
  const { handle, challenge, begun, rpId } = await begin(db, "registration", { id: user.id }, requestUrl);
  return {
    options: {
      publicKey: {
        rp: { id: rpId, name: begun.settings.siteTitle || DEFAULT_RP_NAME },
        user: { id: userHandle(user.id), name: user.username, displayName: user.username },
        challenge,
        pubKeyCredParams: COSE_ALGORITHMS.map((alg) => ({ type: "public-key" as const, alg })),
        timeout: CHALLENGE_TTL_SECONDS * 1000,
        excludeCredentials: begun.credentialIds.map(descriptor),
        // A resident key is what lets the login page sign in without a user name (OpenList requires it too).
        authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "preferred" },
        attestation: "none",
      },
    },
    session: handle,
  };
}

/** A new challenge stored for `ceremony` (refused while passkeys are off), and the relying party's id. */
async function begin(
  db: Database,
  ceremony: "registration" | "login",
  user: Parameters<typeof beginCeremony>[1]["user"],
  requestUrl: string,
) {
  const { handle, challenge } = newChallenge();
  const now = seconds();
  const begun = await beginCeremony(db, {
    handle,
    challenge,
    ceremony,
    user,
    now,
    expiresAt: now + CHALLENGE_TTL_SECONDS,
  });
  requireEnabled(begun.settings);
  return { handle, challenge, begun, rpId: relyingParty(begun.settings.siteUrl, requestUrl).rpId };
}

/** Request options for a sign-in, with (`username`) or without ("": discoverable) a user name. */
export async function beginLogin(db: Database, username: string, requestUrl: string) {
  const { handle, challenge, begun, rpId } = await begin(db, "login", { username }, requestUrl);
  return {
    options: {
      publicKey: {
        challenge,
        rpId,
        timeout: CHALLENGE_TTL_SECONDS * 1000,
        // An unknown name gets an empty list, as a name without passkeys does: the reply tells nothing.
        allowCredentials: begun.credentialIds.map(descriptor),
        userVerification: "preferred",
      },
    },
    session: handle,
  };
}

/** The challenge `session` names, consumed; refused when off, unknown, used, expired or another ceremony's. */
async function consume(
  db: Database,
  request: { session: string | undefined; ceremony: Ceremony; userId: number | null; credentialId: string },
) {
  const consumed = await consumeChallenge(db, {
    handle: request.session ?? "",
    ceremony: request.ceremony,
    userId: request.userId,
    now: seconds(),
    credentialId: request.credentialId,
  });
  requireEnabled(consumed.settings);
  if (!consumed.challenge || request.session === undefined) throw new ApiError(400, CHALLENGE_INVALID);
  return { ...consumed, challenge: consumed.challenge };
}

/**
 * The browser's credential id, as stored: base64url without padding. One that does not decode is
 * kept as it is (it names no passkey), so the setting and the challenge are answered for first.
 */
function credentialIdOf(credential: CredentialJson): string {
  try {
    return toBase64Url(fromBase64Url(credential.id));
  } catch {
    return credential.id;
  }
}

/** Verifies a new credential against the caller's registration challenge and stores it. */
export async function finishRegistration(
  db: Database,
  userId: number,
  request: { session: string | undefined; credential: CredentialJson; name: string | undefined; requestUrl: string },
): Promise<void> {
  const { attestationObject, clientDataJSON } = request.credential.response;
  const credentialId = credentialIdOf(request.credential);
  const consumed = await consume(db, { session: request.session, ceremony: "registration", userId, credentialId });
  if (attestationObject === undefined) throw new ApiError(400, CREDENTIAL_MALFORMED);
  const expected: Expected = {
    challenge: consumed.challenge.challenge,
    ...relyingParty(consumed.settings.siteUrl, request.requestUrl),
  };
  const verified = await verifyRegistration({ id: credentialId, clientDataJSON, attestationObject }, expected);
  const now = seconds();
  const added = await refuseDuplicate(
    CREDENTIAL_TAKEN,
    addPasskey(
      db,
      {
        userId,
        credentialId: verified.id,
        publicKey: toBase64Url(verified.publicKey),
        signCount: verified.signCount,
        aaguid: verified.aaguid,
        name: request.name ?? `passkey ${new Date(now * 1000).toISOString().slice(0, 10)}`,
        now,
      },
      MAX_PASSKEYS_PER_USER,
    ),
  );
  if (!added) throw new ApiError(400, tooManyPasskeys(MAX_PASSKEYS_PER_USER));
}

/**
 * Verifies an assertion against the sign-in challenge and signs its owner in as a password
 * sign-in does. Two-factor accounts need user verification (D19.5); the counter must grow (D19.4).
 */
export async function finishLogin(
  env: Env,
  db: Database,
  request: { session: string | undefined; username: string; credential: CredentialJson; requestUrl: string },
  client: SignInClient,
): Promise<{ token: string; device_key: string }> {
  const { authenticatorData, signature, clientDataJSON } = request.credential.response;
  const consumed = await consume(db, {
    session: request.session,
    ceremony: "login",
    userId: null,
    credentialId: credentialIdOf(request.credential),
  });
  if (authenticatorData === undefined || signature === undefined) throw new ApiError(400, CREDENTIAL_MALFORMED);
  // The finish names the user the begin was for: a challenge begun for one name answers no other.
  if (consumed.challenge.username !== request.username) throw new ApiError(400, CHALLENGE_INVALID);
  const stored = consumed.credential;
  if (!stored) throw new ApiError(400, UNKNOWN_CREDENTIAL);
  if (consumed.challenge.username !== "" && stored.user.username !== consumed.challenge.username)
    throw new ApiError(400, WRONG_USER);
  const handle = request.credential.response.userHandle;
  if (handle === undefined || handle === null || handle === "") {
    // Without a name, the authenticator says whose credential it is (WebAuthn Level 2, section 7.2 step 6).
    if (consumed.challenge.username === "") throw new ApiError(400, CREDENTIAL_MALFORMED);
  } else if (userIdOfHandle(handle) !== stored.userId) throw new ApiError(400, WRONG_USER);

  const expected: Expected = {
    challenge: consumed.challenge.challenge,
    ...relyingParty(consumed.settings.siteUrl, request.requestUrl),
  };
  const verified = await verifyAssertion(
    { clientDataJSON, authenticatorData, signature },
    expected,
    fromBase64Url(stored.publicKey),
  );
  if (stored.user.disabled) throw new ApiError(403, USER_DISABLED);
  if (stored.user.otpSecret !== null && !verified.userVerified) throw new ApiError(403, NEEDS_USER_VERIFICATION);
  if (!(await advanceCounter(db, stored.id, verified.signCount, seconds()))) throw new ApiError(400, COUNTER_REGRESSED);
  return signInVerified(env, db, stored.user, client);
}

/** The caller's passkeys: `id` and `fingerprint` as the UI reads them (OpenList's), then ours. */
export async function ownPasskeys(db: Database, userId: number) {
  const listed = await listPasskeys(db, userId);
  requireEnabled(listed.settings);
  const time = (value: number) => (value === 0 ? null : new Date(value * 1000).toISOString());
  return listed.passkeys.map((key) => ({
    id: key.credentialId,
    fingerprint: key.aaguid,
    name: key.name,
    created_at: time(key.createdAt) ?? "",
    last_used_at: time(key.lastUsedAt),
  }));
}

/** Deletes the caller's passkey `id`; someone else's and a missing one are the same 404. */
export async function removeOwnPasskey(db: Database, userId: number, id: string): Promise<void> {
  // Standard base64 (OpenList's spelling) names the same credential.
  const removed = await deletePasskey(db, userId, id.replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_"));
  requireEnabled(removed.settings);
  if (!removed.deleted) throw new ApiError(404, CREDENTIAL_NOT_FOUND);
}
