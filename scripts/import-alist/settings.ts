// Planning settings: the site's settings AList holds, validated as the settings save validates
// them (default_role against the roles as the import leaves them); those that describe AList's
// own server (NOT_CARRIED) stay behind.
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "../../src/auth/roles.ts";
import { settingDefinitionByKey, SettingFlag } from "../../src/db/settings.ts";
import { settingChanges } from "../../src/features/settings/validate.ts";
import { ApiError } from "../../src/http/errors.ts";
import type { AListSource } from "./source.ts";
import type { TargetState, PlannedWrite, TableReport, IdMap } from "./types.ts";
import { text, int } from "./values.ts";

/** Settings AList keeps for itself, or that describe its own server, not the site. */
const NOT_CARRIED: Record<string, string> = {
  version: "Gatehouse reports its own compatible version",
  index_progress: "AList's search index state; Gatehouse builds its own",
};

export function planSettings(
  source: AListSource,
  target: TargetState,
  roleIds: IdMap,
  report: TableReport,
  out: PlannedWrite[],
) {
  const stored = new Map(target.settings.map((s) => [s.key, s.value]));
  // default_role is checked against the roles as they will be after this import.
  const roles = [...new Set([...roleIds.values()].filter((id): id is number => id !== null))].map((id) => ({
    id,
    name: `#${id}`,
  }));
  const unknown: string[] = [];
  for (const row of source.tables.settings) {
    const key = text(row.key);
    let value = text(row.value);
    const definition = settingDefinitionByKey.get(key);
    if (!definition) {
      unknown.push(key);
      continue;
    }
    if (NOT_CARRIED[key]) {
      report.skipped.push({ row: key, reason: NOT_CARRIED[key]! });
      continue;
    }
    if (definition.flag === SettingFlag.READONLY) {
      report.skipped.push({ row: key, reason: "read-only" });
      continue;
    }
    let asSaved = value;
    if (key === "default_role") {
      const mapped = roleIds.get(int(value, NaN));
      if (mapped === null || mapped === undefined) {
        report.refused.push({ row: key, reason: `role ${value} was not imported` });
        continue;
      }
      value = String(mapped);
      asSaved = `#${mapped}`;
      if (stored.get(key) !== value && (mapped === GUEST_ROLE_ID || mapped === ADMIN_ROLE_ID)) {
        report.skipped.push({ row: key, reason: "AList's default role is its guest role; Gatehouse's choice is kept" });
        continue;
      }
    }
    if (stored.get(key) === value) {
      report.unchanged.push(key);
      continue;
    }
    try {
      const [change] = settingChanges([{ key, value: asSaved }], stored, roles);
      if (!change) report.unchanged.push(key);
      else {
        out.push({ kind: "update", table: "settings", id: key, values: { value: change.value } });
        report.replaced.push(key);
      }
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      report.refused.push({ row: key, reason: error.message.replace(`${key}: `, "") });
    }
  }
  if (unknown.length > 0) report.notes.push(`settings Gatehouse does not know, not imported: ${unknown.join(", ")}`);
}
