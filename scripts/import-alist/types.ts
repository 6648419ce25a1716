// What an AList import plans over: the target's current rows (read by apply.ts), the writes a plan
// makes, grouped into the batches apply.ts runs, and the report of each table.
import type { PermissionScope } from "../../src/db/schema.ts";
import type { StorageRow } from "../../src/features/storages/wire.ts";

// ---- the target's current state -------------------------------------------------------------

export interface TargetUser {
  id: number;
  username: string;
  passwordHash: string;
  passwordChangedAt: number;
  basePath: string;
  roleIds: number[];
  disabled: boolean;
  permission: number;
  otpSecret: string | null;
  ssoId: string;
}
export interface TargetRole {
  id: number;
  name: string;
  description: string;
  isDefault: boolean;
  permissionScopes: PermissionScope[];
}
interface TargetMeta {
  id: number;
  path: string;
  password: string;
  passwordSub: boolean;
  write: boolean;
  writeSub: boolean;
  hide: string;
  hideSub: boolean;
  readme: string;
  readmeSub: boolean;
  header: string;
  headerSub: boolean;
}
export interface TargetState {
  users: TargetUser[];
  roles: TargetRole[];
  storages: StorageRow[];
  metas: TargetMeta[];
  settings: { key: string; value: string }[];
  sshKeys: { id: number; userId: number; title: string; fingerprint: string }[];
}

// ---- the plan ----------------------------------------------------------------------------------

export type TargetTable = "users" | "roles" | "storages" | "metas" | "settings" | "sshPublicKeys";

/** One write: an insert, or an update of the row whose primary key is `id` (`key` for settings). */
export type PlannedWrite =
  | { kind: "insert"; table: TargetTable; values: Record<string, unknown> }
  | { kind: "update"; table: TargetTable; id: number | string; values: Record<string, unknown> }
  /** Only one role is the default one: the others lose the flag when an imported role takes it. */
  | { kind: "clearDefaultRoles"; except: number };

/** Table groups, each written in one all-or-nothing batch, in this order. */
export const GROUPS = ["identity", "storages", "metas", "settings"] as const;
export type Group = (typeof GROUPS)[number];

export interface TableReport {
  /** New rows. */
  imported: string[];
  /** Existing rows overwritten (--replace, or Gatehouse's untouched admin/guest taking AList's). */
  replaced: string[];
  /** Already in the target exactly as they would be imported. */
  unchanged: string[];
  skipped: { row: string; reason: string }[];
  refused: { row: string; reason: string }[];
  notes: string[];
}

export type ReportTable = "roles" | "users" | "sshKeys" | "storages" | "metas" | "settings";
export const REPORT_TABLES: readonly ReportTable[] = ["roles", "users", "sshKeys", "storages", "metas", "settings"];

export interface ImportPlan {
  writes: Record<Group, PlannedWrite[]>;
  report: Record<ReportTable, TableReport>;
}

export interface PlanOptions {
  replace: boolean;
  /** Keys sealing 2FA secrets, the first seals (env.ts otpSealingKeys); null when none is configured. */
  otpKeys: Uint8Array[] | null;
  nowMs: number;
}

export const OTP_KEY_MISSING =
  "its 2FA secret needs OTP_ENCRYPTION_KEY or JWT_SECRET to be sealed; set one (as the Worker has it) and run again";

/** AList role id to the Gatehouse role id its users get; a refused role maps to null. */
export type IdMap = Map<number, number | null>;
