// Planning metas: each AList meta by its path, imported, replaced or left as it is.
import type { AListSource } from "./source.ts";
import type { TargetState, PlannedWrite, TableReport, PlanOptions } from "./types.ts";
import { text, bool, rowName, refuse, checkPath, Refusal } from "./values.ts";

export function planMetas(
  source: AListSource,
  target: TargetState,
  options: PlanOptions,
  report: TableReport,
  out: PlannedWrite[],
) {
  const byPath = new Map(target.metas.map((m) => [m.path, m]));
  const pathsTaken = new Set<string>();
  for (const row of source.tables.metas) {
    const name = rowName("metas", row);
    try {
      if (text(row.path).trim() === "") refuse("path is empty");
      const path = checkPath("path", text(row.path));
      if (pathsTaken.has(path)) refuse(`another AList meta is on ${path}`);
      pathsTaken.add(path);
      const values = {
        path,
        password: text(row.password),
        passwordSub: bool(row.p_sub),
        write: bool(row.write),
        writeSub: bool(row.w_sub),
        hide: text(row.hide),
        hideSub: bool(row.h_sub),
        readme: text(row.readme),
        readmeSub: bool(row.r_sub),
        header: text(row.header),
        headerSub: bool(row.header_sub),
      };
      const existing = byPath.get(path);
      if (existing) {
        if ((Object.keys(values) as (keyof typeof values)[]).every((k) => existing[k] === values[k]))
          report.unchanged.push(name);
        else if (options.replace) {
          out.push({ kind: "update", table: "metas", id: existing.id, values });
          report.replaced.push(name);
        } else
          report.skipped.push({
            row: name,
            reason: `a meta exists on ${path} (id ${existing.id}); --replace takes AList's`,
          });
        continue;
      }
      out.push({ kind: "insert", table: "metas", values });
      report.imported.push(name);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      report.refused.push({ row: name, reason: error.message });
    }
  }
}
