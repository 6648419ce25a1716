// The import's report, as text: per table, what was (or would be) imported, replaced, left as it
// was, skipped and refused, each row named with the reason.
import { REPORT_TABLES, type ImportPlan, type ReportTable } from "./types.ts";

const TITLES: Record<ReportTable, string> = {
  roles: "Roles",
  users: "Users",
  sshKeys: "SSH public keys",
  storages: "Storages",
  metas: "Metas",
  settings: "Settings",
};

export function formatReport(plan: ImportPlan, dryRun: boolean): string {
  const lines: string[] = [];
  const verb = dryRun ? "would be" : "";
  for (const table of REPORT_TABLES) {
    const r = plan.report[table];
    const replacedWord = table === "settings" ? "updated" : "replaced";
    lines.push(
      `${TITLES[table]}: ${r.imported.length} ${verb ? "to import" : "imported"}, ${r.replaced.length} ${verb ? `to be ${replacedWord}` : replacedWord}, ` +
        `${r.unchanged.length} unchanged, ${r.skipped.length} skipped, ${r.refused.length} refused`,
    );
    for (const row of r.imported) lines.push(`  + ${row}`);
    for (const row of r.replaced) lines.push(`  ~ ${row}`);
    for (const { row, reason } of r.skipped) lines.push(`  - skipped ${row}: ${reason}`);
    for (const { row, reason } of r.refused) lines.push(`  ! refused ${row}: ${reason}`);
    for (const note of r.notes) lines.push(`  note: ${note}`);
  }
  return lines.join("\n");
}

export function countWrites(plan: ImportPlan): number {
  return Object.values(plan.writes).reduce((sum, writes) => sum + writes.length, 0);
}

export function countRefused(plan: ImportPlan): number {
  return REPORT_TABLES.reduce((sum, table) => sum + plan.report[table].refused.length, 0);
}
