// Every query of the passkey routes; each exported function is one round trip.
import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { passkeys, settings, users, webauthnChallenges } from "../../db/schema.ts";

export type Ceremony = (typeof webauthnChallenges.$inferInsert)["ceremony"];

const SETTING_KEYS = ["webauthn_login_enabled", "site_url", "site_title"];

/** The settings every passkey route reads: the switch, and the site's public URL (the RP: D19.3). */
function readSettings(db: Database) {
  return db
    .select({ key: settings.key, value: settings.value })
    .from(settings)
    .where(inArray(settings.key, SETTING_KEYS));
}

export interface PasskeySettings {
  enabled: boolean;
  siteUrl: string;
  /** What authenticators show as the site's name. */
  siteTitle: string;
}

function settingsOf(rows: { key: string; value: string }[]): PasskeySettings {
  const value = (key: string) => rows.find((row) => row.key === key)?.value ?? "";
  return {
    enabled: value("webauthn_login_enabled") === "true",
    siteUrl: value("site_url"),
    siteTitle: value("site_title"),
  };
}

const enabledNow = sql`(SELECT ${settings.value} FROM ${settings} WHERE ${settings.key} = 'webauthn_login_enabled') = 'true'`;

const userIdByName = (username: string) =>
  sql`(SELECT ${users.id} FROM ${users} WHERE ${users.username} = ${username})`;

/**
 * Stores a new challenge while the setting is on, sweeping expired ones, and reads the settings and
 * the credentials the options list (the user's, to exclude at registration or allow at sign-in), in
 * one batch. `stored` is false when the setting was off and nothing was written.
 */
export async function beginCeremony(
  db: Database,
  challenge: {
    handle: string;
    challenge: string;
    ceremony: Ceremony;
    /** The registering user's id, or the user name a sign-in was begun with ("" when discoverable). */
    user: { id: number } | { username: string };
    now: number;
    expiresAt: number;
  },
) {
  const owner =
    "id" in challenge.user
      ? sql`${challenge.user.id}`
      : challenge.user.username === ""
        ? sql`NULL`
        : userIdByName(challenge.user.username);
  const username = "username" in challenge.user ? challenge.user.username : "";
  const [, inserted, settingRows, credentials] = await db.batch([
    db.delete(webauthnChallenges).where(lte(webauthnChallenges.expiresAt, challenge.now)),
    db.run(sql`
      INSERT INTO ${webauthnChallenges} (handle, challenge, ceremony, user_id, username, expires_at)
      SELECT ${challenge.handle}, ${challenge.challenge}, ${challenge.ceremony}, ${owner}, ${username}, ${challenge.expiresAt}
      WHERE ${enabledNow}`),
    readSettings(db),
    db
      .select({ credentialId: passkeys.credentialId })
      .from(passkeys)
      .where(eq(passkeys.userId, owner))
      .orderBy(asc(passkeys.id)),
  ]);
  return {
    stored: inserted.rowsAffected > 0,
    settings: settingsOf(settingRows),
    credentialIds: credentials.map((row) => row.credentialId),
  };
}

/**
 * Consumes the challenge `handle` names, if it is of this ceremony, unexpired and (for a
 * registration) the caller's: DELETE … RETURNING, so of two finishes with one handle only one gets
 * it. Reads the settings in the same batch, and the credential a sign-in presents with its owner.
 */
export async function consumeChallenge(
  db: Database,
  request: { handle: string; ceremony: Ceremony; userId: number | null; now: number; credentialId: string },
) {
  const conditions = [
    eq(webauthnChallenges.handle, request.handle),
    eq(webauthnChallenges.ceremony, request.ceremony),
    sql`${webauthnChallenges.expiresAt} > ${request.now}`,
  ];
  if (request.userId !== null) conditions.push(eq(webauthnChallenges.userId, request.userId));
  const [consumed, settingRows, credential] = await db.batch([
    db
      .delete(webauthnChallenges)
      .where(and(...conditions))
      .returning({
        challenge: webauthnChallenges.challenge,
        userId: webauthnChallenges.userId,
        username: webauthnChallenges.username,
      }),
    readSettings(db),
    db
      .select({
        id: passkeys.id,
        userId: passkeys.userId,
        publicKey: passkeys.publicKey,
        signCount: passkeys.signCount,
        user: users,
      })
      .from(passkeys)
      .innerJoin(users, eq(users.id, passkeys.userId))
      .where(eq(passkeys.credentialId, request.credentialId)),
  ]);
  return { challenge: consumed[0], settings: settingsOf(settingRows), credential: credential[0] };
}

/** Adds a passkey unless the user has `limit` already, in one statement; false when at the limit. */
export async function addPasskey(
  db: Database,
  key: {
    userId: number;
    credentialId: string;
    publicKey: string;
    signCount: number;
    aaguid: string;
    name: string;
    now: number;
  },
  limit: number,
): Promise<boolean> {
  const result = await db.run(sql`
    INSERT INTO ${passkeys} (user_id, credential_id, public_key, sign_count, aaguid, name, created_at, last_used_at)
    SELECT ${key.userId}, ${key.credentialId}, ${key.publicKey}, ${key.signCount}, ${key.aaguid}, ${key.name}, ${key.now}, 0
    WHERE (SELECT count(*) FROM ${passkeys} WHERE user_id = ${key.userId}) < ${limit}`);
  return result.rowsAffected > 0;
}

/**
 * Records a sign-in's counter and time, only if the counter grew (or both it and the stored one are
 * 0: an authenticator without a counter): one conditional UPDATE, so two sign-ins racing with one
 * counter value cannot both pass (D19.4). False when refused, or the passkey is gone.
 */
export async function advanceCounter(db: Database, id: number, signCount: number, now: number): Promise<boolean> {
  const updated = await db
    .update(passkeys)
    .set({ signCount, lastUsedAt: now })
    .where(
      and(
        eq(passkeys.id, id),
        sql`(${passkeys.signCount} < ${signCount} OR (${passkeys.signCount} = 0 AND ${signCount} = 0))`,
      ),
    )
    .returning({ id: passkeys.id });
  return updated.length > 0;
}

/** The settings and the user's passkeys, oldest first. */
export async function listPasskeys(db: Database, userId: number) {
  const [settingRows, rows] = await db.batch([
    readSettings(db),
    db
      .select({
        credentialId: passkeys.credentialId,
        aaguid: passkeys.aaguid,
        name: passkeys.name,
        createdAt: passkeys.createdAt,
        lastUsedAt: passkeys.lastUsedAt,
      })
      .from(passkeys)
      .where(eq(passkeys.userId, userId))
      .orderBy(asc(passkeys.id)),
  ]);
  return { settings: settingsOf(settingRows), passkeys: rows };
}

/** Deletes the user's passkey `credentialId` while the setting is on; reads the setting alongside. */
export async function deletePasskey(db: Database, userId: number, credentialId: string) {
  const [settingRows, deleted] = await db.batch([
    readSettings(db),
    db
      .delete(passkeys)
      .where(and(eq(passkeys.credentialId, credentialId), eq(passkeys.userId, userId), enabledNow))
      .returning({ id: passkeys.id }),
  ]);
  return { settings: settingsOf(settingRows), deleted: deleted.length > 0 };
}
