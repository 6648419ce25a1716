// Every query of single sign-on: the settings and the state's write when it begins; the state's
// consumption with the settings at the callback; the account of an identity (docs/decisions.md D20).
import { and, eq, inArray, lte, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { deviceSessions, DeviceSessionStatus, settings, ssoStates, users } from "../../db/schema.ts";

/** What the callback does with the identity: sign in, or hand it to the profile page to link. */
export type SsoMethod = (typeof ssoStates.$inferSelect)["method"];

const SETTING_KEYS = [
  "sso_login_enabled",
  "sso_login_platform",
  "sso_compatibility_mode",
  "sso_client_id",
  "sso_client_secret",
  "sso_endpoint_name",
  "sso_extra_scopes",
  "sso_oidc_username_key",
  "sso_auto_register",
  "sso_default_dir",
  "sso_default_permission",
  "site_url",
  "max_devices",
  "device_evict_policy",
] as const;

export type SsoSettings = Record<(typeof SETTING_KEYS)[number], string>;

const readSettings = (db: Database) =>
  db
    .select({ key: settings.key, value: settings.value })
    .from(settings)
    .where(inArray(settings.key, [...SETTING_KEYS]));

function settingsOf(rows: { key: string; value: string }[]): SsoSettings {
  const values = new Map(rows.map((row) => [row.key, row.value]));
  return Object.fromEntries(SETTING_KEYS.map((key) => [key, values.get(key) ?? ""])) as SsoSettings;
}

export async function readSsoSettings(db: Database): Promise<SsoSettings> {
  return settingsOf(await readSettings(db));
}

export interface PendingSignIn {
  state: string;
  method: SsoMethod;
  nonce: string;
  codeVerifier: string;
  expiresAt: number;
}

/** Stores a begun sign-in, and drops the ones that expired (the cron sweeps them too, when nobody signs in). */
export async function saveState(db: Database, pending: PendingSignIn, now: number) {
  await db.batch([db.delete(ssoStates).where(lte(ssoStates.expiresAt, now)), db.insert(ssoStates).values(pending)]);
}

/**
 * Takes the state out (one DELETE … RETURNING: of two callbacks with the same state, one gets it)
 * and reads the settings, in one batch. An expired state is taken out too, and reported as such.
 */
export async function consumeState(db: Database, state: string) {
  const [taken, rows] = await db.batch([
    db.delete(ssoStates).where(eq(ssoStates.state, state)).returning(),
    readSettings(db),
  ]);
  return { pending: taken[0] as PendingSignIn | undefined, settings: settingsOf(rows) };
}

/** At most two: two accounts linked to one identity is refused, not guessed between. */
const LINKED_READ = 2;

/** The accounts linked to an identity, and the active sessions of the first (for the device limit). */
export async function readLinkedAccounts(db: Database, ssoId: string) {
  const [linked, [active]] = await db.batch([
    db.select().from(users).where(eq(users.ssoId, ssoId)).orderBy(users.id).limit(LINKED_READ),
    db
      .select({ keys: sql<string | null>`group_concat(${deviceSessions.deviceKey}, ' ')` })
      .from(deviceSessions)
      .where(
        and(
          eq(
            deviceSessions.userId,
            sql`(SELECT ${users.id} FROM ${users} WHERE ${users.ssoId} = ${ssoId} ORDER BY ${users.id} LIMIT 1)`,
          ),
          eq(deviceSessions.status, DeviceSessionStatus.ACTIVE),
        ),
      ),
  ]);
  return { linked, activeSessionKeys: new Set(active?.keys ? active.keys.split(" ") : []) };
}
