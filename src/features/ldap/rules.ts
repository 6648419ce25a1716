// LDAP sign-in (OpenList server/handles/ldap_login.go, with docs/decisions.md D21's fixes): the
// lockout of password sign-in, the directory asked with the manager account, the account matched
// or created, then password sign-in's second factor, device session and token.
import { isLockedOut } from "../../auth/lockout.ts";
import { LOCKED_OUT_MESSAGE, USER_DISABLED } from "../../auth/messages.ts";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { ALL_PERMISSIONS, GUEST_ROLE_ID } from "../../auth/roles.ts";
import type { Database } from "../../db/client.ts";
import { jwtSecret, type Env } from "../../env.ts";
import { ApiError } from "../../http/errors.ts";
import { cleanPath } from "../../lib/path.ts";
import { SIGN_IN_FAILED } from "../auth/messages.ts";
import { completeSignIn, type SignInClient } from "../auth/rules.ts";
import { readSignInState, releaseAttempt } from "../auth/store.ts";
import { LdapConnection, LdapError, parseServer, ResultCode } from "./client.ts";
import { FilterError, nameAttribute, userFilter } from "./filter.ts";
import { LDAP_DISABLED, LDAP_NOT_ALLOWED, ldapUnavailable, spelledOtherwise } from "./messages.ts";
import { createDirectoryAccount, readLdapSettings, type LdapSettings } from "./store.ts";

/** How long one sign-in waits for the directory, connection and every operation together. */
const DIRECTORY_TIMEOUT_MS = 10_000;

export interface LdapSignInRequest {
  username: string;
  password: string;
  otpCode: string | undefined;
}

export async function ldapSignIn(
  env: Env,
  db: Database,
  request: LdapSignInRequest,
  client: SignInClient,
): Promise<{ token: string; device_key: string }> {
  jwtSecret(env); // a missing secret fails before any work is done
  const config = await readLdapSettings(db);
  if (config.ldap_login_enabled !== "true") throw new ApiError(403, LDAP_DISABLED);

  // Counted before the directory is asked, as password sign-in counts (src/auth/lockout.ts).
  const now = Math.floor(Date.now() / 1000);
  const attempt = { username: request.username, ip: client.ip, now };
  const state = await readSignInState(db, attempt);
  if (isLockedOut(state.failures)) throw new ApiError(429, LOCKED_OUT_MESSAGE);

  // An empty password is an unauthenticated bind (RFC 4513 section 5.1.2), which many
  // directories answer with success: it never reaches the directory.
  let found: false | { name: string };
  try {
    found = request.password !== "" && (await directoryAccepts(config, request.username, request.password));
  } catch (error) {
    // The directory's fault, not a guess: the attempt is given back.
    await releaseAttempt(db, attempt);
    if (error instanceof LdapError || error instanceof FilterError)
      throw new ApiError(500, ldapUnavailable(error.message));
    throw error;
  }
  if (!found) throw new ApiError(400, SIGN_IN_FAILED);
  // docs/decisions.md D21.2: directories match names ignoring case, accounts do not; `ALICE` would
  // become a second account of alice's entry, with a lockout count of its own.
  if (found.name !== request.username) {
    await releaseAttempt(db, attempt);
    throw new ApiError(400, spelledOtherwise(found.name));
  }

  // docs/decisions.md D21.3: the directory vouches for its entry, not for a local account of the
  // same name; that account must allow it. The directory was asked first, so this refusal tells
  // nobody without the entry's password which local names exist.
  let user = state.user;
  if (user && (user.roleIds.includes(GUEST_ROLE_ID) || !user.allowLdap)) {
    await releaseAttempt(db, attempt);
    throw new ApiError(403, LDAP_NOT_ALLOWED);
  }
  if (!user) {
    user = await createDirectoryAccount(db, {
      username: request.username,
      // Nobody knows this password: the account signs in through the directory (or after an admin sets one).
      passwordHash: await hashStaticHash(await staticHash(randomSecret())),
      now,
      basePath: cleanPath(config.ldap_default_dir || "/"),
      permission: defaultPermission(config.ldap_default_permission),
    });
    if (!user?.allowLdap) {
      await releaseAttempt(db, attempt);
      throw new ApiError(403, LDAP_NOT_ALLOWED);
    }
  }
  if (user.disabled) {
    await releaseAttempt(db, attempt);
    throw new ApiError(403, USER_DISABLED);
  }
  return completeSignIn(env, db, { user, state, client, otpCode: request.otpCode, now, passwordUpgrade: null });
}

/**
 * Whether the directory holds exactly one entry for `username` under the search base and
 * `password` binds as it: false, or the name as the directory spells it (the value of the filter's
 * name attribute that matches `username` ignoring case; `username` itself when there is none).
 * Throws LdapError when the directory cannot answer that question (unreachable, the manager
 * refused, the base missing), FilterError for a bad filter template.
 */
async function directoryAccepts(
  config: LdapSettings,
  username: string,
  password: string,
): Promise<false | { name: string }> {
  const target = parseServer(config.ldap_server);
  const template = config.ldap_user_search_filter || "(uid=%s)";
  const filter = userFilter(template, username);
  const attribute = nameAttribute(template);
  const connection = await LdapConnection.open(target, {
    startTls: config.ldap_start_tls === "true",
    timeoutMs: DIRECTORY_TIMEOUT_MS,
  });
  try {
    if (config.ldap_manager_dn !== "") {
      const manager = await connection.bind(config.ldap_manager_dn, config.ldap_manager_password);
      if (manager.code !== ResultCode.SUCCESS)
        throw new LdapError(`the directory refused the manager account (result ${manager.code})`);
    }
    const search = await connection.search(config.ldap_user_search_base, filter, attribute ? [attribute] : []);
    if (search.result.code === ResultCode.NO_SUCH_OBJECT)
      throw new LdapError("the search base ldap_user_search_base is not in the directory");
    // More than one match (size limit 2 reached) is no sign-in: the filter does not name one person.
    if (search.result.code === ResultCode.SIZE_LIMIT_EXCEEDED) return false;
    if (search.result.code !== ResultCode.SUCCESS)
      throw new LdapError(`the directory refused the search (result ${search.result.code})`);
    const [entry, ...others] = search.entries;
    if (entry === undefined || others.length > 0) return false;
    const bound = await connection.bind(entry.dn, password);
    if (bound.code === ResultCode.INVALID_CREDENTIALS) return false;
    if (bound.code !== ResultCode.SUCCESS)
      throw new LdapError(`the directory refused the user's bind (result ${bound.code})`);
    const values = attribute ? (entry.attributes.get(attribute.toLowerCase()) ?? []) : [];
    if (values.includes(username)) return { name: username };
    return { name: values.find((value) => value.toLowerCase() === username.toLowerCase()) ?? username };
  } finally {
    await connection.close();
  }
}

/** ldap_default_permission as permission bits; anything else is no permission. */
function defaultPermission(value: string): number {
  const bits = Number(value);
  return Number.isInteger(bits) && bits >= 0 && bits <= ALL_PERMISSIONS ? bits : 0;
}

function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
