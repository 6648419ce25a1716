// The messages the setting routes answer, each defined once (AList's texts where it has them). A
// value's own problems (`must be a number`, …) are worded where they are found, in validate.ts,
// and answered together, each after its key; the default-role refusal is roles/messages.ts's.

export const KEY_REQUIRED = "key or keys is required";
export const KEYS_EMPTY = "keys: must name at least one setting";
export const settingNotFound = (key: string) => `setting ${key} not found`;
export const notDeprecated = (key: string) => `setting [${key}] is not deprecated`;

/** The permanent token set_token was given cannot be used; `problem` says why (validate.ts). */
export const tokenRefused = (problem: string) => `token: ${problem}`;

/** `default_role` named a role that does not exist (AList's text). */
export const DEFAULT_ROLE_NOT_FOUND = "failed get role: record not found";

// The offline-download services (offline-download.ts): bad input is a 400 before anything is
// saved; a service that does not answer right is a 500 after (the settings stay saved).
export const aria2WebSocket = (httpUri: string) => `uri: only HTTP JSON-RPC is supported; use ${httpUri} instead`;
export const ARIA2_URI_NOT_HTTP = "uri: must be an http:// or https:// URL, e.g. http://localhost:6800/jsonrpc";
export const ARIA2_URI_CREDENTIALS = "uri: must not carry credentials; aria2 takes its secret in `secret`";
export const QBIT_URL_NOT_HTTP =
  "url: must be an http:// or https:// URL, e.g. http://admin:adminadmin@localhost:8080/";
export const QBIT_URL_ENCODING = "url: the username and password must be percent-encoded correctly";
export const aria2Failed = (cause: string) => `failed get aria2 version: ${cause}`;
export const qbitUnreachable = (base: string, cause: string) =>
  `failed to reach qBittorrent webui at ${base}: ${cause}`;
export const qbitLoginFailed = (base: string) => `failed to login into qBittorrent webui with url: ${base}`;
export const QBIT_UNAUTHORIZED = "unauthorized qbittorrent url";

/** set_aria2's reply when aria2 answers. */
export const aria2VersionReply = (version: string) => `aria2 version: ${version}`;
export const TRANSMISSION_URI_NOT_HTTP =
  "uri: must be an http:// or https:// URL, e.g. http://localhost:9091/transmission/rpc";
export const TRANSMISSION_URI_ENCODING = "uri: the username and password must be percent-encoded correctly";
export const transmissionUnreachable = (endpoint: string, cause: string) =>
  `failed get transmission version: cannot reach ${endpoint}: ${cause}`;
export const TRANSMISSION_UNAUTHORIZED =
  "failed get transmission version: Transmission refused the username and password (give them in the uri)";
export const transmissionFailed = (cause: string) => `transmission RPC failed: ${cause}`;
export const transmissionTooOld = (version: number, needed: number) =>
  `remote transmission RPC version (v${version}) is too old: Gatehouse needs at least v${needed}`;

/**
 * The cloud-drive offline-download tools (set_115, set_pikpak, …): each hands the download to its
 * drive's own storage driver, which Gatehouse does not have (docs/decisions.md D18.4).
 */
export const cloudToolUnavailable = (tool: string) =>
  `${tool} offline download is not available: it runs through the ${tool} storage driver, which Gatehouse does not have at the edge`;
