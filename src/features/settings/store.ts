// Data access for settings. Every query the settings endpoints run is here.
import { asc, inArray } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { settings } from "../../db/schema.ts";
import { SettingFlag } from "../../db/settings.ts";

/** Every public and read-only setting as `{key: value}`, keys in alphabetical order (AList's shape). One round trip. */
export async function readPublicSettings(db: Database): Promise<Record<string, string>> {
  const rows = await db
    .select({ key: settings.key, value: settings.value })
    .from(settings)
    .where(inArray(settings.flag, [SettingFlag.PUBLIC, SettingFlag.READONLY]))
    .orderBy(asc(settings.key));
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}
