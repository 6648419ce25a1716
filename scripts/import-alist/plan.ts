// Planning an AList import: AList's rows and the target's current rows in, the writes to make and
// a report out. No I/O here (apply.ts writes, main.ts reads), so every decision is unit-testable
// and the same code runs in Node and in workerd.
import { alistStoredHash, hashStaticHash, staticHash } from "../../src/auth/password.ts";
import { open, seal } from "../../src/features/two-factor/secret-box.ts";
import { normaliseSecret } from "../../src/features/two-factor/totp.ts";
import type { PermissionScope } from "../../src/db/schema.ts";
import { ADMIN_ROLE_ID, ALL_PERMISSIONS, GUEST_ROLE_ID } from "../../src/auth/roles.ts";
import { settingDefinitionByKey, SettingFlag } from "../../src/db/settings.ts";
import { driverNames, findDriver } from "../../src/drivers/index.ts";
import { settingChanges } from "../../src/features/settings/validate.ts";
import { InvalidKeyError, parsePublicKey } from "../../src/features/sshkeys/parse.ts";
import { StorageBody, storageValues, type StorageRow } from "../../src/features/storages/wire.ts";
import { ApiError } from "../../src/http/errors.ts";
import { isWellFormedText } from "../../src/http/text.ts";
import { cleanPath } from "../../src/lib/path.ts";
import type { AListSource, SourceRow, SourceTable } from "./source.ts";

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
export interface TargetMeta {
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

export const OTP_KEY_MISSING = "its 2FA secret needs OTP_ENCRYPTION_KEY or JWT_SECRET to be sealed; set one (as the Worker has it) and run again";

const emptyReport = (): TableReport => ({ imported: [], replaced: [], unchanged: [], skipped: [], refused: [], notes: [] });

// ---- reading AList's values --------------------------------------------------------------------

const text = (value: unknown): string => (value === null || value === undefined ? "" : typeof value === "string" ? value : String(value));
/** GORM on SQLite stores bools as 0/1; older rows and other drivers may hold text. */
const bool = (value: unknown, fallback = false): boolean => {
  if (value === null || value === undefined) return fallback;
  if (typeof value === "boolean") return value;
  if (typeof value === "number" || typeof value === "bigint") return Number(value) !== 0;
  return ["1", "t", "true"].includes(String(value).toLowerCase());
};
const int = (value: unknown, fallback = 0): number => {
  const n = typeof value === "bigint" ? Number(value) : typeof value === "string" && value.trim() !== "" ? Number(value) : typeof value === "number" ? value : NaN;
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
};
/** GORM writes times as `2024-05-01 10:20:30.123456789+00:00`; a unix number is taken as is. */
function timeMs(value: unknown, fallback: number): number {
  if (typeof value === "number" || typeof value === "bigint") return Number(value) > 1e11 ? Number(value) : Number(value) * 1000;
  const raw = text(value).trim();
  if (raw === "") return fallback;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?/.exec(raw);
  if (!match) return fallback;
  const fraction = match[3] ? match[3].slice(0, 4) : "";
  const parsed = Date.parse(`${match[1]}T${match[2]}${fraction}${match[4] ?? "Z"}`);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

function rowName(table: SourceTable, row: SourceRow): string {
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

class Refusal extends Error {}
const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

function checkName(label: string, value: string, max: number): string {
  const trimmed = value.trim();
  if (trimmed === "") refuse(`${label} is empty`);
  if (trimmed.length > max) refuse(`${label} is longer than ${max} characters`);
  if (!isWellFormedText(trimmed)) refuse(`${label} contains control characters or unpaired surrogates`);
  return trimmed;
}

function checkPath(label: string, value: string): string {
  if (value.length > 1024) refuse(`${label} is longer than 1024 characters`);
  if (!isWellFormedText(value)) refuse(`${label} contains control characters or unpaired surrogates`);
  return cleanPath(value);
}

function checkPermission(label: string, value: unknown): number {
  const n = int(value, NaN);
  if (!Number.isInteger(n) || n < 0 || n > ALL_PERMISSIONS) refuse(`${label} ${text(value)} is outside 0 to ${ALL_PERMISSIONS} (AList v3.58's bits)`);
  return n;
}

/** `raw_permission`: empty means no scopes; otherwise a JSON array of {path, permission}. */
function parseScopes(raw: string): PermissionScope[] {
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
    return { path: checkPath(`permission scope ${i} path`, scope.path), permission: checkPermission(`permission scope ${i} permission`, scope.permission ?? 0) };
  });
}

/** A user's `role`: a JSON array of ids (v3.46+), or a single number (older AList). */
function parseRoleList(raw: unknown): number[] {
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
  if (!Array.isArray(parsed) || !parsed.every((id) => Number.isInteger(id))) return refuse("role list is not a JSON array of role ids");
  return [...new Set(parsed as number[])];
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

// ---- the planner -------------------------------------------------------------------------------

export async function planImport(source: AListSource, target: TargetState, options: PlanOptions): Promise<ImportPlan> {
  const report = Object.fromEntries(REPORT_TABLES.map((t) => [t, emptyReport()])) as Record<ReportTable, TableReport>;
  const writes: Record<Group, PlannedWrite[]> = { identity: [], storages: [], metas: [], settings: [] };
  const sourceToReport: Record<SourceTable, ReportTable> = { users: "users", roles: "roles", storages: "storages", metas: "metas", settings: "settings", sshKeys: "sshKeys" };
  for (const [table, columns] of Object.entries(source.unknownColumns) as [SourceTable, string[]][]) {
    report[sourceToReport[table]].notes.push(`columns unknown to AList v3.58, not imported: ${columns.join(", ")}`);
  }
  for (const [table, columns] of Object.entries(source.missingColumns) as [SourceTable, string[]][]) {
    report[sourceToReport[table]].notes.push(`columns missing from this file (an older AList), Gatehouse's defaults used: ${columns.join(", ")}`);
  }

  const roleIdMap = planRoles(source, target, options, report.roles, writes.identity);
  const userIdMap = await planUsers(source, target, options, roleIdMap, report.users, writes.identity);
  await planSshKeys(source, target, options, userIdMap, report.sshKeys, writes.identity);
  planStorages(source, target, options, report.storages, writes.storages);
  planMetas(source, target, options, report.metas, writes.metas);
  planSettings(source, target, roleIdMap, report.settings, writes.settings);
  return { writes, report };
}

/** AList role id to the Gatehouse role id its users get; a refused role maps to null. */
type IdMap = Map<number, number | null>;

function planRoles(source: AListSource, target: TargetState, options: PlanOptions, report: TableReport, out: PlannedWrite[]): IdMap {
  const map: IdMap = new Map([
    [GUEST_ROLE_ID, GUEST_ROLE_ID],
    [ADMIN_ROLE_ID, ADMIN_ROLE_ID],
  ]);
  let nextId = Math.max(ADMIN_ROLE_ID, ...target.roles.map((r) => r.id)) + 1;
  const byName = new Map(target.roles.map((r) => [r.name, r]));
  const namesTaken = new Set<string>();
  for (const row of source.tables.roles) {
    const name = rowName("roles", row);
    const id = int(row.id, NaN);
    try {
      if (!Number.isInteger(id)) refuse("no id");
      const roleName = checkName("name", text(row.name), 255);
      const description = text(row.description);
      if (description.length > 1024) refuse("description is longer than 1024 characters");
      const scopes = parseScopes(text(row.raw_permission));
      const isDefault = bool(row.default);
      if (id === ADMIN_ROLE_ID) {
        report.unchanged.push(`${name} is Gatehouse's admin role (all permissions, as AList forces)`);
        continue;
      }
      if (id === GUEST_ROLE_ID) {
        // The guest role's scopes are what anonymous visitors may do: they come along.
        const current = target.roles.find((r) => r.id === GUEST_ROLE_ID);
        const values = { description, permissionScopes: scopes };
        if (current && current.description === description && sameJson(current.permissionScopes, scopes)) report.unchanged.push(`${name} (Gatehouse's guest role)`);
        else if (!current || options.replace || isSeedGuestRole(current)) {
          out.push({ kind: "update", table: "roles", id: GUEST_ROLE_ID, values });
          report.replaced.push(`${name} onto Gatehouse's guest role`);
        } else report.skipped.push({ row: name, reason: "Gatehouse's guest role was changed already; --replace takes AList's scopes" });
        continue;
      }
      if (namesTaken.has(roleName)) refuse(`another AList role is already named ${JSON.stringify(roleName)}`);
      namesTaken.add(roleName);
      const existing = byName.get(roleName);
      if (existing && (existing.id === ADMIN_ROLE_ID || existing.id === GUEST_ROLE_ID)) {
        refuse(`the name belongs to Gatehouse's built-in ${existing.id === ADMIN_ROLE_ID ? "admin" : "guest"} role`);
      }
      const values = { name: roleName, description, isDefault, permissionScopes: scopes };
      if (existing) {
        map.set(id, existing.id);
        if (existing.description === description && existing.isDefault === isDefault && sameJson(existing.permissionScopes, scopes)) {
          report.unchanged.push(name);
        } else if (options.replace) {
          out.push({ kind: "update", table: "roles", id: existing.id, values });
          if (isDefault) out.push({ kind: "clearDefaultRoles", except: existing.id });
          report.replaced.push(name);
        } else {
          report.skipped.push({ row: name, reason: `a role of that name exists (id ${existing.id}); its users get that role; --replace takes AList's scopes` });
        }
        continue;
      }
      const newId = nextId++;
      map.set(id, newId);
      out.push({ kind: "insert", table: "roles", values: { id: newId, ...values } });
      if (isDefault) out.push({ kind: "clearDefaultRoles", except: newId });
      report.imported.push(id === newId ? name : `${name} as id ${newId}`);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      if (Number.isInteger(id)) map.set(id, null);
      report.refused.push({ row: name, reason: error.message });
    }
  }
  return map;
}

const isSeedGuestRole = (role: TargetRole) => sameJson(role.permissionScopes, [{ path: "/", permission: 0 }]);

/** AList user id to the Gatehouse user id its SSH keys go to; null when the user was not taken. */
async function planUsers(source: AListSource, target: TargetState, options: PlanOptions, roleIds: IdMap, report: TableReport, out: PlannedWrite[]): Promise<Map<number, number | null>> {
  const map = new Map<number, number | null>();
  let nextId = Math.max(0, ...target.users.map((u) => u.id)) + 1;
  const byName = new Map(target.users.map((u) => [u.username, u]));
  const holder = (roleId: number) => target.users.find((u) => u.roleIds.includes(roleId));
  const namesTaken = new Set<string>();
  let adminSeen = false;
  let guestSeen = false;
  const authnUsers: string[] = [];
  for (const row of source.tables.users) {
    const name = rowName("users", row);
    const id = int(row.id, NaN);
    map.set(id, null);
    try {
      if (!Number.isInteger(id)) refuse("no id");
      const username = checkName("username", text(row.username), 255);
      if (namesTaken.has(username)) refuse(`another AList user is already named ${JSON.stringify(username)}`);
      namesTaken.add(username);
      const aListRoles = parseRoleList(row.role);
      const kind = aListRoles.includes(ADMIN_ROLE_ID) ? "admin" : aListRoles.includes(GUEST_ROLE_ID) ? "guest" : "user";
      const basePath = checkPath("base path", text(row.base_path) || "/");
      const permission = kind === "admin" ? ALL_PERMISSIONS : checkPermission("permission", row.permission ?? 0);
      const ssoId = text(row.sso_id);
      if (ssoId.length > 255) refuse("sso_id is longer than 255 characters");
      const mappedRoles: number[] = [];
      if (kind === "user") {
        for (const roleId of aListRoles) {
          if (!roleIds.has(roleId)) {
            if (source.tables.roles.length === 0 && roleId !== GUEST_ROLE_ID && roleId !== ADMIN_ROLE_ID) continue; // pre-roles AList: 0/3 = general
            refuse(`role ${roleId} does not exist in AList's roles`);
          }
          const mapped = roleIds.get(roleId);
          if (mapped === null || mapped === undefined) refuse(`its role ${roleId} was refused`);
          mappedRoles.push(mapped!);
        }
      }
      const passwordHash = await storedPassword(row);
      const otpPlain = text(row.otp_secret).trim();
      let otpNormalised: string | null = null;
      if (otpPlain !== "") {
        otpNormalised = normaliseSecret(otpPlain);
        if (!/^[A-Z2-7]+$/.test(otpNormalised)) refuse("its 2FA secret is not base32");
        if (!options.otpKeys) refuse(OTP_KEY_MISSING);
      }
      if (text(row.authn).trim() !== "" && text(row.authn).trim() !== "[]" && text(row.authn).trim() !== "null") authnUsers.push(username);

      const fields = { username, basePath, disabled: kind === "admin" ? false : bool(row.disabled), permission, ssoId };
      const pwdTs = int(row.pwd_ts);

      if (kind === "admin" || kind === "guest") {
        if (kind === "admin" ? adminSeen : guestSeen) refuse(`a second AList ${kind}; only the first maps onto Gatehouse's ${kind}`);
        if (kind === "admin") adminSeen = true;
        else guestSeen = true;
        const roleId = kind === "admin" ? ADMIN_ROLE_ID : GUEST_ROLE_ID;
        const own = holder(roleId);
        const clash = byName.get(username);
        if (clash && clash !== own) refuse(`Gatehouse user ${JSON.stringify(username)} (id ${clash.id}) is not its ${kind}; rename one of them first`);
        if (!own) {
          refuse(`the target has no ${kind}; run npm run db:migrate first`);
          continue;
        }
        map.set(id, own.id);
        const values = { ...fields, ...(kind === "admin" ? { basePath: "/" } : {}) };
        // The guest never signs in: its password stays Gatehouse's.
        const credentials = kind === "admin" ? await credentialFields(own, passwordHash, pwdTs, otpNormalised, options) : {};
        if (sameUser(own, values) && Object.keys(credentials).length === 0) {
          report.unchanged.push(`${name} (Gatehouse's ${kind})`);
        } else if (options.replace || untouched(own, kind)) {
          out.push({ kind: "update", table: "users", id: own.id, values: { ...values, ...credentials } });
          report.replaced.push(`${name} onto Gatehouse's ${kind}${own.username === username ? "" : ` (was ${JSON.stringify(own.username)})`}`);
        } else {
          map.set(id, null);
          report.skipped.push({ row: name, reason: `Gatehouse's ${kind} ${JSON.stringify(own.username)} was changed already; --replace takes AList's` });
        }
        continue;
      }

      const existing = byName.get(username);
      const userValues = { ...fields, roleIds: mappedRoles };
      if (existing) {
        if (existing.roleIds.includes(ADMIN_ROLE_ID) || existing.roleIds.includes(GUEST_ROLE_ID)) {
          refuse(`the username belongs to Gatehouse's ${existing.roleIds.includes(ADMIN_ROLE_ID) ? "admin" : "guest"}`);
        }
        const credentials = await credentialFields(existing, passwordHash, pwdTs, otpNormalised, options);
        if (existing.passwordHash === passwordHash && sameUser(existing, userValues) && Object.keys(credentials).length === 0) {
          map.set(id, existing.id);
          report.unchanged.push(name);
        } else if (options.replace) {
          map.set(id, existing.id);
          out.push({ kind: "update", table: "users", id: existing.id, values: { ...userValues, ...credentials } });
          report.replaced.push(name);
        } else {
          report.skipped.push({ row: name, reason: `username exists in Gatehouse (id ${existing.id}); --replace takes AList's` });
        }
        continue;
      }
      const newId = nextId++;
      map.set(id, newId);
      const otpSecret = otpNormalised === null ? null : await seal(options.otpKeys!, otpNormalised);
      out.push({ kind: "insert", table: "users", values: { id: newId, ...userValues, passwordHash, passwordChangedAt: pwdTs, otpSecret, otpLastStep: 0 } });
      report.imported.push(newId === id ? name : `${name} as id ${newId}`);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      map.set(id, null);
      report.refused.push({ row: name, reason: error.message });
    }
  }
  if (authnUsers.length > 0) report.notes.push(`WebAuthn credentials are not carried over (Gatehouse has no WebAuthn sign-in): ${authnUsers.join(", ")}`);
  return map;
}

/** The imported password as Gatehouse stores it (src/auth/password.ts). */
async function storedPassword(row: SourceRow): Promise<string> {
  const hash = text(row.pwd_hash).trim().toLowerCase();
  const salt = text(row.salt);
  if (hash !== "") {
    if (!/^[0-9a-f]{64}$/.test(hash)) refuse("pwd_hash is not a hex SHA-256");
    if (salt.includes("$")) refuse("salt contains `$`");
    return alistStoredHash(salt, hash);
  }
  // AList before v3.24 kept the plain password; it hashes it at its next start, and so do we.
  const plain = text(row.password);
  if (plain !== "") return hashStaticHash(await staticHash(plain));
  return refuse("no password hash (pwd_hash and password are empty)");
}

/** Password and 2FA columns that differ from `current`; an empty object when they match. */
async function credentialFields(current: TargetUser, passwordHash: string, pwdTs: number, otp: string | null, options: PlanOptions): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  if (current.passwordHash !== passwordHash) {
    fields.passwordHash = passwordHash;
    // A new password: tokens issued before it die (their pwd_ts no longer matches).
    fields.passwordChangedAt = Math.max(pwdTs, current.passwordChangedAt + 1);
  }
  const currentOtp = current.otpSecret === null || !options.otpKeys ? null : await open(options.otpKeys, current.otpSecret);
  if (otp === null ? current.otpSecret !== null : currentOtp !== otp) {
    fields.otpSecret = otp === null ? null : await seal(options.otpKeys!, otp);
    fields.otpLastStep = 0;
  }
  return fields;
}

function sameUser(user: TargetUser, values: { username: string; basePath: string; disabled: boolean; permission: number; ssoId: string; roleIds?: number[] }): boolean {
  return (
    user.username === values.username &&
    user.basePath === values.basePath &&
    user.disabled === values.disabled &&
    user.permission === values.permission &&
    user.ssoId === values.ssoId &&
    (values.roleIds === undefined || sameJson(user.roleIds, values.roleIds))
  );
}

/**
 * Gatehouse's admin or guest as the first run left it: the admin's password never changed
 * (pwd_ts 0, as seeded), the guest still disabled at `/` with no permissions. Such an account
 * takes AList's without --replace: nothing an operator chose is lost.
 */
function untouched(user: TargetUser, kind: "admin" | "guest"): boolean {
  if (kind === "admin") return user.passwordChangedAt === 0 && user.passwordHash.startsWith("pbkdf2-sha256$") && user.otpSecret === null;
  return user.disabled && user.basePath === "/" && user.permission === 0;
}

async function planSshKeys(source: AListSource, target: TargetState, options: PlanOptions, users: Map<number, number | null>, report: TableReport, out: PlannedWrite[]) {
  const userNames = new Map(source.tables.users.map((u) => [int(u.id, NaN), text(u.username)]));
  for (const row of source.tables.sshKeys) {
    const owner = int(row.user_id, NaN);
    const name = `${rowName("sshKeys", row)} of ${JSON.stringify(userNames.get(owner) ?? `user #${text(row.user_id)}`)}`;
    try {
      if (!users.has(owner)) refuse(`user ${text(row.user_id)} does not exist in AList's users`);
      const userId = users.get(owner);
      if (userId === null || userId === undefined) {
        report.skipped.push({ row: name, reason: "its user was not imported" });
        continue;
      }
      const title = checkName("title", text(row.title), 255);
      const keyText = text(row.key_str).trim();
      let fingerprint: string;
      try {
        fingerprint = (await parsePublicKey(keyText)).fingerprint;
      } catch (error) {
        if (error instanceof InvalidKeyError) return void report.refused.push({ row: name, reason: `key: ${error.message}` });
        throw error;
      }
      const values = {
        userId,
        title,
        fingerprint,
        keyText,
        addedAt: Math.floor(timeMs(row.added_time, options.nowMs) / 1000),
        lastUsedAt: Math.floor(timeMs(row.last_used_time, options.nowMs) / 1000),
      };
      const existing = target.sshKeys.find((k) => k.userId === userId && k.title === title);
      if (existing) {
        if (existing.fingerprint === fingerprint) report.unchanged.push(name);
        else if (options.replace) {
          out.push({ kind: "update", table: "sshPublicKeys", id: existing.id, values });
          report.replaced.push(name);
        } else report.skipped.push({ row: name, reason: "the user has another key with this title; --replace takes AList's" });
        continue;
      }
      out.push({ kind: "insert", table: "sshPublicKeys", values });
      report.imported.push(name);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      report.refused.push({ row: name, reason: error.message });
    }
  }
}

function planStorages(source: AListSource, target: TargetState, options: PlanOptions, report: TableReport, out: PlannedWrite[]) {
  const byPath = new Map(target.storages.map((s) => [s.mountPath, s]));
  const pathsTaken = new Set<string>();
  for (const row of source.tables.storages) {
    const name = rowName("storages", row);
    try {
      const driverName = text(row.driver);
      const driver = findDriver(driverName);
      if (!driver) refuse(`driver ${JSON.stringify(driverName)} is not one Gatehouse has (${driverNames().join(", ")})`);
      const addition = text(row.addition) || "{}";
      try {
        const parsed: unknown = JSON.parse(addition);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) refuse("addition is not a JSON object");
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
      // Unchecked until Gatehouse checks it (load_all, or enable): AList's status was AList's server's.
      const row_ = { ...values, disabled: body.disabled, status: body.disabled ? "disabled" : "" };
      const existing = byPath.get(values.mountPath);
      if (existing) {
        const same = (Object.keys(values) as (keyof typeof values)[]).every((k) => k === "modifiedAtMs" || existing[k] === values[k]) && existing.disabled === body.disabled;
        if (same) report.unchanged.push(name);
        else if (options.replace) {
          out.push({ kind: "update", table: "storages", id: existing.id, values: row_ });
          report.replaced.push(name);
        } else report.skipped.push({ row: name, reason: `a storage is mounted at ${values.mountPath} (id ${existing.id}); --replace takes AList's` });
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

function planMetas(source: AListSource, target: TargetState, options: PlanOptions, report: TableReport, out: PlannedWrite[]) {
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
        if ((Object.keys(values) as (keyof typeof values)[]).every((k) => existing[k] === values[k])) report.unchanged.push(name);
        else if (options.replace) {
          out.push({ kind: "update", table: "metas", id: existing.id, values });
          report.replaced.push(name);
        } else report.skipped.push({ row: name, reason: `a meta exists on ${path} (id ${existing.id}); --replace takes AList's` });
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

/** Settings AList keeps for itself, or that describe its own server, not the site. */
const NOT_CARRIED: Record<string, string> = {
  version: "Gatehouse reports its own compatible version",
  index_progress: "AList's search index state; Gatehouse builds its own",
};

function planSettings(source: AListSource, target: TargetState, roleIds: IdMap, report: TableReport, out: PlannedWrite[]) {
  const stored = new Map(target.settings.map((s) => [s.key, s.value]));
  // default_role is checked against the roles as they will be after this import.
  const roles = [...new Set([...roleIds.values()].filter((id): id is number => id !== null))].map((id) => ({ id, name: `#${id}` }));
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
