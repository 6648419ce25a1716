// Data access for settings. Every query the settings endpoints run is here; each function is one
// round trip (one batch).
import { and, asc, eq, inArray, or, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "../../auth/roles.ts";
import type { Database } from "../../db/client.ts";
import { plan } from "../../db/plan.ts";
import { roles, settings } from "../../db/schema.ts";
import { settingDefinitionByKey, SettingFlag } from "../../db/settings.ts";
import type { RoleName, SettingValue } from "./validate.ts";

export type SettingRow = typeof settings.$inferSelect;

/**
 * Every public and read-only setting as `{key: value}`, keys in alphabetical order (AList's shape),
 * plus the named private ones (the web UI's page needs customize_head and customize_body; the
 * public-settings endpoint names none). One round trip.
 */
export async function readPublicSettings(
  db: Database,
  alsoPrivate: readonly string[] = [],
): Promise<Record<string, string>> {
  const key = alsoPrivate.join(",");
  const kept = publicSettingsCache.get(db)?.get(key);
  if (kept && kept.until > Date.now()) return kept.values;
  const values = await queryPublicSettings(db, alsoPrivate);
  if (!publicSettingsCache.has(db)) publicSettingsCache.set(db, new Map());
  publicSettingsCache.get(db)!.set(key, { values, until: Date.now() + PUBLIC_SETTINGS_TTL_MS });
  return values;
}

/**
 * The public settings every page load asks for, kept by the isolate for a few seconds: a save in
 * this isolate clears them at once; other isolates show it within PUBLIC_SETTINGS_TTL_MS. Nothing
 * that decides access reads them from here (the file side and the guard read settings in their
 * own batches).
 */
export const PUBLIC_SETTINGS_TTL_MS = 10_000;
const publicSettingsCache = new WeakMap<Database, Map<string, { values: Record<string, string>; until: number }>>();

async function queryPublicSettings(db: Database, alsoPrivate: readonly string[]): Promise<Record<string, string>> {
  const visible = inArray(settings.flag, [SettingFlag.PUBLIC, SettingFlag.READONLY]);
  const rows = await db
    .select({ key: settings.key, value: settings.value })
    .from(settings)
    .where(alsoPrivate.length > 0 ? or(visible, inArray(settings.key, [...alsoPrivate])) : visible)
    .orderBy(asc(settings.key));
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}

const roleNames = (db: Database) => db.select({ id: roles.id, name: roles.name }).from(roles).orderBy(asc(roles.id));

/** Settings of the given groups (all when null) by index, and the role names `default_role` is shown with. */
export function settingsInGroups(db: Database, groups: readonly number[] | null) {
  const rows = db.select().from(settings);
  return plan(
    [
      (groups ? rows.where(inArray(settings.group, [...groups])) : rows).orderBy(
        asc(settings.index),
        asc(settings.key),
      ),
      roleNames(db),
    ],
    ([found, roleRows]): { rows: SettingRow[]; roles: RoleName[] } => ({ rows: found, roles: roleRows }),
  );
}

/** The stored rows of these keys (absent ones are missing), and the role names. */
export function settingsByKey(db: Database, keys: readonly string[]) {
  return plan(
    [
      db
        .select()
        .from(settings)
        .where(inArray(settings.key, [...keys])),
      roleNames(db),
    ],
    ([found, roleRows]): { rows: Map<string, SettingRow>; roles: RoleName[] } => ({
      rows: new Map(found.map((row) => [row.key, row])),
      roles: roleRows,
    }),
  );
}

/**
 * What a save reads (the stored rows of its keys, the role names) and, in the same batch, its
 * writes (see validate.ts presaveSplit): the `sure` values, and a new default role with the roles'
 * `default` flag. They are written only if the caller is an admin, every `mustStand` item is
 * stored as it is sent, and `defaultRole` names the stored default role or one that may be the
 * default: exactly when settingChanges accepts the request, asking for these writes. `wrote` says
 * whether they were written; if not, the handler validates and writes in a round trip of its own.
 * Unchanged values are not written again.
 */
export function settingsSave(
  db: Database,
  keys: readonly string[],
  presave: { sure: readonly SettingValue[]; mustStand: readonly SettingValue[]; defaultRole: string | undefined },
  callerIsAdmin: SQL,
) {
  const { sure, mustStand, defaultRole } = presave;
  const storedDefault = sql`(SELECT ${settings.value} FROM ${settings} WHERE ${settings.key} = 'default_role')`;
  const namedRole = sql`(SELECT CAST(${roles.id} AS TEXT) FROM ${roles} WHERE ${roles.name} = ${defaultRole ?? null})`;
  const stands = ({ key, value }: SettingValue) =>
    sql`EXISTS (SELECT 1 FROM ${settings} WHERE ${settings.key} = ${key} AND ${settings.value} = ${value})`;
  const conditions = [callerIsAdmin, ...mustStand.map(stands)];
  if (defaultRole !== undefined) {
    conditions.push(
      sql`EXISTS (SELECT 1 FROM ${roles} WHERE ${roles.name} = ${defaultRole} AND (CAST(${roles.id} AS TEXT) = ${storedDefault} OR ${roles.id} NOT IN (${ADMIN_ROLE_ID}, ${GUEST_ROLE_ID})))`,
    );
  }
  const allowed = sql.join(conditions, sql` AND `);
  const upsert = (key: string, value: SQL | string) => {
    const { help, type, options, group, flag, index } = settingDefinitionByKey.get(key)!;
    return db.run(sql`INSERT INTO ${settings} ("key", "value", "help", "type", "options", "group", "flag", "index")
      SELECT ${key}, ${value}, ${help}, ${type}, ${options}, ${group}, ${flag}, ${index} WHERE ${allowed}
      ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value" WHERE ${settings.value} <> excluded."value"`);
  };
  const writes = sure.map(({ key, value }) => upsert(key, value));
  if (defaultRole !== undefined) {
    // The flag first: it compares the new role with the stored one, which the upsert then replaces.
    writes.push(
      db.run(
        sql`UPDATE ${roles} SET "is_default" = CAST(${roles.id} AS TEXT) = ${namedRole} WHERE ${allowed} AND ${namedRole} IS NOT ${storedDefault}`,
      ),
      upsert("default_role", namedRole),
    );
  }
  return plan(
    [
      db
        .select()
        .from(settings)
        .where(inArray(settings.key, [...keys])),
      roleNames(db),
      db.get<{ wrote: number }>(sql`SELECT ${allowed} AS wrote`),
      ...writes,
    ],
    ([found, roleRows, verdict]) => ({
      rows: new Map(found.map((row) => [row.key, row])),
      roles: roleRows as RoleName[],
      wrote: writes.length > 0 && Number(verdict?.wrote) === 1,
    }),
  );
}

/** Forgets the public settings this isolate keeps (readPublicSettings), after a save. */
export const forgetPublicSettings = (db: Database) => void publicSettingsCache.delete(db);

/**
 * Writes values of known settings in one batch. A row that is missing is created with its
 * definition's metadata; an existing row changes its value only. A new `default_role` also moves
 * the roles' `default` flag, so the role list and the setting agree.
 */
export async function saveSettingValues(db: Database, values: readonly SettingValue[]): Promise<void> {
  forgetPublicSettings(db);
  const writes: BatchItem<"sqlite">[] = values.map(({ key, value }) => {
    const definition = settingDefinitionByKey.get(key);
    if (!definition) throw new Error(`saveSettingValues: ${key} is not a known setting`);
    const { help, type, options, group, flag, index } = definition;
    return db
      .insert(settings)
      .values({ key, value, help, type, options, group, flag, index })
      .onConflictDoUpdate({ target: settings.key, set: { value } });
  });
  const defaultRole = values.find(({ key }) => key === "default_role");
  if (defaultRole) writes.push(db.update(roles).set({ isDefault: sql`${roles.id} = ${Number(defaultRole.value)}` }));
  if (writes.length > 0) await db.batch(writes as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  // Again: a read while the write was under way may have kept the old values.
  forgetPublicSettings(db);
}

/** Deletes a setting if it is deprecated; returns the row as it was (undefined when there was none). */
export async function deleteDeprecatedSetting(db: Database, key: string): Promise<SettingRow | undefined> {
  forgetPublicSettings(db);
  const [[row]] = await db.batch([
    db.select().from(settings).where(eq(settings.key, key)),
    db.delete(settings).where(and(eq(settings.key, key), eq(settings.flag, SettingFlag.DEPRECATED))),
  ]);
  return row;
}
