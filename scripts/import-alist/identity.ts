// Planning roles, users and their SSH public keys: the identity group, written in one batch. A
// role maps AList's id to the Gatehouse role its users get; a user's password and 2FA secret are
// carried as Gatehouse stores them; the seeded admin and guest are matched, not duplicated.
import { alistStoredHash, hashStaticHash, staticHash } from "../../src/auth/password.ts";
import { open, seal } from "../../src/features/two-factor/secret-box.ts";
import { normaliseSecret } from "../../src/features/two-factor/totp.ts";
import { ADMIN_ROLE_ID, ALL_PERMISSIONS, GUEST_ROLE_ID } from "../../src/auth/roles.ts";
import { InvalidKeyError, parsePublicKey } from "../../src/features/sshkeys/parse.ts";
import type { AListSource, SourceRow } from "./source.ts";
import {
  OTP_KEY_MISSING,
  type TargetUser,
  type TargetRole,
  type TargetState,
  type PlannedWrite,
  type TableReport,
  type PlanOptions,
  type IdMap,
} from "./types.ts";
import {
  text,
  bool,
  int,
  timeMs,
  rowName,
  refuse,
  checkName,
  checkPath,
  checkPermission,
  parseScopes,
  parseRoleList,
  sameJson,
  Refusal,
} from "./values.ts";

export function planRoles(
  source: AListSource,
  target: TargetState,
  options: PlanOptions,
  report: TableReport,
  out: PlannedWrite[],
): IdMap {
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
        if (current && current.description === description && sameJson(current.permissionScopes, scopes))
          report.unchanged.push(`${name} (Gatehouse's guest role)`);
        else if (!current || options.replace || isSeedGuestRole(current)) {
          out.push({ kind: "update", table: "roles", id: GUEST_ROLE_ID, values });
          report.replaced.push(`${name} onto Gatehouse's guest role`);
        } else
          report.skipped.push({
            row: name,
            reason: "Gatehouse's guest role was changed already; --replace takes AList's scopes",
          });
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
        if (
          existing.description === description &&
          existing.isDefault === isDefault &&
          sameJson(existing.permissionScopes, scopes)
        ) {
          report.unchanged.push(name);
        } else if (options.replace) {
          out.push({ kind: "update", table: "roles", id: existing.id, values });
          if (isDefault) out.push({ kind: "clearDefaultRoles", except: existing.id });
          report.replaced.push(name);
        } else {
          report.skipped.push({
            row: name,
            reason: `a role of that name exists (id ${existing.id}); its users get that role; --replace takes AList's scopes`,
          });
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
export async function planUsers(
  source: AListSource,
  target: TargetState,
  options: PlanOptions,
  roleIds: IdMap,
  report: TableReport,
  out: PlannedWrite[],
): Promise<Map<number, number | null>> {
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
      if (text(row.authn).trim() !== "" && text(row.authn).trim() !== "[]" && text(row.authn).trim() !== "null")
        authnUsers.push(username);

      const fields = { username, basePath, disabled: kind === "admin" ? false : bool(row.disabled), permission, ssoId };
      const pwdTs = int(row.pwd_ts);

      if (kind === "admin" || kind === "guest") {
        if (kind === "admin" ? adminSeen : guestSeen)
          refuse(`a second AList ${kind}; only the first maps onto Gatehouse's ${kind}`);
        if (kind === "admin") adminSeen = true;
        else guestSeen = true;
        const roleId = kind === "admin" ? ADMIN_ROLE_ID : GUEST_ROLE_ID;
        const own = holder(roleId);
        const clash = byName.get(username);
        if (clash && clash !== own)
          refuse(
            `Gatehouse user ${JSON.stringify(username)} (id ${clash.id}) is not its ${kind}; rename one of them first`,
          );
        if (!own) {
          refuse(`the target has no ${kind}; run npm run db:migrate first`);
          continue;
        }
        map.set(id, own.id);
        const values = { ...fields, ...(kind === "admin" ? { basePath: "/" } : {}) };
        // The guest never signs in: its password stays Gatehouse's.
        const credentials =
          kind === "admin" ? await credentialFields(own, passwordHash, pwdTs, otpNormalised, options) : {};
        if (sameUser(own, values) && Object.keys(credentials).length === 0) {
          report.unchanged.push(`${name} (Gatehouse's ${kind})`);
        } else if (options.replace || untouched(own, kind)) {
          out.push({ kind: "update", table: "users", id: own.id, values: { ...values, ...credentials } });
          report.replaced.push(
            `${name} onto Gatehouse's ${kind}${own.username === username ? "" : ` (was ${JSON.stringify(own.username)})`}`,
          );
        } else {
          map.set(id, null);
          report.skipped.push({
            row: name,
            reason: `Gatehouse's ${kind} ${JSON.stringify(own.username)} was changed already; --replace takes AList's`,
          });
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
        if (
          existing.passwordHash === passwordHash &&
          sameUser(existing, userValues) &&
          Object.keys(credentials).length === 0
        ) {
          map.set(id, existing.id);
          report.unchanged.push(name);
        } else if (options.replace) {
          map.set(id, existing.id);
          out.push({ kind: "update", table: "users", id: existing.id, values: { ...userValues, ...credentials } });
          report.replaced.push(name);
        } else {
          report.skipped.push({
            row: name,
            reason: `username exists in Gatehouse (id ${existing.id}); --replace takes AList's`,
          });
        }
        continue;
      }
      const newId = nextId++;
      map.set(id, newId);
      const otpSecret = otpNormalised === null ? null : await seal(options.otpKeys!, otpNormalised);
      out.push({
        kind: "insert",
        table: "users",
        values: { id: newId, ...userValues, passwordHash, passwordChangedAt: pwdTs, otpSecret, otpLastStep: 0 },
      });
      report.imported.push(newId === id ? name : `${name} as id ${newId}`);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      map.set(id, null);
      report.refused.push({ row: name, reason: error.message });
    }
  }
  if (authnUsers.length > 0)
    report.notes.push(
      `WebAuthn credentials are not carried over (Gatehouse has no WebAuthn sign-in): ${authnUsers.join(", ")}`,
    );
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
async function credentialFields(
  current: TargetUser,
  passwordHash: string,
  pwdTs: number,
  otp: string | null,
  options: PlanOptions,
): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  if (current.passwordHash !== passwordHash) {
    fields.passwordHash = passwordHash;
    // A new password: tokens issued before it die (their pwd_ts no longer matches).
    fields.passwordChangedAt = Math.max(pwdTs, current.passwordChangedAt + 1);
  }
  const currentOtp =
    current.otpSecret === null || !options.otpKeys ? null : await open(options.otpKeys, current.otpSecret);
  if (otp === null ? current.otpSecret !== null : currentOtp !== otp) {
    fields.otpSecret = otp === null ? null : await seal(options.otpKeys!, otp);
    fields.otpLastStep = 0;
  }
  return fields;
}

function sameUser(
  user: TargetUser,
  values: {
    username: string;
    basePath: string;
    disabled: boolean;
    permission: number;
    ssoId: string;
    roleIds?: number[];
  },
): boolean {
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
  if (kind === "admin")
    return user.passwordChangedAt === 0 && user.passwordHash.startsWith("pbkdf2-sha256$") && user.otpSecret === null;
  return user.disabled && user.basePath === "/" && user.permission === 0;
}

export async function planSshKeys(
  source: AListSource,
  target: TargetState,
  options: PlanOptions,
  users: Map<number, number | null>,
  report: TableReport,
  out: PlannedWrite[],
) {
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
        if (error instanceof InvalidKeyError)
          return void report.refused.push({ row: name, reason: `key: ${error.message}` });
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
        } else
          report.skipped.push({
            row: name,
            reason: "the user has another key with this title; --replace takes AList's",
          });
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
