// The settings table of AList v3.58.0 (internal/bootstrap/data/setting.go:87), the single source for seeding,
// validation and metadata repair. A row's index is its position in this list.

export const SettingFlag = { PUBLIC: 0, PRIVATE: 1, READONLY: 2, DEPRECATED: 3 } as const;

export type SettingType = "string" | "number" | "text" | "select" | "bool";

export interface SettingDefinition {
  key: string;
  value: string;
  type: SettingType;
  options: string;
  group: number;
  flag: number;
  help: string;
}

/** What clients read as the server version; they gate features on it (docs/decisions.md D3.5). */
export const ALIST_COMPATIBLE_VERSION = "v3.58.0";

/** Placeholder for the permanent token's default: the seed draws a fresh one per install. */
const GENERATED_TOKEN = "";

const IFRAME_PREVIEWS = JSON.stringify(
  {
    "doc,docx,xls,xlsx,ppt,pptx": {
      Microsoft: "https://view.officeapps.live.com/op/view.aspx?src=$e_url",
      Google: "https://docs.google.com/gview?url=$e_url&embedded=true",
    },
    pdf: { "PDF.js": "https://alist-org.github.io/pdf.js/web/viewer.html?file=$e_url" },
    epub: { "EPUB.js": "https://alist-org.github.io/static/epub.js/viewer.html?url=$e_url" },
  },
  null,
  "\t",
);

// RE2 syntax, as the gateway's file server evaluates them: IPv4, IPv6, access_token query values.
const PRIVACY_REGS = [
  String.raw`(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`,
  "(?:[[:xdigit:]]{1,4}:){7}[[:xdigit:]]{1,4}|(?:[[:xdigit:]]{1,4}:){1,7}:|(?:[[:xdigit:]]{1,4}:){1,6}:[[:xdigit:]]{1,4}|(?:[[:xdigit:]]{1,4}:){1,5}(?::[[:xdigit:]]{1,4}){1,2}|(?:[[:xdigit:]]{1,4}:){1,4}(?::[[:xdigit:]]{1,4}){1,3}|(?:[[:xdigit:]]{1,4}:){1,3}(?::[[:xdigit:]]{1,4}){1,4}|(?:[[:xdigit:]]{1,4}:){1,2}(?::[[:xdigit:]]{1,4}){1,5}|[[:xdigit:]]{1,4}:(?::[[:xdigit:]]{1,4}){1,6}|:(?:(?::[[:xdigit:]]{1,4}){1,7}|:)",
  "(?U)access_token=(.*)&",
].join("\n");

/**
 * The web UI renders this after creating a share and on its share list's copy button (OpenList's
 * setting of the same key; the UI fails without it). Triple braces: the text is not HTML.
 */
const SHARE_SUMMARY =
  '@{{{creator}}} shared {{#each files}}{{#if @first}}"{{{this}}}"{{/if}}{{/each}}{{#if files.[1]}} and more{{/if}} from {{{site_title}}}: {{{base_url}}}/@s/{{{id}}}{{#if pwd}} (share code: {{{pwd}}}){{/if}}{{#if expires}}, until {{{expires}}}{{/if}}';

/** A definition with its usual fields left out: a public string, without options or help. */
type DefinitionRow = Pick<SettingDefinition, "key" | "value" | "group"> & Partial<SettingDefinition>;

const DEFINITION_ROWS: readonly DefinitionRow[] = [
  { key: "version", value: ALIST_COMPATIBLE_VERSION, group: 1, flag: 2 },
  { key: "site_title", value: "AList", group: 1 },
  { key: "announcement", value: "### repo\nhttps://github.com/alist-org/alist", type: "text", group: 1 },
  {
    key: "pagination_type",
    value: "all",
    type: "select",
    options: "all,pagination,load_more,auto_load_more",
    group: 1,
  },
  { key: "default_page_size", value: "50", type: "number", group: 1 },
  { key: "allow_indexed", value: "false", type: "bool", group: 1 },
  { key: "allow_mounted", value: "true", type: "bool", group: 1 },
  { key: "robots_txt", value: "User-agent: *\nAllow: /", type: "text", group: 1 },
  { key: "allow_register", value: "false", type: "bool", group: 1 },
  { key: "default_role", value: "1", type: "select", group: 1 },
  { key: "use_newui", value: "false", type: "bool", group: 1 },
  // AList's defaults load from cdn.jsdelivr.net; ours ship with the web UI (scripts/webui-logo.svg).
  { key: "logo", value: "/images/logo.svg", type: "text", group: 2 },
  { key: "favicon", value: "/images/logo.svg", group: 2 },
  { key: "main_color", value: "#1890ff", group: 2 },
  { key: "home_icon", value: "🏠", group: 2 },
  { key: "home_container", value: "max_980px", type: "select", options: "max_980px,hope_container", group: 2 },
  { key: "settings_layout", value: "list", type: "select", options: "list,responsive", group: 2 },
  {
    key: "text_types",
    value:
      "txt,htm,html,xml,java,properties,sql,js,md,json,conf,ini,vue,php,py,bat,gitignore,yml,go,sh,c,cpp,h,hpp,tsx,vtt,srt,ass,rs,lrc",
    type: "text",
    group: 3,
    flag: 1,
  },
  { key: "audio_types", value: "mp3,flac,ogg,m4a,wav,opus,wma", type: "text", group: 3, flag: 1 },
  { key: "video_types", value: "mp4,mkv,avi,mov,rmvb,webm,flv,m3u8", type: "text", group: 3, flag: 1 },
  { key: "image_types", value: "jpg,tiff,jpeg,png,gif,bmp,svg,ico,swf,webp", type: "text", group: 3, flag: 1 },
  { key: "proxy_types", value: "m3u8,url", type: "text", group: 3, flag: 1 },
  { key: "proxy_ignore_headers", value: "authorization,referer", type: "text", group: 3, flag: 1 },
  { key: "external_previews", value: "{}", type: "text", group: 3 },
  { key: "iframe_previews", value: IFRAME_PREVIEWS, type: "text", group: 3 },
  { key: "audio_cover", value: "https://jsd.nn.ci/gh/alist-org/logo@main/logo.svg", group: 3 },
  { key: "audio_autoplay", value: "true", type: "bool", group: 3 },
  { key: "video_autoplay", value: "true", type: "bool", group: 3 },
  {
    key: "thumbnail_size",
    value: "144",
    type: "number",
    group: 3,
    help: "Thumbnail width in pixels. Height is scaled proportionally.",
  },
  { key: "preview_archives_by_default", value: "true", type: "bool", group: 3 },
  { key: "readme_autorender", value: "true", type: "bool", group: 3 },
  { key: "filter_readme_scripts", value: "true", type: "bool", group: 3 },
  { key: "hide_files", value: "/\\/README.md/i", type: "text", group: 4 },
  { key: "package_download", value: "true", type: "bool", group: 4 },
  { key: "customize_head", value: "", type: "text", group: 4, flag: 1 },
  { key: "customize_body", value: "", type: "text", group: 4, flag: 1 },
  { key: "link_expiration", value: "0", type: "number", group: 4, flag: 1 },
  { key: "sign_all", value: "true", type: "bool", group: 4, flag: 1 },
  { key: "privacy_regs", value: PRIVACY_REGS, type: "text", group: 4, flag: 1 },
  { key: "ocr_api", value: "https://api.alistgo.com/ocr/file/json", group: 4 },
  { key: "filename_char_mapping", value: '{"/": "|"}', type: "text", group: 4 },
  { key: "forward_direct_link_params", value: "false", type: "bool", group: 4 },
  { key: "ignore_direct_link_params", value: "sign,alist_ts", group: 4 },
  { key: "webauthn_login_enabled", value: "false", type: "bool", group: 4 },
  { key: "max_devices", value: "0", type: "number", group: 4 },
  { key: "device_evict_policy", value: "deny", type: "select", options: "deny,evict_oldest", group: 4 },
  { key: "device_session_ttl", value: "86400", type: "number", group: 4 },
  { key: "token", value: GENERATED_TOKEN, group: 0, flag: 1 },
  {
    key: "search_index",
    value: "none",
    type: "select",
    options: "database,none",
    group: 6,
  },
  { key: "auto_update_index", value: "false", type: "bool", group: 6 },
  { key: "ignore_paths", value: "", type: "text", group: 6, flag: 1, help: "one path per line" },
  { key: "max_index_depth", value: "20", type: "number", group: 6, flag: 1, help: "max depth of index" },
  { key: "index_progress", value: "{}", type: "text", group: 0, flag: 1 },
  { key: "sso_login_enabled", value: "false", type: "bool", group: 7 },
  {
    key: "sso_login_platform",
    value: "",
    type: "select",
    options: "Casdoor,Github,Microsoft,Google,Dingtalk,OIDC",
    group: 7,
  },
  { key: "sso_client_id", value: "", group: 7, flag: 1 },
  { key: "sso_client_secret", value: "", group: 7, flag: 1 },
  { key: "sso_oidc_username_key", value: "name", group: 7, flag: 1 },
  { key: "sso_organization_name", value: "", group: 7, flag: 1 },
  { key: "sso_application_name", value: "", group: 7, flag: 1 },
  { key: "sso_endpoint_name", value: "", group: 7, flag: 1 },
  { key: "sso_jwt_public_key", value: "", group: 7, flag: 1 },
  { key: "sso_extra_scopes", value: "", group: 7, flag: 1 },
  { key: "sso_auto_register", value: "false", type: "bool", group: 7, flag: 1 },
  { key: "sso_default_dir", value: "/", group: 7, flag: 1 },
  { key: "sso_default_permission", value: "0", type: "number", group: 7, flag: 1 },
  { key: "sso_compatibility_mode", value: "false", type: "bool", group: 7 },
  { key: "ldap_login_enabled", value: "false", type: "bool", group: 8 },
  { key: "ldap_server", value: "", group: 8, flag: 1 },
  { key: "ldap_manager_dn", value: "", group: 8, flag: 1 },
  { key: "ldap_manager_password", value: "", group: 8, flag: 1 },
  { key: "ldap_user_search_base", value: "", group: 8, flag: 1 },
  { key: "ldap_user_search_filter", value: "(uid=%s)", group: 8, flag: 1 },
  { key: "ldap_default_dir", value: "/", group: 8, flag: 1 },
  { key: "ldap_default_permission", value: "0", type: "number", group: 8, flag: 1 },
  { key: "ldap_login_tips", value: "login with ldap", group: 8 },
  { key: "s3_access_key_id", value: "", group: 9, flag: 1 },
  { key: "s3_secret_access_key", value: "", group: 9, flag: 1 },
  { key: "s3_buckets", value: "[]", group: 9, flag: 1 },
  { key: "ftp_public_host", value: "127.0.0.1", group: 10, flag: 1 },
  { key: "ftp_pasv_port_map", value: "", type: "text", group: 10, flag: 1 },
  {
    key: "ftp_proxy_user_agent",
    value:
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/87.0.4280.88 Safari/537.36",
    group: 10,
    flag: 1,
  },
  { key: "ftp_mandatory_tls", value: "false", type: "bool", group: 10, flag: 1 },
  { key: "ftp_implicit_tls", value: "false", type: "bool", group: 10, flag: 1 },
  { key: "ftp_tls_private_key_path", value: "", group: 10, flag: 1 },
  { key: "ftp_tls_public_cert_path", value: "", group: 10, flag: 1 },
  { key: "offline_download_task_threads_num", value: "5", type: "number", group: 11, flag: 1 },
  { key: "offline_download_transfer_task_threads_num", value: "5", type: "number", group: 11, flag: 1 },
  { key: "upload_task_threads_num", value: "5", type: "number", group: 11, flag: 1 },
  { key: "copy_task_threads_num", value: "5", type: "number", group: 11, flag: 1 },
  { key: "decompress_download_task_threads_num", value: "5", type: "number", group: 11, flag: 1 },
  { key: "decompress_upload_task_threads_num", value: "5", type: "number", group: 11, flag: 1 },
  { key: "max_client_download_speed", value: "-1", type: "number", group: 11, flag: 1 },
  { key: "max_client_upload_speed", value: "-1", type: "number", group: 11, flag: 1 },
  { key: "max_server_download_speed", value: "-1", type: "number", group: 11, flag: 1 },
  { key: "max_server_upload_speed", value: "-1", type: "number", group: 11, flag: 1 },
  { key: "aria2_uri", value: "http://localhost:6800/jsonrpc", group: 5, flag: 1 },
  { key: "aria2_secret", value: "", group: 5, flag: 1 },
  { key: "qbittorrent_url", value: "http://admin:adminadmin@localhost:8080/", group: 5, flag: 1 },
  { key: "qbittorrent_seedtime", value: "0", type: "number", group: 5, flag: 1 },
  { key: "transmission_uri", value: "http://localhost:9091/transmission/rpc", group: 5, flag: 1 },
  { key: "transmission_seedtime", value: "0", type: "number", group: 5, flag: 1 },
  // Past AList's table, so its indexes stay. Chunked uploads (OpenList
  // internal/bootstrap/data/setting.go:253-254; docs/decisions.md D12.2).
  { key: "multipart_enabled", value: "true", type: "bool", group: 11 },
  {
    key: "multipart_chunk_size",
    value: "16",
    type: "number",
    group: 11,
    help: "MiB per chunk of a chunked upload, 1 to 95 (Cloudflare refuses request bodies over 100 MB); S3 storages take at least 5",
  },
  // The manual scan's progress (docs/decisions.md D18.1), as index_progress is the build's.
  { key: "scan_progress", value: "{}", type: "text", group: 0, flag: 1 },
  {
    key: "share_summary_content",
    value: SHARE_SUMMARY,
    type: "text",
    group: 4,
    help: "The message the web UI copies for a share link: a Handlebars template over the share, site_title and base_url",
  },
  // OpenList's share settings that the served web UI reads (OpenList internal/bootstrap/data/setting.go:160-185).
  // Previews inside a share fetch the share's own /sd links, so they pass its guards and count as
  // downloads (docs/decisions.md D14.7).
  {
    key: "share_preview",
    value: "false",
    type: "bool",
    group: 4,
    help: "The web UI previews files inside share links (each preview is a download of the share)",
  },
  {
    key: "share_archive_preview",
    value: "false",
    type: "bool",
    group: 4,
    help: "The web UI browses ZIPs inside share links (each entry opened is a download of the share)",
  },
  {
    key: "share_force_proxy",
    value: "true",
    type: "bool",
    group: 4,
    flag: 2,
    help: "Gatehouse always streams share downloads through itself, from every storage",
  },
  { key: "share_preview_download_by_default", value: "true", type: "bool", group: 3 },
  { key: "share_preview_archives_by_default", value: "false", type: "bool", group: 3 },
  // OpenList's LDAP TLS setting, and StartTLS (docs/decisions.md D21.1): workerd's connect() always
  // verifies the directory's certificate, so ldap_skip_tls_verify cannot turn that off.
  {
    key: "ldap_skip_tls_verify",
    value: "false",
    type: "bool",
    group: 8,
    flag: 1,
    help: "Not supported on Workers: the directory's certificate is always verified",
  },
  {
    key: "ldap_start_tls",
    value: "false",
    type: "bool",
    group: 8,
    flag: 1,
    help: "Upgrade an ldap:// connection with StartTLS before binding",
  },
];

export const SETTING_DEFINITIONS: readonly SettingDefinition[] = DEFINITION_ROWS.map((row) => ({
  type: "string",
  options: "",
  flag: SettingFlag.PUBLIC,
  help: "",
  ...row,
}));

export const settingDefinitionByKey: ReadonlyMap<string, SettingDefinition & { index: number }> = new Map(
  SETTING_DEFINITIONS.map((definition, index) => [definition.key, { ...definition, index }]),
);
