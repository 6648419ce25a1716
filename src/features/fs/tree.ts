// The mount tree (AList v3.58.0 internal/op/storage.go:356-383): which storage serves a full path
// (longest match), over the storage rows a request read. The virtual folders are computed in SQL
// (store.ts).
import type { storages } from "../../db/schema.ts";
import { isWithin } from "./path.ts";

export type StorageRow = typeof storages.$inferSelect;

export interface Resolved {
  storage: StorageRow;
  /** The path inside the storage: the full path without the mount path, cleaned. */
  actualPath: string;
}

/** The storage with the longest mount path holding `path`, as AList's longest match. Disabled ones are invisible. */
export function resolveStorage(rows: readonly StorageRow[], path: string): Resolved | null {
  let best: StorageRow | undefined;
  for (const row of rows) {
    if (row.disabled || !isWithin(path, row.mountPath)) continue;
    if (!best || row.mountPath.length > best.mountPath.length) best = row;
  }
  if (!best) return null;
  const rest = best.mountPath === "/" ? path : path.slice(best.mountPath.length);
  return { storage: best, actualPath: rest === "" ? "/" : rest };
}

/** A folder made by the mount paths below a path (their first segment after it). */
export interface VirtualFolder {
  name: string;
  modified: Date;
}
