// Planning storages: each AList storage checked as the storage routes check a create, under its
// mount path (prefixed when asked), imported, replaced or left as it is.
import { driverNames, findDriver } from "../../src/drivers/index.ts";
import { StorageBody, storageValues } from "../../src/features/storages/wire.ts";
import { ApiError } from "../../src/http/errors.ts";
import type { AListSource } from "./source.ts";
import type { TargetState, PlannedWrite, TableReport, PlanOptions } from "./types.ts";
import { text, bool, int, timeMs, rowName, refuse, Refusal } from "./values.ts";

export function planStorages(
  source: AListSource,
  target: TargetState,
  options: PlanOptions,
  report: TableReport,
  out: PlannedWrite[],
) {
  const byPath = new Map(target.storages.map((s) => [s.mountPath, s]));
  const pathsTaken = new Set<string>();
  for (const row of source.tables.storages) {
    const name = rowName("storages", row);
    try {
      const driverName = text(row.driver);
      const driver = findDriver(driverName);
      if (!driver)
        refuse(`driver ${JSON.stringify(driverName)} is not one Gatehouse has (${driverNames().join(", ")})`);
      const addition = text(row.addition) || "{}";
      try {
        const parsed: unknown = JSON.parse(addition);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
          refuse("addition is not a JSON object");
      } catch (error) {
        if (error instanceof Refusal) throw error;
        refuse(`addition is not valid JSON: ${JSON.stringify(addition.slice(0, 80))}`);
      }
      const body = {
        mount_path: text(row.mount_path),
        order: int(row.order),
        driver: driverName,
        cache_expiration: Math.max(0, int(row.cache_expiration, 30)),
        addition,
        remark: text(row.remark),
        disabled: bool(row.disabled),
        disable_index: bool(row.disable_index),
        enable_sign: bool(row.enable_sign),
        order_by: text(row.order_by),
        order_direction: text(row.order_direction),
        extract_folder: text(row.extract_folder),
        web_proxy: bool(row.web_proxy),
        webdav_policy: text(row.webdav_policy),
        proxy_range: bool(row.proxy_range),
        down_proxy_url: text(row.down_proxy_url),
        // GORM's column default is true (AList v3.58.0 internal/model/storage.go:35).
        down_proxy_sign: bool(row.down_proxy_sign, true),
      };
      const checked = StorageBody.safeParse(body);
      if (!checked.success) refuse(checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
      let values: ReturnType<typeof storageValues>;
      try {
        values = storageValues(checked.data!, driver!, timeMs(row.modified, options.nowMs));
      } catch (error) {
        if (error instanceof ApiError) return void report.refused.push({ row: name, reason: error.message });
        throw error;
      }
      if (pathsTaken.has(values.mountPath)) refuse(`another AList storage is mounted at ${values.mountPath}`);
      pathsTaken.add(values.mountPath);
      // Unchecked until Gatehouse checks it (the storage list, load_all, or enable): AList's status was AList's server's.
      const row_ = { ...values, disabled: body.disabled, status: body.disabled ? "disabled" : "" };
      const existing = byPath.get(values.mountPath);
      if (existing) {
        const same =
          (Object.keys(values) as (keyof typeof values)[]).every(
            (k) => k === "modifiedAtMs" || existing[k] === values[k],
          ) && existing.disabled === body.disabled;
        if (same) report.unchanged.push(name);
        else if (options.replace) {
          out.push({ kind: "update", table: "storages", id: existing.id, values: row_ });
          report.replaced.push(name);
        } else
          report.skipped.push({
            row: name,
            reason: `a storage is mounted at ${values.mountPath} (id ${existing.id}); --replace takes AList's`,
          });
        continue;
      }
      out.push({ kind: "insert", table: "storages", values: row_ });
      report.imported.push(name);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      report.refused.push({ row: name, reason: error.message });
    }
  }
}
