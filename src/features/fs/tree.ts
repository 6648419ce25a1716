// The mount tree (reference §2.3): which storage serves a full path, and the virtual folders
// that mount paths below a path make. Works on the storage rows one request read.
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

export interface VirtualFolder {
  name: string;
  modified: Date;
}

/**
 * One folder per first segment of the mount paths strictly below `path`, in AList's order
 * (storage `order`, then mount path), each name once.
 */
export function virtualFolders(rows: readonly StorageRow[], path: string): VirtualFolder[] {
  const below = rows
    .filter((row) => !row.disabled && row.mountPath !== path && isWithin(row.mountPath, path))
    .sort((a, b) => a.order - b.order || (a.mountPath < b.mountPath ? -1 : a.mountPath > b.mountPath ? 1 : 0));
  const seen = new Map<string, VirtualFolder>();
  const offset = path === "/" ? 1 : path.length + 1;
  for (const row of below) {
    const name = row.mountPath.slice(offset).split("/")[0]!;
    if (!seen.has(name)) seen.set(name, { name, modified: new Date(row.modifiedAtMs) });
  }
  return [...seen.values()];
}
