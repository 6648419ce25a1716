// Reading AList's values: its columns as GORM on SQLite stores them (text, 0/1 bools, times),
// the names and paths a row carries, checked as Gatehouse's own routes check them, and its
// permission scopes and role lists. A value that cannot be taken refuses its row (refuse).
import type { PermissionScope } from "../../src/db/schema.ts";
import { ALL_PERMISSIONS } from "../../src/auth/roles.ts";
import { isWellFormedText } from "../../src/http/text.ts";
import { cleanPath } from "../../src/lib/path.ts";
import type { SourceRow, SourceTable } from "./source.ts";

export const text = (value: unknown): string =>
  value === null || value === undefined ? "" : typeof value === "string" ? value : String(value);
/** GORM on SQLite stores bools as 0/1; older rows and other drivers may hold text. */
export const bool = (value: unknown, fallback = false): boolean => {
  if (value === null || value === undefined) return fallback;
  if (typeof value === "boolean") return value;
  if (typeof value === "number" || typeof value === "bigint") return Number(value) !== 0;
  return ["1", "t", "true"].includes(String(value).toLowerCase());
};
export const int = (value: unknown, fallback = 0): number => {
  const n =
    typeof value === "bigint"
      ? Number(value)
      : typeof value === "string" && value.trim() !== ""
        ? Number(value)
        : typeof value === "number"
          ? value
          : NaN;
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
};
/** GORM writes times as `2024-05-01 10:20:30.123456789+00:00`; a unix number is taken as is. */
export function timeMs(value: unknown, fallback: number): number {
  if (typeof value === "number" || typeof value === "bigint")
    return Number(value) > 1e11 ? Number(value) : Number(value) * 1000;
  const raw = text(value).trim();
  if (raw === "") return fallback;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?/.exec(raw);
  if (!match) return fallback;
  const fraction = match[3] ? match[3].slice(0, 4) : "";
  const parsed = Date.parse(`${match[1]}T${match[2]}${fraction}${match[4] ?? "Z"}`);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

export function rowName(table: SourceTable, row: SourceRow): string {
  const id = row.id === undefined ? "" : `#${text(row.id)} `;
  switch (table) {
    case "users":
      return `${id}${JSON.stringify(text(row.username))}`;
    case "roles":
      return `${id}${JSON.stringify(text(row.name))}`;
    case "storages":
      return `${id}${JSON.stringify(text(row.mount_path))} (${text(row.driver) || "no driver"})`;
    case "metas":
      return `${id}${JSON.stringify(text(row.path))}`;
    case "settings":
      return text(row.key);
    case "sshKeys":
      return `${id}${JSON.stringify(text(row.title))}`;
  }
}

/** Why a row is not taken: its planner reports the row as refused, with this reason, and goes on. */
export class Refusal extends Error {}
export const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

export function checkName(label: string, value: string, max: number): string {
  const trimmed = value.trim();
  if (trimmed === "") refuse(`${label} is empty`);
  if (trimmed.length > max) refuse(`${label} is longer than ${max} characters`);
  if (!isWellFormedText(trimmed)) refuse(`${label} contains control characters or unpaired surrogates`);
  return trimmed;
}

export function checkPath(label: string, value: string): string {
  if (value.length > 1024) refuse(`${label} is longer than 1024 characters`);
  if (!isWellFormedText(value)) refuse(`${label} contains control characters or unpaired surrogates`);
  return cleanPath(value);
}

export function checkPermission(label: string, value: unknown): number {
  const n = int(value, NaN);
  if (!Number.isInteger(n) || n < 0 || n > ALL_PERMISSIONS)
    refuse(`${label} ${text(value)} is outside 0 to ${ALL_PERMISSIONS} (AList v3.58's bits)`);
  return n;
}

/** `raw_permission`: empty means no scopes; otherwise a JSON array of {path, permission}. */
export function parseScopes(raw: string): PermissionScope[] {
  if (raw.trim() === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return refuse(`permission scopes are not valid JSON: ${JSON.stringify(raw.slice(0, 80))}`);
  }
  if (parsed === null) return [];
  if (!Array.isArray(parsed)) return refuse("permission scopes are not a JSON array");
  if (parsed.length > 256) refuse("more than 256 permission scopes");
  return parsed.map((entry, i) => {
    if (typeof entry !== "object" || entry === null || typeof (entry as { path?: unknown }).path !== "string") {
      return refuse(`permission scope ${i} is not {path, permission}`);
    }
    const scope = entry as { path: string; permission?: unknown };
    return {
      path: checkPath(`permission scope ${i} path`, scope.path),
      permission: checkPermission(`permission scope ${i} permission`, scope.permission ?? 0),
    };
  });
}

/** A user's `role`: a JSON array of ids (v3.46+), or a single number (older AList). */
export function parseRoleList(raw: unknown): number[] {
  if (typeof raw === "number" || typeof raw === "bigint") return Number(raw) === 0 ? [] : [Number(raw)];
  const value = text(raw).trim();
  if (value === "" || value === "null") return [];
  if (/^\d+$/.test(value)) return Number(value) === 0 ? [] : [Number(value)];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return refuse(`role list is not valid JSON: ${JSON.stringify(value.slice(0, 80))}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((id) => Number.isInteger(id)))
    return refuse("role list is not a JSON array of role ids");
  return [...new Set(parsed as number[])];
}

export const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
