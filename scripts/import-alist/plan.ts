// Planning an AList import: AList's rows and the target's current rows in, the writes to make and
// a report out. No I/O here (apply.ts writes, main.ts reads), so every decision is unit-testable
// and the same code runs in Node and in workerd.
import type { AListSource, SourceTable } from "./source.ts";
import {
  REPORT_TABLES,
  type TargetState,
  type PlannedWrite,
  type Group,
  type TableReport,
  type ReportTable,
  type ImportPlan,
  type PlanOptions,
} from "./types.ts";
import { planRoles, planUsers, planSshKeys } from "./identity.ts";
import { planStorages } from "./storages.ts";
import { planMetas } from "./metas.ts";
import { planSettings } from "./settings.ts";

const emptyReport = (): TableReport => ({
  imported: [],
  replaced: [],
  unchanged: [],
  skipped: [],
  refused: [],
  notes: [],
});

export async function planImport(source: AListSource, target: TargetState, options: PlanOptions): Promise<ImportPlan> {
  const report = Object.fromEntries(REPORT_TABLES.map((t) => [t, emptyReport()])) as Record<ReportTable, TableReport>;
  const writes: Record<Group, PlannedWrite[]> = { identity: [], storages: [], metas: [], settings: [] };
  const sourceToReport: Record<SourceTable, ReportTable> = {
    users: "users",
    roles: "roles",
    storages: "storages",
    metas: "metas",
    settings: "settings",
    sshKeys: "sshKeys",
  };
  for (const [table, columns] of Object.entries(source.unknownColumns) as [SourceTable, string[]][]) {
    report[sourceToReport[table]].notes.push(`columns unknown to AList v3.58, not imported: ${columns.join(", ")}`);
  }
  for (const [table, columns] of Object.entries(source.missingColumns) as [SourceTable, string[]][]) {
    report[sourceToReport[table]].notes.push(
      `columns missing from this file (an older AList), Gatehouse's defaults used: ${columns.join(", ")}`,
    );
  }

  const roleIdMap = planRoles(source, target, options, report.roles, writes.identity);
  const userIdMap = await planUsers(source, target, options, roleIdMap, report.users, writes.identity);
  await planSshKeys(source, target, options, userIdMap, report.sshKeys, writes.identity);
  planStorages(source, target, options, report.storages, writes.storages);
  planMetas(source, target, options, report.metas, writes.metas);
  planSettings(source, target, roleIdMap, report.settings, writes.settings);
  return { writes, report };
}
