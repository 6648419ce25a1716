// The AList side of the import: the rows of an AList v3 data.db (its GORM models: AList v3.58.0
// internal/model/*.go), read as they are. Plain data only, so the planner (plan.ts) can be fed rows
// from anywhere, tests included.

/** One row as SQLite gave it: column name to value. */
export type SourceRow = Record<string, unknown>;

export type SourceTable = "users" | "roles" | "storages" | "metas" | "settings" | "sshKeys";

/** AList's table name (without the prefix) and the columns of v3.58 the import reads. */
const SOURCE_TABLES: Record<SourceTable, { name: string; columns: readonly string[]; required: boolean }> = {
  users: {
    name: "users",
    columns: [
      "id",
      "username",
      "pwd_hash",
      "pwd_ts",
      "salt",
      "password",
      "base_path",
      "role",
      "disabled",
      "permission",
      "otp_secret",
      "sso_id",
      "authn",
    ],
    required: true,
  },
  // Roles came with v3.46; before that a user's `role` was a single number.
  roles: { name: "roles", columns: ["id", "name", "description", "default", "raw_permission"], required: false },
  storages: {
    name: "storages",
    columns: [
      "id",
      "mount_path",
      "order",
      "driver",
      "cache_expiration",
      "status",
      "addition",
      "remark",
      "modified",
      "disabled",
      "disable_index",
      "enable_sign",
      "order_by",
      "order_direction",
      "extract_folder",
      "web_proxy",
      "webdav_policy",
      "proxy_range",
      "down_proxy_url",
      "down_proxy_sign",
    ],
    required: true,
  },
  metas: {
    name: "metas",
    columns: [
      "id",
      "path",
      "password",
      "p_sub",
      "write",
      "w_sub",
      "hide",
      "h_sub",
      "readme",
      "r_sub",
      "header",
      "header_sub",
    ],
    required: false,
  },
  settings: {
    name: "setting_items",
    columns: ["key", "value", "help", "type", "options", "group", "flag", "index"],
    required: true,
  },
  sshKeys: {
    name: "ssh_public_keys",
    columns: ["id", "user_id", "title", "fingerprint", "key_str", "added_time", "last_used_time"],
    required: false,
  },
};

export interface AListSource {
  tables: Record<SourceTable, SourceRow[]>;
  /** Columns a newer AList added, per table: read past, and reported. */
  unknownColumns: Partial<Record<SourceTable, string[]>>;
  /** v3.58 columns this file lacks (an older AList), per table: their rows take Gatehouse's defaults. */
  missingColumns: Partial<Record<SourceTable, string[]>>;
}

/**
 * Checks a database's table list against AList's and names what is wrong, or null. `columnsOf`
 * answers the columns of a table, so this stays independent of the SQLite library.
 */
export function readSource(
  prefix: string,
  tableNames: readonly string[],
  columnsOf: (table: string) => string[],
  rowsOf: (table: string) => SourceRow[],
): AListSource {
  const present = new Set(tableNames);
  const missing = Object.values(SOURCE_TABLES)
    .filter((t) => t.required && !present.has(prefix + t.name))
    .map((t) => prefix + t.name);
  if (missing.length > 0) {
    const found = tableNames.filter((t) => !t.startsWith("sqlite_"));
    throw new NotAListError(
      `not an AList database: no table ${missing.join(", ")}` +
        (found.length > 0
          ? ` (tables found: ${found.slice(0, 12).join(", ")}${found.length > 12 ? ", …" : ""}; is the table prefix right? --prefix)`
          : " (the file has no tables)"),
    );
  }
  const source: AListSource = {
    tables: { users: [], roles: [], storages: [], metas: [], settings: [], sshKeys: [] },
    unknownColumns: {},
    missingColumns: {},
  };
  for (const [key, table] of Object.entries(SOURCE_TABLES) as [SourceTable, (typeof SOURCE_TABLES)[SourceTable]][]) {
    const name = prefix + table.name;
    if (!present.has(name)) continue;
    const columns = columnsOf(name);
    const unknown = columns.filter((c) => !table.columns.includes(c));
    const absent = table.columns.filter((c) => !columns.includes(c));
    if (unknown.length > 0) source.unknownColumns[key] = unknown;
    if (absent.length > 0) source.missingColumns[key] = absent;
    source.tables[key] = rowsOf(name);
  }
  return source;
}

export class NotAListError extends Error {}
