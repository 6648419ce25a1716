// The authorization matrix as data: every route Gatehouse serves, who may call it, and every kind of
// caller a request can come from. The expected reply of each cell is derived from the two tables, so
// a route's row says only what kind of route it is (public, signed-in, user-only or admin-only).
import type { RouterRoute } from "hono/types";

interface Refusal {
  code: 401 | 403;
  message: string;
}

type Access =
  | { kind: "public" }
  | { kind: "signed-in" }
  /** Signed-in, but the guest (when enabled) gets a refusal of the route's own. */
  | { kind: "user-only"; guest: Refusal }
  | { kind: "admin-only" };

const PUBLIC: Access = { kind: "public" };
const SIGNED_IN: Access = { kind: "signed-in" };
const ADMIN_ONLY: Access = { kind: "admin-only" };
const userOnly = (code: 401 | 403, message: string): Access => ({ kind: "user-only", guest: { code, message } });

export interface RouteRow {
  /** As the router lists it; `ALL` routes are called with GET. */
  method: "GET" | "POST" | "PUT" | "ALL";
  path: string;
  access: Access;
  /**
   * A cheap request that gets past the guard without changing anything later cells depend on:
   * unknown ids (404) or bodies the route refuses (400) for everything that writes.
   */
  query?: string;
  body?: unknown;
  /** The URL to call when `path` is a pattern. */
  url?: string;
  /** Codes the route itself may answer past the guard, besides 200, 400 and 404. */
  alsoAnswers?: number[];
  /** The route ends the session it is called with; session callers sign in afresh for it. */
  endsSession?: true;
  /** Not the envelope: /ping's plain text, the OpenAPI document, a share's refusal (a real 404). */
  reply?: "text" | "document" | "not found";
}

const NO_SUCH_ID = "id=999999";
/** What a file read answers past the guard with nothing mounted: storage not found (500), or no scope (403). */
const FS_READ = [403, 500];

export const ROUTES: RouteRow[] = [
  { method: "ALL", path: "/ping", access: PUBLIC, reply: "text" },
  { method: "GET", path: "/api/openapi.json", access: PUBLIC, reply: "document" },
  { method: "GET", path: "/api/public/settings", access: PUBLIC },
  { method: "GET", path: "/api/public/archive_extensions", access: PUBLIC },
  { method: "GET", path: "/api/public/offline_download_tools", access: PUBLIC },
  // An empty object fails validation before any credential check, so no failure is counted for lockout.
  { method: "POST", path: "/api/auth/login", access: PUBLIC, body: {} },
  { method: "POST", path: "/api/auth/login/hash", access: PUBLIC, body: {} },
  { method: "POST", path: "/api/auth/login/ldap", access: PUBLIC, body: {} },
  // Single sign-on (off by default): refused before any state is written or provider reached.
  { method: "GET", path: "/api/auth/sso", access: PUBLIC, query: "method=sso_get_token", alsoAnswers: [403] },
  { method: "GET", path: "/api/auth/sso_callback", access: PUBLIC },
  { method: "GET", path: "/api/auth/sso_get_token", access: PUBLIC },
  { method: "GET", path: "/api/auth/get_sso_id", access: PUBLIC },

  { method: "GET", path: "/api/auth/logout", access: SIGNED_IN, endsSession: true },
  { method: "GET", path: "/api/me", access: SIGNED_IN },
  { method: "GET", path: "/api/me/sessions", access: SIGNED_IN },
  { method: "POST", path: "/api/me/sessions/evict", access: SIGNED_IN, body: { session_id: "no-such-session" } },

  { method: "POST", path: "/api/auth/2fa/generate", access: userOnly(403, "Guest user can not generate 2FA code") },
  {
    method: "POST",
    path: "/api/auth/2fa/verify",
    access: userOnly(403, "Guest user can not generate 2FA code"),
    body: { code: "000000", secret: "JBSWY3DPEHPK3PXP" },
  },
  // Passkeys: webauthn_login_enabled is off by default, so past the guard they answer 403 and write nothing.
  {
    method: "GET",
    path: "/api/authn/webauthn_begin_registration",
    access: userOnly(403, "the guest account cannot have passkeys"),
    alsoAnswers: [403],
  },
  {
    method: "POST",
    path: "/api/authn/webauthn_finish_registration",
    access: userOnly(403, "the guest account cannot have passkeys"),
    body: {},
  },
  { method: "GET", path: "/api/authn/webauthn_begin_login", access: PUBLIC, alsoAnswers: [403] },
  { method: "POST", path: "/api/authn/webauthn_finish_login", access: PUBLIC, body: {} },
  {
    method: "GET",
    path: "/api/authn/getcredentials",
    access: userOnly(403, "the guest account cannot have passkeys"),
    alsoAnswers: [403],
  },
  {
    method: "POST",
    path: "/api/authn/delete_authn",
    access: userOnly(403, "the guest account cannot have passkeys"),
    body: {},
  },
  // No field: a valid request that changes nothing.
  { method: "POST", path: "/api/me/update", access: userOnly(403, "Guest user can not update profile"), body: {} },
  { method: "GET", path: "/api/me/sshkey/list", access: userOnly(401, "user invalid") },
  {
    method: "POST",
    path: "/api/me/sshkey/add",
    access: userOnly(401, "user invalid"),
    body: { title: "matrix", key: "ssh-ed25519 AAAA" },
  },
  { method: "POST", path: "/api/me/sshkey/delete", access: userOnly(401, "user invalid"), query: NO_SUCH_ID },
  { method: "GET", path: "/api/me/app_password/list", access: userOnly(401, "user invalid") },
  {
    method: "POST",
    path: "/api/me/app_password/create",
    access: userOnly(401, "user invalid"),
    body: { name: "matrix" },
  },
  { method: "POST", path: "/api/me/app_password/delete", access: userOnly(401, "user invalid"), query: NO_SUCH_ID },
  { method: "GET", path: "/api/me/access_key/list", access: userOnly(401, "user invalid") },
  // No name: 400, nothing made.
  { method: "POST", path: "/api/me/access_key/create", access: userOnly(401, "user invalid"), body: {} },
  { method: "POST", path: "/api/me/access_key/delete", access: userOnly(401, "user invalid"), body: { id: 999999 } },
  { method: "GET", path: "/api/admin/access_key/list", access: ADMIN_ONLY },
  { method: "POST", path: "/api/admin/access_key/delete", access: ADMIN_ONLY, body: { id: 999999 } },

  { method: "GET", path: "/api/admin/session/list", access: ADMIN_ONLY },
  { method: "POST", path: "/api/admin/session/evict", access: ADMIN_ONLY, body: { session_id: "no-such-session" } },

  { method: "GET", path: "/api/admin/setting/list", access: ADMIN_ONLY },
  { method: "GET", path: "/api/admin/setting/get", access: ADMIN_ONLY, query: "key=site_title" },
  { method: "POST", path: "/api/admin/setting/save", access: ADMIN_ONLY, body: [] },
  { method: "POST", path: "/api/admin/setting/delete", access: ADMIN_ONLY, query: "key=no_such_setting" },
  // Replaces the permanent token: the permanent-token caller reads the current one for every request.
  { method: "POST", path: "/api/admin/setting/reset_token", access: ADMIN_ONLY },
  { method: "POST", path: "/api/admin/setting/set_token", access: ADMIN_ONLY, body: { token: "short" } },
  {
    method: "POST",
    path: "/api/admin/setting/set_aria2",
    access: ADMIN_ONLY,
    body: { uri: "ws://127.0.0.1:6800/jsonrpc", secret: "" },
  },
  {
    method: "POST",
    path: "/api/admin/setting/set_qbit",
    access: ADMIN_ONLY,
    body: { url: "http://127.0.0.1:8080/", seedtime: "soon" },
  },

  // A bad seed time: refused (400) before anything is saved or dialled.
  {
    method: "POST",
    path: "/api/admin/setting/set_transmission",
    access: ADMIN_ONLY,
    body: { uri: "http://127.0.0.1:9091/transmission/rpc", seedtime: "soon" },
  },
  // Answers the defaults; writes nothing.
  { method: "POST", path: "/api/admin/setting/default", access: ADMIN_ONLY, query: "group=1" },
  // The cloud-drive tools: always refused (400), nothing saved.
  ...(
    [
      "set_115",
      "set_115_open",
      "set_123_pan",
      "set_123_open",
      "set_pikpak",
      "set_thunder",
      "set_thunder_browser",
      "set_thunderx",
      "set_guangyapan",
    ] as const
  ).map((name): RouteRow => ({ method: "POST", path: `/api/admin/setting/${name}`, access: ADMIN_ONLY, body: {} })),
  // The inbox is always empty (404); sending is refused (400).
  { method: "POST", path: "/api/admin/message/get", access: ADMIN_ONLY },
  { method: "POST", path: "/api/admin/message/send", access: ADMIN_ONLY, body: { message: "hi" } },

  { method: "GET", path: "/api/admin/user/sshkey/list", access: ADMIN_ONLY, query: "uid=999999" },
  { method: "POST", path: "/api/admin/user/sshkey/delete", access: ADMIN_ONLY, query: NO_SUCH_ID },

  { method: "GET", path: "/api/admin/user/list", access: ADMIN_ONLY },
  { method: "GET", path: "/api/admin/user/get", access: ADMIN_ONLY, query: "id=1" },
  { method: "POST", path: "/api/admin/user/create", access: ADMIN_ONLY, body: {} },
  { method: "POST", path: "/api/admin/user/update", access: ADMIN_ONLY, body: { id: 999999 } },
  { method: "POST", path: "/api/admin/user/delete", access: ADMIN_ONLY, query: NO_SUCH_ID },
  { method: "POST", path: "/api/admin/user/cancel_2fa", access: ADMIN_ONLY, query: NO_SUCH_ID },
  { method: "POST", path: "/api/admin/user/del_cache", access: ADMIN_ONLY, query: "username=nobody" },

  { method: "GET", path: "/api/admin/role/list", access: ADMIN_ONLY },
  { method: "GET", path: "/api/admin/role/get", access: ADMIN_ONLY, query: "id=1" },
  { method: "POST", path: "/api/admin/role/create", access: ADMIN_ONLY, body: {} },
  { method: "POST", path: "/api/admin/role/update", access: ADMIN_ONLY, body: { id: 999999 } },
  { method: "POST", path: "/api/admin/role/delete", access: ADMIN_ONLY, query: NO_SUCH_ID },

  { method: "GET", path: "/api/admin/driver/list", access: ADMIN_ONLY },
  { method: "GET", path: "/api/admin/driver/names", access: ADMIN_ONLY },
  { method: "GET", path: "/api/admin/driver/info", access: ADMIN_ONLY, query: "driver=Virtual" },

  { method: "GET", path: "/api/admin/storage/list", access: ADMIN_ONLY },
  { method: "GET", path: "/api/admin/storage/get", access: ADMIN_ONLY, query: NO_SUCH_ID },
  { method: "POST", path: "/api/admin/storage/create", access: ADMIN_ONLY, body: {} },
  { method: "POST", path: "/api/admin/storage/update", access: ADMIN_ONLY, body: {} },
  { method: "POST", path: "/api/admin/storage/delete", access: ADMIN_ONLY, query: NO_SUCH_ID },
  { method: "POST", path: "/api/admin/storage/enable", access: ADMIN_ONLY, query: NO_SUCH_ID },
  { method: "POST", path: "/api/admin/storage/disable", access: ADMIN_ONLY, query: NO_SUCH_ID },
  // With no storages mounted there is nothing to re-check in the background.
  { method: "POST", path: "/api/admin/storage/load_all", access: ADMIN_ONLY },

  { method: "GET", path: "/api/admin/meta/list", access: ADMIN_ONLY },
  { method: "GET", path: "/api/admin/meta/get", access: ADMIN_ONLY, query: NO_SUCH_ID },
  { method: "POST", path: "/api/admin/meta/create", access: ADMIN_ONLY, body: {} },
  { method: "POST", path: "/api/admin/meta/update", access: ADMIN_ONLY, body: {} },
  { method: "POST", path: "/api/admin/meta/delete", access: ADMIN_ONLY, query: NO_SUCH_ID },

  // With no storage mounted every read answers "storage not found" past the guard.
  // (403: a caller without a scope holding the path.)
  { method: "POST", path: "/api/fs/list", access: SIGNED_IN, body: { path: "/" }, alsoAnswers: FS_READ },
  { method: "POST", path: "/api/fs/get", access: SIGNED_IN, body: { path: "/nothing" }, alsoAnswers: FS_READ },
  { method: "POST", path: "/api/fs/dirs", access: SIGNED_IN, body: { path: "/" }, alsoAnswers: FS_READ },
  { method: "POST", path: "/api/fs/other", access: SIGNED_IN, body: { path: "/" }, alsoAnswers: FS_READ },
  { method: "POST", path: "/api/fs/search", access: SIGNED_IN, body: {}, alsoAnswers: [500] },
  // search_index is none by default: 500 `search not available` past the admin check (AList's order).
  ...(["build", "update", "stop", "clear"] as const).map(
    (name): RouteRow => ({
      method: "POST",
      path: `/api/admin/index/${name}`,
      access: ADMIN_ONLY,
      body: {},
      alsoAnswers: [500],
    }),
  ),
  { method: "GET", path: "/api/admin/index/progress", access: ADMIN_ONLY, alsoAnswers: [500] },
  // No engine: start answers 500 `search not available`; no scan runs: stop answers 400; progress answers.
  { method: "POST", path: "/api/admin/scan/start", access: ADMIN_ONLY, body: {}, alsoAnswers: [500] },
  { method: "POST", path: "/api/admin/scan/stop", access: ADMIN_ONLY },
  { method: "GET", path: "/api/admin/scan/progress", access: ADMIN_ONLY },
  // Not Base64: refused (400); rapid_upload is always refused (400).
  { method: "POST", path: "/api/fs/torrent/parse", access: SIGNED_IN, body: { torrent_data: "%%" } },
  { method: "POST", path: "/api/fs/torrent/rapid_upload", access: SIGNED_IN, body: { torrent_data: "%%", path: "/" } },
  { method: "POST", path: "/api/fs/archive/meta", access: SIGNED_IN, body: { path: "/a.zip" }, alsoAnswers: FS_READ },
  { method: "POST", path: "/api/fs/archive/list", access: SIGNED_IN, body: { path: "/a.zip" }, alsoAnswers: FS_READ },
  {
    method: "POST",
    path: "/api/fs/archive/decompress",
    access: SIGNED_IN,
    body: { src_dir: "/../x", dst_dir: "/", name: "a.zip" },
    alsoAnswers: [403],
  },
  // Writes with a climbing path: refused (403) past the guard, nothing changes.
  { method: "POST", path: "/api/fs/mkdir", access: SIGNED_IN, body: { path: "/../x" }, alsoAnswers: [403] },
  {
    method: "POST",
    path: "/api/fs/add_offline_download",
    access: SIGNED_IN,
    body: { path: "/../x", urls: [], tool: "SimpleHttp" },
    alsoAnswers: [403],
  },
  { method: "POST", path: "/api/fs/rename", access: SIGNED_IN, body: { path: "/../x", name: "y" }, alsoAnswers: [403] },
  {
    method: "POST",
    path: "/api/fs/move",
    access: SIGNED_IN,
    body: { src_dir: "/../x", dst_dir: "/", names: ["a"] },
    alsoAnswers: [403],
  },
  {
    method: "POST",
    path: "/api/fs/copy",
    access: SIGNED_IN,
    body: { src_dir: "/../x", dst_dir: "/", names: ["a"] },
    alsoAnswers: [403],
  },
  {
    method: "POST",
    path: "/api/fs/remove",
    access: SIGNED_IN,
    body: { dir: "/../x", names: ["a"] },
    alsoAnswers: [403],
  },
  // The route refuses non-admins itself (403 You are not an admin): the guard lets any caller in.
  { method: "POST", path: "/api/fs/link", access: SIGNED_IN, body: { path: "/../x" }, alsoAnswers: [403] },
  {
    method: "POST",
    path: "/api/fs/batch_rename",
    access: SIGNED_IN,
    body: { src_dir: "/../x", rename_objects: [] },
    alsoAnswers: [403],
  },
  {
    method: "POST",
    path: "/api/fs/regex_rename",
    access: SIGNED_IN,
    body: { src_dir: "/../x", src_name_regex: "a", new_name_regex: "b" },
    alsoAnswers: [403],
  },
  {
    method: "POST",
    path: "/api/fs/recursive_move",
    access: SIGNED_IN,
    body: { src_dir: "/../x", dst_dir: "/" },
    alsoAnswers: [403],
  },
  {
    method: "POST",
    path: "/api/fs/remove_empty_directory",
    access: SIGNED_IN,
    body: { src_dir: "/../x" },
    alsoAnswers: [403],
  },
  // No File-Path: the root, which is no file name (400).
  { method: "PUT", path: "/api/fs/put", access: SIGNED_IN, alsoAnswers: [403] },
  { method: "PUT", path: "/api/fs/form", access: SIGNED_IN, alsoAnswers: [403] },
  // No X-File-Size (400); no X-Upload-Id: no session (404).
  { method: "POST", path: "/api/fs/multipart/init", access: SIGNED_IN, alsoAnswers: [403] },
  { method: "PUT", path: "/api/fs/multipart/chunk", access: SIGNED_IN },
  { method: "GET", path: "/api/fs/multipart/status", access: SIGNED_IN },
  { method: "POST", path: "/api/fs/multipart/complete", access: SIGNED_IN },
  { method: "POST", path: "/api/fs/multipart/abort", access: SIGNED_IN },
  { method: "POST", path: "/api/fs/get_direct_upload_info", access: SIGNED_IN, body: {}, alsoAnswers: [403] },

  ...(["/api/task", "/api/admin/task"] as const).flatMap((prefix): RouteRow[] => {
    const access = prefix === "/api/task" ? userOnly(403, "You are a guest") : ADMIN_ONLY;
    return [
      ...(["undone", "done"] as const).map(
        (op): RouteRow => ({ method: "GET", path: `${prefix}/:kind/${op}`, url: `${prefix}/copy/${op}`, access }),
      ),
      // An unknown id: 404 task not found.
      ...(["info", "cancel", "delete", "retry"] as const).map(
        (op): RouteRow => ({
          method: "POST",
          path: `${prefix}/:kind/${op}`,
          url: `${prefix}/copy/${op}`,
          access,
          query: "tid=nope",
        }),
      ),
      // No ids: nothing to do.
      ...(["cancel_some", "delete_some", "retry_some"] as const).map(
        (op): RouteRow => ({
          method: "POST",
          path: `${prefix}/:kind/${op}`,
          url: `${prefix}/copy/${op}`,
          access,
          body: [],
        }),
      ),
      ...(["clear_done", "clear_succeeded", "retry_failed"] as const).map(
        (op): RouteRow => ({ method: "POST", path: `${prefix}/:kind/${op}`, url: `${prefix}/upload/${op}`, access }),
      ),
    ];
  }),
  // No login: the sign is the only gate (AList v3.58.0 server/middlewares/down.go:19-43), missing
  // here (401 expire missing).
  { method: "GET", path: "/d/:path{.+}", url: "/d/nothing", access: PUBLIC, alsoAnswers: [401] },
  { method: "GET", path: "/p/:path{.+}", url: "/p/nothing", access: PUBLIC, alsoAnswers: [401] },
  { method: "GET", path: "/ae/:path{.+}", url: "/ae/nothing.zip", access: PUBLIC, alsoAnswers: [401] },
  { method: "GET", path: "/ad/:path{.+}", url: "/ad/nothing.zip", access: PUBLIC, alsoAnswers: [401] },
  { method: "GET", path: "/ap/:path{.+}", url: "/ap/nothing.zip", access: PUBLIC, alsoAnswers: [401] },

  // Share links: their owners' (OpenList's "not guest"), and the links themselves for anyone.
  { method: "GET", path: "/api/share/list", access: userOnly(403, "You are a guest") },
  { method: "GET", path: "/api/share/get", access: userOnly(403, "You are a guest"), query: "id=no-such-share" },
  { method: "POST", path: "/api/share/create", access: userOnly(403, "You are a guest"), body: {} },
  { method: "POST", path: "/api/share/update", access: userOnly(403, "You are a guest"), body: {} },
  { method: "POST", path: "/api/share/delete", access: userOnly(403, "You are a guest"), query: "id=no-such-share" },
  { method: "POST", path: "/api/share/enable", access: userOnly(403, "You are a guest"), query: "id=no-such-share" },
  { method: "POST", path: "/api/share/disable", access: userOnly(403, "You are a guest"), query: "id=no-such-share" },
  // No login: an unknown share is HTTP 404 for everyone, so download tools never save a page.
  { method: "GET", path: "/sd/:path{.+}", url: "/sd/nothing/x", access: PUBLIC, reply: "not found" },
  { method: "GET", path: "/sad/:path{.+}", url: "/sad/nothing/x.zip", access: PUBLIC, reply: "not found" },
];

/**
 * Who a caller turns out to be once the guard has accepted it. A `key` (an access key, the admin's
 * included) reaches the file side only (docs/decisions.md D16.3).
 */
type Identity = "guest" | "user" | "admin" | "key";

export type CallerKind =
  | "no header"
  | "empty header"
  | "guest, no header"
  | "guest, empty header"
  | "ordinary user"
  | "admin by login token"
  | "admin by permanent token"
  | "expired token"
  | "token after logout"
  | "token after eviction"
  | "token after password change"
  | "token of a disabled user"
  | "token of a deleted user"
  | "token signed with another key"
  | "alg: none"
  | "garbage in JWT shape"
  | "garbage"
  | "access key of an ordinary user"
  | "access key of the admin"
  | "access key without API use"
  | "expired access key"
  | "access key after password change"
  | "access key of a disabled user";

export interface CallerRow {
  name: CallerKind;
  /** The state of the guest account (users.disabled of the guest row) while this caller runs. */
  guest: "enabled" | "disabled";
  /** Accepted by the guard as this identity, or refused by it on every protected route. */
  outcome: { identity: Identity } | { refused: Refusal };
}

const refused = (message: string) => ({ refused: { code: 401, message } as Refusal });

// Bad tokens run with the guest enabled: a refused token must never fall back to the guest.
export const CALLERS: CallerRow[] = [
  { name: "no header", guest: "disabled", outcome: refused("Guest user is disabled, login please") },
  { name: "empty header", guest: "disabled", outcome: refused("Guest user is disabled, login please") },
  { name: "guest, no header", guest: "enabled", outcome: { identity: "guest" } },
  { name: "guest, empty header", guest: "enabled", outcome: { identity: "guest" } },
  { name: "ordinary user", guest: "enabled", outcome: { identity: "user" } },
  { name: "admin by login token", guest: "disabled", outcome: { identity: "admin" } },
  { name: "admin by permanent token", guest: "disabled", outcome: { identity: "admin" } },
  { name: "expired token", guest: "enabled", outcome: refused("token is expired") },
  { name: "token after logout", guest: "enabled", outcome: refused("session inactive") },
  { name: "token after eviction", guest: "enabled", outcome: refused("session inactive") },
  {
    name: "token after password change",
    guest: "enabled",
    outcome: refused("Password has been changed, login please"),
  },
  { name: "token of a disabled user", guest: "enabled", outcome: refused("Current user is disabled, replace please") },
  { name: "token of a deleted user", guest: "enabled", outcome: refused("failed find user: record not found") },
  { name: "token signed with another key", guest: "enabled", outcome: refused("token is invalidated") },
  { name: "alg: none", guest: "enabled", outcome: refused("token is invalidated") },
  { name: "garbage in JWT shape", guest: "enabled", outcome: refused("that's not even a token") },
  // Not shaped like a JWT, so the guard compares it with the permanent token.
  { name: "garbage", guest: "enabled", outcome: refused("token is invalidated") },
  // Keys that are no longer (or never were) good count toward the lockout, which would stop the
  // callers after them: unknown and revoked keys are tried in src/features/access-keys/.
  { name: "access key of an ordinary user", guest: "enabled", outcome: { identity: "key" } },
  { name: "access key of the admin", guest: "disabled", outcome: { identity: "key" } },
  {
    name: "access key without API use",
    guest: "enabled",
    outcome: { refused: { code: 403, message: "this access key is not for the API" } },
  },
  { name: "expired access key", guest: "enabled", outcome: refused("access key expired") },
  {
    name: "access key after password change",
    guest: "enabled",
    outcome: refused("Password has been changed, login please"),
  },
  {
    name: "access key of a disabled user",
    guest: "enabled",
    outcome: refused("Current user is disabled, replace please"),
  },
];

/** The routes an access key reaches: the file side and reading its own profile (docs/decisions.md D16.3). */
const keyReaches = (route: RouteRow) =>
  route.path.startsWith("/api/fs/") || (route.method === "GET" && route.path === "/api/me");

/** What a cell must answer: a refusal with its exact code and message, or anything that got past the guard. */
export type Expectation = { passes: true } | Refusal;

export function expectedReply(route: RouteRow, caller: CallerRow): Expectation {
  if (route.access.kind === "public") return { passes: true };
  if ("refused" in caller.outcome) return caller.outcome.refused;
  const { identity } = caller.outcome;
  if (identity === "key")
    return keyReaches(route) ? { passes: true } : { code: 403, message: "an access key reaches the file side only" };
  if (identity === "admin") return { passes: true };
  if (route.access.kind === "admin-only") return { code: 403, message: "You are not an admin" };
  if (identity === "guest" && route.access.kind === "user-only") return route.access.guest;
  return { passes: true };
}

export const routeKey = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

/**
 * The routes the router serves, as `METHOD path`. Middleware is mounted with `use` on wildcard
 * paths (method ALL, path ending in `*`); everything else, `ALL /ping` included, is a route.
 */
export function servedRoutes(routes: readonly RouterRoute[]): { method: string; path: string }[] {
  const served = new Map<string, { method: string; path: string }>();
  for (const { method, path } of routes)
    if (!(method === "ALL" && path.endsWith("*"))) served.set(routeKey({ method, path }), { method, path });
  return [...served.values()];
}
