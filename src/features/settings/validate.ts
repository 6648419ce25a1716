// What a setting may be set to (docs/decisions.md D4.9): known keys only, each value checked against its
// definition's type and options, a few keys against their own rule. Metadata always comes from the
// definition, never from the client.
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "../../auth/roles.ts";
import { settingDefinitionByKey, SettingFlag, type SettingDefinition, type SettingType } from "../../db/settings.ts";
import { JWT_SHAPE } from "../../auth/guard.ts";
import { ApiError } from "../../http/errors.ts";
import { NOT_A_DEFAULT_ROLE } from "../roles/messages.ts";
import { DEFAULT_ROLE_NOT_FOUND } from "./messages.ts";
import { MAX_CHUNK_MIB } from "../uploads/rules.ts";

/** Longest value any setting takes (customize_head and iframe_previews are the big ones). */
const MAX_SETTING_VALUE_LENGTH = 65_536;

const PERMANENT_TOKEN_LENGTH = { min: 16, max: 512 } as const;

export interface RoleName {
  id: number;
  name: string;
}

export interface SettingValue {
  key: string;
  value: string;
}

type Rule = (value: string, definition: SettingDefinition) => string | null;

// Plain decimal notation: what the Go side's strconv and the web UI's number inputs read.
const NUMBER = /^-?\d+(\.\d+)?$/;

const typeRules: Record<SettingType, Rule> = {
  number: (value) => (NUMBER.test(value) && Number.isFinite(Number(value)) ? null : "must be a number"),
  bool: (value) => (value === "true" || value === "false" ? null : "must be true or false"),
  // A select may also hold its default (sso_login_platform starts empty: no platform chosen).
  select: (value, definition) =>
    value === definition.value || definition.options.split(",").includes(value)
      ? null
      : `must be one of ${definition.options.split(",").join(", ")}`,
  string: () => null,
  text: () => null,
};

const jsonObject: Rule = (value) => (isObject(parseJson(value)) ? null : "must be a JSON object");

/** Keys whose values the gateway or the web UI parse. */
const keyRules: Record<string, Rule> = {
  iframe_previews: jsonObject,
  external_previews: jsonObject,
  index_progress: jsonObject,
  scan_progress: jsonObject,
  filename_char_mapping: (value) => {
    const parsed = parseJson(value);
    return isObject(parsed) && Object.values(parsed).every((v) => typeof v === "string")
      ? null
      : "must be a JSON object of strings";
  },
  token: (value) => permanentTokenProblem(value),
  multipart_chunk_size: (value) =>
    /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_CHUNK_MIB
      ? null
      : `must be a whole number of MiB from 1 to ${MAX_CHUNK_MIB}`,
};

// Header-safe: printable ASCII without spaces, so the value arrives in Authorization exactly as saved.
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/** Why a permanent token cannot be used, or null. */
export function permanentTokenProblem(token: string): string | null {
  const { min, max } = PERMANENT_TOKEN_LENGTH;
  if (token.length < min || token.length > max) return `must be ${min} to ${max} characters long`;
  if (!HEADER_SAFE.test(token)) return "must be printable ASCII without spaces";
  if (JWT_SHAPE.test(token)) return "must not look like a JWT (three dot-separated base64url parts)";
  return null;
}

/**
 * Checks a save request against the stored rows and returns the values to write: only those that
 * change, `default_role` as a role id. Every problem is collected and reported at once, naming its
 * key; nothing is written unless there are none.
 */
export function settingChanges(
  items: readonly SettingValue[],
  stored: ReadonlyMap<string, string>,
  roles: readonly RoleName[],
): SettingValue[] {
  const problems: string[] = [];
  const changes: SettingValue[] = [];
  const seen = new Set<string>();
  for (const { key, value } of items) {
    const definition = settingDefinitionByKey.get(key);
    if (!definition) {
      problems.push(`${key}: unknown setting`);
      continue;
    }
    if (seen.has(key)) {
      problems.push(`${key}: appears more than once`);
      continue;
    }
    seen.add(key);
    const current = stored.get(key);
    // The web UI saves a whole group back: what it did not touch is accepted and left alone.
    if (
      value === current ||
      (key === "default_role" && current !== undefined && value === defaultRoleShown(current, roles))
    )
      continue;
    const problem = valueProblem(value, definition, roles);
    if (problem) problems.push(`${key}: ${problem}`);
    else changes.push({ key, value: key === "default_role" ? String(roles.find((r) => r.name === value)?.id) : value });
  }
  if (problems.length > 0) throw new ApiError(400, problems.join("; "));
  return changes;
}

/**
 * A save's items as the guard's batch can write them before the stored values are known:
 * `sure` are valid whatever is stored; `mustStand` are only accepted as they are stored (values
 * valueProblem refuses, which settingChanges lets pass unchanged); `defaultRole`, a role name,
 * is valid when it names the stored role or one that may be the default (store.ts settingsSave
 * checks that against the roles). Null for a request with a problem nothing stored can lift (an
 * unknown or repeated key), or with more than MAX_MUST_STAND items that must stand: every write
 * repeats their conditions, so the handler writes those requests after validating instead.
 */
export function presaveSplit(
  items: readonly SettingValue[],
): { sure: SettingValue[]; mustStand: SettingValue[]; defaultRole: string | undefined } | null {
  const seen = new Set<string>();
  const sure: SettingValue[] = [];
  const mustStand: SettingValue[] = [];
  let defaultRole: string | undefined;
  for (const { key, value } of items) {
    const definition = settingDefinitionByKey.get(key);
    if (!definition || seen.has(key)) return null;
    seen.add(key);
    if (key === "default_role") defaultRole = value;
    else (valueProblem(value, definition, []) === null ? sure : mustStand).push({ key, value });
  }
  return mustStand.length > MAX_MUST_STAND ? null : { sure, mustStand, defaultRole };
}

/** More than a group of settings the web UI saves back holds (read-only and unchanged ones). */
const MAX_MUST_STAND = 32;

function valueProblem(value: string, definition: SettingDefinition, roles: readonly RoleName[]): string | null {
  if (definition.flag === SettingFlag.READONLY) return "is read-only";
  if (value.length > MAX_SETTING_VALUE_LENGTH) return `must be at most ${MAX_SETTING_VALUE_LENGTH} characters long`;
  if (definition.key === "default_role") return defaultRoleProblem(value, roles);
  return typeRules[definition.type](value, definition) ?? keyRules[definition.key]?.(value, definition) ?? null;
}

/**
 * The web UI picks the default role by name; the table stores its id (AList v3.58.0
 * server/handles/setting.go:111-124).
 */
function defaultRoleProblem(name: string, roles: readonly RoleName[]): string | null {
  const role = roles.find((r) => r.name === name);
  if (!role) return DEFAULT_ROLE_NOT_FOUND;
  if (role.id === ADMIN_ROLE_ID || role.id === GUEST_ROLE_ID) return NOT_A_DEFAULT_ROLE;
  return null;
}

/**
 * `default_role` as list and get show it: the role's name when the stored id resolves (AList
 * v3.58.0 server/handles/setting.go:164-170).
 */
export function defaultRoleShown(storedId: string, roles: readonly RoleName[]): string {
  return roles.find((r) => String(r.id) === storedId)?.name ?? storedId;
}

/** The roles a new user may get by default: all but admin and guest, in id order. */
export function defaultRoleOptions(roles: readonly RoleName[]): string {
  return roles
    .filter((r) => r.id !== ADMIN_ROLE_ID && r.id !== GUEST_ROLE_ID)
    .map((r) => r.name)
    .join(",");
}

/** The parsed value, or undefined when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
