// AList v3.58 databases for the import tests, written from AList's GORM models (AList v3.58.0
// internal/model/*.go) rather than from the importer: the tables as GORM creates them on SQLite,
// and rows as AList stores them (bools 0/1, times as GORM text, passwords as sha256(static
// hash-salt)). Pure data, so workerd tests can feed a fixture to the planner; alist-sqlite.ts
// writes it to a file.

export const ALIST_SCHEMA: Record<string, string[]> = {
  users: [
    "`id` integer PRIMARY KEY AUTOINCREMENT",
    "`username` text UNIQUE",
    "`pwd_hash` text",
    "`pwd_ts` integer",
    "`salt` text",
    "`password` text",
    "`base_path` text",
    "`role` text",
    "`disabled` numeric",
    "`permission` integer",
    "`otp_secret` text",
    "`sso_id` text",
    "`authn` text",
  ],
  roles: [
    "`id` integer PRIMARY KEY AUTOINCREMENT",
    "`name` text UNIQUE",
    "`description` text",
    "`default` numeric DEFAULT false",
    "`raw_permission` text",
  ],
  storages: [
    "`id` integer PRIMARY KEY AUTOINCREMENT",
    "`mount_path` text UNIQUE",
    "`order` integer",
    "`driver` text",
    "`cache_expiration` integer",
    "`status` text",
    "`addition` text",
    "`remark` text",
    "`modified` datetime",
    "`disabled` numeric",
    "`disable_index` numeric",
    "`enable_sign` numeric",
    "`order_by` text",
    "`order_direction` text",
    "`extract_folder` text",
    "`web_proxy` numeric",
    "`webdav_policy` text",
    "`proxy_range` numeric",
    "`down_proxy_url` text",
    "`down_proxy_sign` numeric DEFAULT true",
  ],
  metas: [
    "`id` integer PRIMARY KEY AUTOINCREMENT",
    "`path` text UNIQUE",
    "`password` text",
    "`p_sub` numeric",
    "`write` numeric",
    "`w_sub` numeric",
    "`hide` text",
    "`h_sub` numeric",
    "`readme` text",
    "`r_sub` numeric",
    "`header` text",
    "`header_sub` numeric",
  ],
  setting_items: [
    "`key` text PRIMARY KEY",
    "`value` text",
    "`help` text",
    "`type` text",
    "`options` text",
    "`group` integer",
    "`flag` integer",
    "`index` integer",
  ],
  ssh_public_keys: [
    "`id` integer PRIMARY KEY AUTOINCREMENT",
    "`user_id` integer",
    "`title` text",
    "`fingerprint` text",
    "`key_str` text",
    "`added_time` datetime",
    "`last_used_time` datetime",
  ],
  sessions: [
    "`device_key` text PRIMARY KEY",
    "`user_id` integer",
    "`user_agent` text",
    "`ip` text",
    "`last_active` integer",
    "`status` integer",
  ],
  search_nodes: ["`parent` text", "`name` text", "`is_dir` numeric", "`size` integer"],
  task_items: ["`key` text PRIMARY KEY", "`persist_data` text"],
};

type FixtureRow = Record<string, string | number | null>;

export interface AListFixture {
  prefix: string;
  /** Table name without prefix -> column DDL; ALIST_SCHEMA unless a test changes it. */
  schema: Record<string, string[]>;
  rows: Record<string, FixtureRow[]>;
}

const STATIC_SALT = "https://github.com/alist-org/alist";

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What AList's SetPassword stores (AList v3.58.0 internal/model/user.go:80-85, :177). */
export async function alistPassword(password: string, salt: string): Promise<{ pwd_hash: string; salt: string }> {
  return { pwd_hash: await sha256Hex(`${await sha256Hex(`${password}-${STATIC_SALT}`)}-${salt}`), salt };
}

export const ALIST_ADMIN_PASSWORD = "alist admin pw";
export const ALICE_PASSWORD = "alice in alist";
export const BOB_PASSWORD = "bob's password";
/** Alice's TOTP secret in AList (base32, as AList's 2fa/generate makes them). */
export const ALICE_OTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

const GUEST_ROLE = {
  id: 1,
  name: "guest",
  description: "Guest",
  default: 0,
  raw_permission: '[{"path":"/","permission":0}]',
};
const ADMIN_ROLE = {
  id: 2,
  name: "admin",
  description: "Administrator",
  default: 0,
  raw_permission: '[{"path":"/","permission":65535}]',
};

async function user(
  id: number,
  username: string,
  password: string,
  salt: string,
  fields: Partial<FixtureRow> = {},
): Promise<FixtureRow> {
  return {
    id,
    username,
    ...(await alistPassword(password, salt)),
    pwd_ts: 1700000000 + id,
    password: "",
    base_path: "/",
    role: "[]",
    disabled: 0,
    permission: 0,
    otp_secret: "",
    sso_id: "",
    authn: "[]",
    ...fields,
  };
}

function setting(key: string, value: string, type = "string", group = 1, flag = 0): FixtureRow {
  return { key, value, help: "", type, options: "", group, flag, index: 0 };
}

function storage(
  id: number,
  mountPath: string,
  driver: string,
  addition: string,
  fields: Partial<FixtureRow> = {},
): FixtureRow {
  return {
    id,
    mount_path: mountPath,
    order: id,
    driver,
    cache_expiration: 30,
    status: "work",
    addition,
    remark: "",
    modified: "2024-05-01 10:20:30.123456789+00:00",
    disabled: 0,
    disable_index: 0,
    enable_sign: 0,
    order_by: "name",
    order_direction: "asc",
    extract_folder: "",
    web_proxy: 0,
    webdav_policy: "native_proxy",
    proxy_range: 0,
    down_proxy_url: "",
    down_proxy_sign: 1,
    ...fields,
  };
}

function meta(id: number, path: string, fields: Partial<FixtureRow> = {}): FixtureRow {
  return {
    id,
    path,
    password: "",
    p_sub: 0,
    write: 0,
    w_sub: 0,
    hide: "",
    h_sub: 0,
    readme: "",
    r_sub: 0,
    header: "",
    header_sub: 0,
    ...fields,
  };
}

/** A fresh AList: its two roles, guest and admin, and a few settings. */
export async function minimalFixture(): Promise<AListFixture> {
  return {
    prefix: "x_",
    schema: ALIST_SCHEMA,
    rows: {
      roles: [GUEST_ROLE, ADMIN_ROLE],
      users: [
        await user(1, "guest", "guest", "GuestSaltGuestSa", { role: "[1]", disabled: 1 }),
        await user(2, "admin", ALIST_ADMIN_PASSWORD, "AdminSalt0123456", { role: "[2]", permission: 65535, pwd_ts: 0 }),
      ],
      setting_items: [setting("version", "v3.58.0", "string", 1, 2), setting("site_title", "AList")],
    },
  };
}

/** An AList in use: roles with scopes, users with roles and 2FA, storages, metas, settings, a key. */
export async function fullFixture(options: { sshKey?: string } = {}): Promise<AListFixture> {
  const base = await minimalFixture();
  return {
    ...base,
    rows: {
      roles: [
        GUEST_ROLE,
        ADMIN_ROLE,
        {
          id: 3,
          name: "editors",
          description: "Edit media",
          default: 0,
          raw_permission: '[{"path":"/media","permission":4345},{"path":"/docs/","permission":1}]',
        },
        { id: 5, name: "viewers", description: "", default: 1, raw_permission: "" },
      ],
      users: [
        ...base.rows.users!,
        await user(7, "alice", ALICE_PASSWORD, "AliceSalt0123456", {
          role: "[3]",
          base_path: "/media",
          permission: 264,
          otp_secret: ALICE_OTP_SECRET,
        }),
        await user(9, "bob", BOB_PASSWORD, "BobSalt012345678", { role: "[3,5]", base_path: "/", permission: 1 }),
        await user(10, "carol", "carol pw", "CarolSalt0123456", { role: "[5]", disabled: 1 }),
      ],
      storages: [
        storage(
          1,
          "/media",
          "WebDav",
          JSON.stringify({
            vendor: "other",
            address: "http://127.0.0.1:1/dav",
            username: "u",
            password: "p",
            root_folder_path: "/",
          }),
          {
            web_proxy: 1,
            proxy_range: 1,
            down_proxy_url: "https://proxy.example",
            down_proxy_sign: 0,
            remark: "family media",
          },
        ),
        storage(
          2,
          "/docs",
          "Virtual",
          JSON.stringify({ num_file: 1, num_folder: 1, max_file_size: 1024, max_folder_depth: 1 }),
          { disabled: 1, status: "disabled", order: 5 },
        ),
      ],
      metas: [
        meta(1, "/media/private", {
          password: "s3cret",
          p_sub: 1,
          hide: "^\\.\n^secret",
          h_sub: 1,
          readme: "# Private",
        }),
        meta(2, "/docs", { write: 1, w_sub: 1, header: "Docs header" }),
      ],
      setting_items: [
        ...base.rows.setting_items!,
        setting("site_title", "Family files"),
        setting("default_role", "5", "select"),
        setting("default_page_size", "30", "number"),
        setting("aria2_uri", "http://localhost:6800/jsonrpc", "string", 5, 1),
        setting("some_future_setting", "x"),
        setting("index_progress", '{"obj_count":0}', "text", 0, 1),
      ].filter((s, i, all) => !all.slice(i + 1).some((t) => t.key === s.key)), // a later row wins, as a key is unique
      ssh_public_keys: options.sshKey
        ? [
            {
              id: 1,
              user_id: 7,
              title: "laptop",
              fingerprint: "ignored",
              key_str: options.sshKey,
              added_time: "2024-01-02 03:04:05+00:00",
              last_used_time: "2024-03-04 05:06:07+00:00",
            },
          ]
        : [],
    },
  };
}

/** Broken rows among good ones: each must be refused by name, the good ones imported. */
export async function corruptFixture(): Promise<AListFixture> {
  const base = await minimalFixture();
  return {
    ...base,
    // A newer AList: a column v3.58 does not have.
    schema: { ...ALIST_SCHEMA, users: [...ALIST_SCHEMA.users!, "`mcp_token` text"] },
    rows: {
      roles: [
        GUEST_ROLE,
        ADMIN_ROLE,
        { id: 3, name: "broken", description: "", default: 0, raw_permission: '[{"path":"/a",' },
        { id: 4, name: "fine", description: "", default: 0, raw_permission: '[{"path":"/ok","permission":1}]' },
      ],
      users: [
        ...base.rows.users!,
        await user(3, "dave", "dave pw", "DaveSalt01234567", { role: "[3]", mcp_token: "t" }),
        await user(4, "erin", "erin pw", "ErinSalt01234567", { role: "[4]", mcp_token: "t" }),
        await user(5, "frank", "frank pw", "FrankSalt0123456", { role: "[4]", permission: 1 << 16 }),
        await user(6, "gina", "gina pw", "GinaSalt01234567", { role: "not json" }),
      ],
      storages: [
        storage(1, "/good", "Virtual", "{}"),
        storage(2, "/bad-json", "WebDav", '{"address": '),
        storage(3, "/baidu", "BaiduNetdisk", "{}"),
        storage(4, "/good/", "Virtual", "{}"),
        storage(5, "/bad\u0001name", "Virtual", "{}"),
        storage(6, "/bad-choice", "WebDav", "{}", { webdav_policy: "teleport" }),
      ],
      metas: [meta(1, "/good", { readme: "hi" }), meta(2, "/good/", { readme: "again" })],
      setting_items: [...base.rows.setting_items!, setting("default_page_size", "lots", "number")],
    },
  };
}

/** The source as the importer sees it, without a file: for the planner and for workerd. */
export function fixtureTables(fixture: AListFixture) {
  const columns = (table: string) => (fixture.schema[table] ?? []).map((ddl) => /^`([^`]+)`/.exec(ddl)![1]!);
  return {
    names: Object.keys(fixture.schema).map((t) => fixture.prefix + t),
    columnsOf: (name: string) => columns(name.slice(fixture.prefix.length)),
    rowsOf: (name: string) => {
      const table = name.slice(fixture.prefix.length);
      const known = columns(table);
      return (fixture.rows[table] ?? []).map((row) => Object.fromEntries(known.map((c) => [c, row[c] ?? null])));
    },
  };
}
