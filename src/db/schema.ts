// The whole Gatehouse schema. Column names follow AList's where a concept is shared, so an
// operator who knows AList's tables recognises these; times are unix seconds unless named *_ms.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** One entry of a role's permission scope: the permission bits granted under `path`. */
export interface PermissionScope {
  path: string;
  permission: number;
}

export const roles = sqliteTable("roles", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  description: text("description").notNull().default(""),
  isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
  permissionScopes: text("permission_scopes", { mode: "json" }).$type<PermissionScope[]>().notNull().default(sql`'[]'`),
});

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    username: text("username").notNull().unique(),
    /** `pbkdf2-sha256$<iterations>$<salt>$<hash>` over AList's static hash (src/auth/password.ts). */
    passwordHash: text("password_hash").notNull(),
    /** Unix seconds of the last password change; a token carrying an older value is dead. */
    passwordChangedAt: integer("pwd_ts").notNull().default(0),
    basePath: text("base_path").notNull().default("/"),
    /** Role ids, in the order the user was given them. */
    roleIds: text("role", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    permission: integer("permission").notNull().default(0),
    /** TOTP secret, encrypted at rest (AES-GCM); null while two-factor is off. */
    otpSecret: text("otp_secret"),
    /** Last TOTP time step accepted, so one code works once. */
    otpLastStep: integer("otp_last_step").notNull().default(0),
    /** The single sign-on identity, `<issuer>|<subject>` (docs/decisions.md D20); empty: none. */
    ssoId: text("sso_id").notNull().default(""),
    /** A directory entry of the same name may sign in as this account (docs/decisions.md D21.3). */
    allowLdap: integer("allow_ldap", { mode: "boolean" }).notNull().default(false),
  },
  (table) => [index("users_sso_id_idx").on(table.ssoId)],
);

export const DeviceSessionStatus = { ACTIVE: 0, INACTIVE: 1 } as const;

export const deviceSessions = sqliteTable(
  "device_sessions",
  {
    /**
     * Deterministic per (user, Client-Id): the first 32 lowercase hex digits of SHA-256 of
     * `<userId>-<clientId>` (auth/client.ts deviceKey; AList uses MD5, same length and role).
     */
    deviceKey: text("device_key").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Id of the one token this session currently honours; rotated at every login. */
    tokenId: text("token_id").notNull(),
    userAgent: text("user_agent").notNull().default(""),
    /** Stored already masked (192.*.*.23), as AList does. */
    ip: text("ip").notNull().default(""),
    lastActive: integer("last_active").notNull(),
    status: integer("status").notNull().default(DeviceSessionStatus.ACTIVE),
  },
  (table) => [
    index("device_sessions_user_id_idx").on(table.userId),
    index("device_sessions_last_active_idx").on(table.lastActive),
  ],
);

export const sshPublicKeys = sqliteTable(
  "ssh_public_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    fingerprint: text("fingerprint").notNull(),
    keyText: text("key_str").notNull(),
    addedAt: integer("added_time").notNull(),
    lastUsedAt: integer("last_used_time").notNull(),
  },
  (table) => [uniqueIndex("ssh_public_keys_user_title_idx").on(table.userId, table.title)],
);

export const storages = sqliteTable(
  "storages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    mountPath: text("mount_path").notNull().unique(),
    order: integer("order").notNull().default(0),
    driver: text("driver").notNull(),
    cacheExpiration: integer("cache_expiration").notNull().default(30),
    /** `work`, `disabled`, or the text of the last failed check. */
    status: text("status").notNull().default(""),
    /** Driver settings, a JSON object encoded as a string (the wire shape). */
    addition: text("addition").notNull().default("{}"),
    remark: text("remark").notNull().default(""),
    modifiedAtMs: integer("modified").notNull(),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    disableIndex: integer("disable_index", { mode: "boolean" }).notNull().default(false),
    enableSign: integer("enable_sign", { mode: "boolean" }).notNull().default(false),
    orderBy: text("order_by").notNull().default(""),
    orderDirection: text("order_direction").notNull().default(""),
    extractFolder: text("extract_folder").notNull().default(""),
    webProxy: integer("web_proxy", { mode: "boolean" }).notNull().default(false),
    webdavPolicy: text("webdav_policy").notNull().default(""),
    proxyRange: integer("proxy_range", { mode: "boolean" }).notNull().default(false),
    downProxyUrl: text("down_proxy_url").notNull().default(""),
    downProxySign: integer("down_proxy_sign", { mode: "boolean" }).notNull().default(true),
  },
  (table) => [
    index("storages_order_idx").on(table.order, table.id),
    // The storage list checks the storages no check has seen (status ""): a few rows, not all of them.
    index("storages_status_idx").on(table.status),
  ],
);

export const settings = sqliteTable(
  "settings",
  {
    key: text("key").primaryKey(),
    value: text("value").notNull().default(""),
    help: text("help").notNull().default(""),
    type: text("type").notNull().default("string"),
    options: text("options").notNull().default(""),
    group: integer("group").notNull().default(0),
    flag: integer("flag").notNull().default(0),
    index: integer("index").notNull().default(0),
  },
  (table) => [index("settings_group_idx").on(table.group, table.index)],
);

/**
 * Failed sign-ins inside the current window, per client IP (`ip:<addr>`) and per username
 * (`user:<name>`). Rows outlive their window only until the cron sweep removes them.
 */
export const loginFailures = sqliteTable(
  "login_failures",
  {
    scope: text("scope", { enum: ["ip", "user", "share", "share_ip"] }).notNull(),
    subject: text("subject").notNull(),
    count: integer("count").notNull().default(0),
    /** Unix seconds when this window ends and the count no longer counts. */
    expiresAt: integer("expires_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.scope, table.subject] }),
    index("login_failures_expires_at_idx").on(table.expiresAt),
  ],
);

/** How long a secret from 2fa/generate can be verified; the scheduled cleanup drops older ones. */
export const OTP_ENROLMENT_TTL_SECONDS = 600;

/** A 2FA secret handed out by /api/auth/2fa/generate, waiting for /verify (OTP_ENROLMENT_TTL_SECONDS). */
export const pendingOtpEnrolments = sqliteTable(
  "pending_otp_enrolments",
  {
    userId: integer("user_id")
      .primaryKey()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Encrypted at rest, like users.otp_secret. */
    secret: text("secret").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (table) => [index("pending_otp_enrolments_created_at_idx").on(table.createdAt)],
);

/**
 * A single sign-on begun by /api/auth/sso, waiting for the provider's callback: used once, for 10
 * minutes at most (docs/decisions.md D20.2).
 */
export const ssoStates = sqliteTable(
  "sso_states",
  {
    state: text("state").primaryKey(),
    /** What the callback does: sign in, or hand the identity to the profile page to link. */
    method: text("method", { enum: ["sso_get_token", "get_sso_id"] }).notNull(),
    nonce: text("nonce").notNull(),
    /** PKCE (RFC 7636), sent to the token endpoint; only its S256 hash went to the browser. */
    codeVerifier: text("code_verifier").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (table) => [index("sso_states_expires_at_idx").on(table.expiresAt)],
);

/**
 * Per-folder rules of the file side (AList's `x_metas`): a password, hide patterns, readme and
 * header, and a write grant, each optionally applying below `path` too. The nearest meta of a path
 * (the path itself, else its closest ancestor) is used alone; settings are not merged.
 */
export const metas = sqliteTable("metas", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  /** Cleaned full path in the mount tree. */
  path: text("path").notNull().unique(),
  /** Plain text, as AList stores it: the admin API shows it back. */
  password: text("password").notNull().default(""),
  passwordSub: integer("p_sub", { mode: "boolean" }).notNull().default(false),
  write: integer("write", { mode: "boolean" }).notNull().default(false),
  writeSub: integer("w_sub", { mode: "boolean" }).notNull().default(false),
  /** Newline-separated regular expressions matched against entry names. */
  hide: text("hide").notNull().default(""),
  hideSub: integer("h_sub", { mode: "boolean" }).notNull().default(false),
  readme: text("readme").notNull().default(""),
  readmeSub: integer("r_sub", { mode: "boolean" }).notNull().default(false),
  header: text("header").notNull().default(""),
  headerSub: integer("header_sub", { mode: "boolean" }).notNull().default(false),
});

export type AccessKeyUsage = "api" | "webdav" | "s3";

/**
 * App passwords, grown into access keys (docs/decisions.md D16): what a WebDAV client signs in with (docs/webdav.md). Users with two-factor on
 * have no other way in over Basic auth. 128 random bits, so one SHA-256 is the right hash: there
 * is nothing to slow down a guess of. Shown once at creation, never again.
 */
export const appPasswords = sqliteTable(
  "app_passwords",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Lowercase hex SHA-256 of the password. */
    hash: text("hash").notNull(),
    createdAt: integer("created_at").notNull(),
    /** The user's `pwd_ts` when it was made: a password change since ends it (as it ends tokens). */
    passwordChangedAt: integer("pwd_ts").notNull(),
    /** Unix seconds; 0 until first used. Moves at most once every few minutes (docs/decisions.md D16.4). */
    lastUsedAt: integer("last_used_at").notNull().default(0),
    // Access keys (docs/decisions.md D16): an app password is a key with the user's whole reach,
    // all of its rights and WebDAV use, which is what these defaults give the rows made before.
    /** The key's scope as a full path (the user's base path joined); `/` is the user's whole reach. */
    path: text("path").notNull().default("/"),
    /** AList permission bits the key keeps of its user's; -1 keeps them all. */
    permission: integer("permission").notNull().default(-1),
    /** Unix seconds; 0 never. */
    expiresAt: integer("expires_at").notNull().default(0),
    /** Where the key may be used: `api`, `webdav`, `s3`. */
    usage: text("usage", { mode: "json" }).$type<AccessKeyUsage[]>().notNull().default(["webdav"]),
    /** The S3 access key id; null for a key without S3 use. */
    accessKeyId: text("access_key_id"),
    /** The S3 secret, sealed (features/two-factor/secret-box.ts): SigV4 needs it in clear. */
    s3Secret: text("s3_secret"),
  },
  (table) => [
    uniqueIndex("app_passwords_hash_idx").on(table.hash),
    uniqueIndex("app_passwords_user_name_idx").on(table.userId, table.name),
    uniqueIndex("app_passwords_access_key_id_idx").on(table.accessKeyId),
  ],
);

/**
 * WebDAV locks (RFC 4918 §6-7), shared by every isolate. A lock covers `path`, and with depth
 * infinity everything below it. Expired rows are ignored at once and swept by the cron job.
 */
export const davLocks = sqliteTable(
  "dav_locks",
  {
    /** `urn:uuid:<uuid>`, as clients send it back in `If` and `Lock-Token`. */
    token: text("token").primaryKey(),
    /** Cleaned full path in the mount tree. */
    path: text("path").notNull(),
    /** 0, or -1 for infinity. */
    depth: integer("depth").notNull(),
    exclusive: integer("exclusive", { mode: "boolean" }).notNull(),
    /** The client's `owner` element, as XML text. */
    owner: text("owner").notNull().default(""),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    timeoutSeconds: integer("timeout_seconds").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (table) => [
    index("dav_locks_path_idx").on(table.path),
    index("dav_locks_expires_at_idx").on(table.expiresAt),
    // A user's delete finds its locks by this (ON DELETE CASCADE).
    index("dav_locks_user_id_idx").on(table.userId),
  ],
);

/**
 * Dead properties set by PROPPATCH (RFC 4918 §4), per full path. They follow the resource on
 * MOVE and COPY through /dav and go with it on DELETE; a change made another way (the web UI, the
 * upstream itself) leaves them where they were.
 */
export const davProperties = sqliteTable(
  "dav_properties",
  {
    path: text("path").notNull(),
    /** `{namespace}local`, Clark notation. */
    name: text("name").notNull(),
    /** The property element as XML, namespaces declared on it. */
    xml: text("xml").notNull(),
  },
  (table) => [primaryKey({ columns: [table.path, table.name] })],
);

/**
 * The search index (docs/files.md, Search): one row per file or folder the build walked or a write
 * through Gatehouse made. `path` is the full path in the mount tree, unique (AList's table had no
 * key, so indexing twice duplicated rows). A trigram FTS5 table over `name` (`search_fts`, made by
 * the migration `search_fts`, kept in step by triggers) answers substrings of three characters or
 * more; `folded` answers shorter ones (LIKE, and the `search_grams` postings). `segments` is the
 * path's names as a JSON array: the search checks hide rules on each name of the way with it
 * (docs/decisions.md D11.3).
 */
export const searchNodes = sqliteTable(
  "search_nodes",
  {
    id: integer("id").primaryKey(),
    path: text("path").notNull(),
    name: text("name").notNull(),
    /** The name in lower case (JavaScript's Unicode folding), for keywords shorter than a trigram. */
    folded: text("folded").notNull(),
    segments: text("segments").notNull(),
    isDir: integer("is_dir", { mode: "boolean" }).notNull(),
    size: integer("size").notNull().default(0),
  },
  (table) => [
    uniqueIndex("search_nodes_path_idx").on(table.path),
    // By name for the pages; with the folded name, a short keyword's LIKE scans this index, not the table.
    index("search_nodes_name_idx").on(table.name, table.path, table.folded),
  ],
);

/**
 * The search index's short-keyword postings (docs/decisions.md D24.2): for each node, every two-character
 * substring of its folded name and its last character alone, so a keyword of one or two characters
 * is found by its postings, not by reading every name. Kept in step with `search_nodes` by triggers
 * (migration `search_grams`), as the trigram table is; the migration makes it WITHOUT ROWID (the
 * primary key is the table), which Drizzle's schema does not express.
 */
export const searchGrams = sqliteTable(
  "search_grams",
  {
    gram: text("gram").notNull(),
    nodeId: integer("node_id").notNull(),
  },
  (table) => [primaryKey({ columns: [table.gram, table.nodeId] })],
);

/**
 * The folders an index build still has to list (docs/decisions.md D11.2): each step claims a few
 * (a lease, so a cron run and a kicked step never list the same folder), writes their entries and
 * queues their subfolders in one batch. A build is running while this table has rows.
 */
export const searchQueue = sqliteTable("search_queue", {
  path: text("path").primaryKey(),
  /** Levels still to list below this folder; -1 without limit. */
  depth: integer("depth").notNull(),
  /** Unix milliseconds until which a step holds this folder (named as task_units' lease). */
  leaseUntilMs: integer("lease_until_ms").notNull().default(0),
});

/**
 * Chunked uploads in progress (`/api/fs/multipart/*`, docs/decisions.md D12.1): everything the next
 * chunk needs, whichever isolate takes it. `upstream_id` is the storage's id for the upload (S3's
 * UploadId, or the staging folder of a storage without multipart uploads). No foreign key to the
 * user: a deleted user's sessions stay until the cron job has dropped their parts upstream.
 */
export const uploadSessions = sqliteTable(
  "upload_sessions",
  {
    id: text("id").primaryKey(),
    userId: integer("user_id").notNull(),
    /** The target's full path in the mount tree. */
    path: text("path").notNull(),
    /** The meta password given at init, checked again at every step against the metas of the day. */
    password: text("password").notNull().default(""),
    overwrite: integer("overwrite", { mode: "boolean" }).notNull(),
    storageId: integer("storage_id").notNull(),
    /** The target folder inside the storage (its actual path) and the upstream's upload id. */
    actualDir: text("actual_dir").notNull(),
    upstreamId: text("upstream_id").notNull(),
    size: integer("size").notNull(),
    chunkSize: integer("chunk_size").notNull(),
    contentType: text("content_type").notNull(),
    modifiedMs: integer("modified_ms"),
    /**
     * The whole file's hashes the client sent at init (`X-File-Md5`, `-Sha1`, `-Sha256`, lower-case
     * hex), or null: a new init with the same path, size and hashes resumes this session.
     */
    fileMd5: text("file_md5"),
    fileSha1: text("file_sha1"),
    fileSha256: text("file_sha256"),
    /** `receiving`, `completing` (one request joins the chunks) or `completed` (kept a while for status). */
    state: text("state").notNull().default("receiving"),
    /** Unix seconds of the last request on the session; the cron job aborts sessions idle too long. */
    lastActive: integer("last_active").notNull(),
  },
  (table) => [
    index("upload_sessions_user_idx").on(table.userId),
    index("upload_sessions_last_active_idx").on(table.lastActive),
  ],
);

/** The chunks of an upload session stored upstream, each with its size, SHA-256 and the tag completion needs. */
export const uploadChunks = sqliteTable(
  "upload_chunks",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => uploadSessions.id, { onDelete: "cascade" }),
    index: integer("idx").notNull(),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    tag: text("tag").notNull(),
  },
  (table) => [primaryKey({ columns: [table.sessionId, table.index] })],
);

/**
 * Share links (OpenList's `x_sharing_dbs`, OpenList internal/model/sharing.go): some files or
 * folders of the creator's view, opened to anyone with the link (and the code) under `/@s/<id>`
 * and `/sd/<id>`. Deleted with their creator. The code is never stored in plain text.
 */
export const shares = sqliteTable(
  "shares",
  {
    id: text("id").primaryKey(),
    creatorId: integer("creator_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Cleaned full paths in the mount tree, a JSON array. */
    files: text("files", { mode: "json" }).$type<string[]>().notNull(),
    /** Unix milliseconds; null never expires. */
    expiresAtMs: integer("expires_ms"),
    /** The share code as src/auth/password.ts stores passwords; "" when there is none. */
    codeHash: text("code_hash").notNull().default(""),
    /** Downloads delivered, counted by one UPDATE each (features/shares/store.ts countDownload). */
    accessed: integer("accessed").notNull().default(0),
    /** 0: no limit. */
    maxAccessed: integer("max_accessed").notNull().default(0),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    remark: text("remark").notNull().default(""),
    readme: text("readme").notNull().default(""),
    header: text("header").notNull().default(""),
    orderBy: text("order_by").notNull().default(""),
    orderDirection: text("order_direction").notNull().default(""),
    extractFolder: text("extract_folder").notNull().default(""),
  },
  (table) => [index("shares_creator_id_idx").on(table.creatorId)],
);

/**
 * Background tasks (docs/decisions.md D15): one row per task the task API lists, in AList's
 * TaskInfo terms (AList v3.58.0 server/handles/task.go:17-60). The row is the one truth: the
 * units below do the work and write their progress here; the lists read nothing else.
 */
export const tasks = sqliteTable(
  "tasks",
  {
    /** 21 URL-safe characters, as tache's nanoid ids. */
    id: text("id").primaryKey(),
    /** copy, move, offline_download, … (the `<kind>` of /api/task/<kind>/…). */
    kind: text("kind").notNull(),
    name: text("name").notNull(),
    creatorId: integer("creator_id").notNull(),
    creator: text("creator").notNull(),
    creatorRoles: text("creator_role", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    /** tache's numbers: 0 pending, 1 running, 2 succeeded, 3 canceling, 4 canceled, 7 failed, 8 waiting retry. */
    state: integer("state").notNull().default(0),
    error: text("error").notNull().default(""),
    /** Bytes of the files found so far; grows while a folder copy walks. */
    totalBytes: integer("total_bytes").notNull().default(0),
    /** Bytes written upstream so far (parts in flight included). */
    doneBytes: integer("done_bytes").notNull().default(0),
    unitsTotal: integer("units_total").notNull().default(0),
    unitsDone: integer("units_done").notNull().default(0),
    /** Set by cancel; running units stop at their next heartbeat, queued ones never start. */
    cancelRequested: integer("cancel_requested", { mode: "boolean" }).notNull().default(false),
    /** What the task was asked to do (paths, URL): the first unit is rebuilt from it on a retry. */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAtMs: integer("created_at_ms").notNull(),
    startedAtMs: integer("started_at_ms"),
    endedAtMs: integer("ended_at_ms"),
  },
  (table) => [index("tasks_kind_state_idx").on(table.kind, table.state, table.creatorId)],
);

/**
 * The pieces of work of a task, one queue message each: a folder listing, a file, the next part
 * of a big file, a URL, a move's final removal. A unit is leased while queued or running; the
 * cron sweep re-enqueues one whose lease ran out (its worker died, or the local queue was lost).
 */
export const taskUnits = sqliteTable(
  "task_units",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    /** walk | file | remove | fetch */
    kind: text("kind").notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** queued | running | done | failed | canceled */
    state: text("state").notNull().default("queued"),
    /** Bumped at every enqueue; a message with an older ticket is stale and dropped. */
    ticket: integer("ticket").notNull().default(0),
    attempts: integer("attempts").notNull().default(0),
    leaseUntilMs: integer("lease_until_ms").notNull(),
    /** Bytes this unit has counted into its task's done_bytes. */
    bytesDone: integer("bytes_done").notNull().default(0),
    error: text("error").notNull().default(""),
  },
  (table) => [
    index("task_units_task_state_idx").on(table.taskId, table.state),
    index("task_units_lease_idx").on(table.state, table.leaseUntilMs),
  ],
);

/** A user's passkey (WebAuthn credential): its public key and signature counter (docs/decisions.md D19). */
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** base64url of the credential id, as browsers spell `PublicKeyCredential.id`. */
    credentialId: text("credential_id").notNull().unique(),
    /** base64url of the COSE key the authenticator gave at registration. */
    publicKey: text("public_key").notNull(),
    signCount: integer("sign_count").notNull().default(0),
    /** The authenticator model (hex; zeros when it keeps it private). */
    aaguid: text("aaguid").notNull(),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
    /** 0 until the first sign-in with it. */
    lastUsedAt: integer("last_used_at").notNull().default(0),
  },
  (table) => [index("passkeys_user_id_idx").on(table.userId)],
);

/**
 * A WebAuthn challenge handed out by a begin route, waiting for its finish: single-use (the finish
 * deletes it as it reads it), minutes long, bound to its ceremony and, for a registration, its user.
 */
export const webauthnChallenges = sqliteTable(
  "webauthn_challenges",
  {
    /** The opaque `session` value the client sends back: it names the challenge, it is not it. */
    handle: text("handle").primaryKey(),
    /** base64url of the random challenge. */
    challenge: text("challenge").notNull(),
    ceremony: text("ceremony", { enum: ["registration", "login"] }).notNull(),
    /** The registering user; for a sign-in, the user named in `username`, null when discoverable or unknown. */
    userId: integer("user_id").references(() => users.id, { onDelete: "cascade" }),
    /** The `username` a sign-in was begun with ("" for discoverable credentials). */
    username: text("username").notNull().default(""),
    expiresAt: integer("expires_at").notNull(),
  },
  (table) => [
    index("webauthn_challenges_expires_at_idx").on(table.expiresAt),
    // A user's delete finds its challenges by this (ON DELETE CASCADE).
    index("webauthn_challenges_user_id_idx").on(table.userId),
  ],
);
