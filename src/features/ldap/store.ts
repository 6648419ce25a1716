// Every query of LDAP sign-in beyond password sign-in's own (src/features/auth/store.ts): the
// ldap_* settings in one read, and the account a directory user gets on first sign-in.
import { eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { settings, users } from "../../db/schema.ts";
import { insertUser, type UserRow } from "../users/store.ts";

const LDAP_KEYS = [
  "ldap_login_enabled",
  "ldap_server",
  "ldap_start_tls",
  "ldap_manager_dn",
  "ldap_manager_password",
  "ldap_user_search_base",
  "ldap_user_search_filter",
  "ldap_default_dir",
  "ldap_default_permission",
] as const;

export type LdapSettings = Record<(typeof LDAP_KEYS)[number], string>;

/** The ldap_* settings; a missing row reads as empty (the seed adds them all). One round trip. */
export async function readLdapSettings(db: Database): Promise<LdapSettings> {
  const rows = await db
    .select({ key: settings.key, value: settings.value })
    .from(settings)
    .where(inArray(settings.key, [...LDAP_KEYS]));
  const values = new Map(rows.map((row) => [row.key, row.value]));
  return Object.fromEntries(LDAP_KEYS.map((key) => [key, values.get(key) ?? ""])) as LdapSettings;
}

export interface DirectoryAccount {
  username: string;
  passwordHash: string;
  now: number;
  basePath: string;
  permission: number;
}

/**
 * Creates the account of a directory user who signed in for the first time: the default role,
 * allow_ldap on. If a parallel sign-in created it first, that row is returned as it is (the
 * caller checks its allow_ldap like any other). One round trip, two on that race.
 */
export async function createDirectoryAccount(db: Database, account: DirectoryAccount): Promise<UserRow | undefined> {
  try {
    const result = await insertUser(db, {
      username: account.username,
      passwordHash: account.passwordHash,
      passwordChangedAt: account.now,
      basePath: account.basePath,
      roleIds: [],
      disabled: false,
      permission: account.permission,
      ssoId: "",
      allowLdap: true,
    });
    return result.user;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const [user] = await db.select().from(users).where(eq(users.username, account.username));
    return user;
  }
}
