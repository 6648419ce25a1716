// The settings table of AList v3.58.0 (reference §13.3 and §8.1), the single source for seeding,
// validation and metadata repair. A row's index is its position in this list.

export const SettingGroup = {
  SINGLE: 0,
  SITE: 1,
  STYLE: 2,
  PREVIEW: 3,
  GLOBAL: 4,
  OFFLINE_DOWNLOAD: 5,
  INDEX: 6,
  SSO: 7,
  LDAP: 8,
  S3: 9,
  FTP: 10,
  TRAFFIC: 11,
} as const;

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

/** What clients read as the server version; they gate features on it (DECISIONS §3). */
export const ALIST_COMPATIBLE_VERSION = "v3.58.0";

/** Placeholder for the permanent token's default: the seed draws a fresh one per install. */
export const GENERATED_TOKEN = "";

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
  String.raw`(?:[[:xdigit:]]{1,4}:){7}[[:xdigit:]]{1,4}|(?:[[:xdigit:]]{1,4}:){1,7}:|(?:[[:xdigit:]]{1,4}:){1,6}:[[:xdigit:]]{1,4}|(?:[[:xdigit:]]{1,4}:){1,5}(?::[[:xdigit:]]{1,4}){1,2}|(?:[[:xdigit:]]{1,4}:){1,4}(?::[[:xdigit:]]{1,4}){1,3}|(?:[[:xdigit:]]{1,4}:){1,3}(?::[[:xdigit:]]{1,4}){1,4}|(?:[[:xdigit:]]{1,4}:){1,2}(?::[[:xdigit:]]{1,4}){1,5}|[[:xdigit:]]{1,4}:(?::[[:xdigit:]]{1,4}){1,6}|:(?:(?::[[:xdigit:]]{1,4}){1,7}|:)`,
  String.raw`(?U)access_token=(.*)&`,
].join("\n");

export const SETTING_DEFINITIONS: readonly SettingDefinition[] = [
  { key: "version", value: ALIST_COMPATIBLE_VERSION, type: "string", options: "", group: 1, flag: 2, help: "" },
  { key: "site_title", value: "AList", type: "string", options: "", group: 1, flag: 0, help: "" },
  { key: "announcement", value: "### repo\nhttps://github.com/alist-org/alist", type: "text", options: "", group: 1, flag: 0, help: "" },
  { key: "pagination_type", value: "all", type: "select", options: "all,pagination,load_more,auto_load_more", group: 1, flag: 0, help: "" },
  { key: "default_page_size", value: "50", type: "number", options: "", group: 1, flag: 0, help: "" },
  { key: "allow_indexed", value: "false", type: "bool", options: "", group: 1, flag: 0, help: "" },
  { key: "allow_mounted", value: "true", type: "bool", options: "", group: 1, flag: 0, help: "" },
  { key: "robots_txt", value: "User-agent: *\nAllow: /", type: "text", options: "", group: 1, flag: 0, help: "" },
  { key: "allow_register", value: "false", type: "bool", options: "", group: 1, flag: 0, help: "" },
  { key: "default_role", value: "1", type: "select", options: "", group: 1, flag: 0, help: "" },
  { key: "use_newui", value: "false", type: "bool", options: "", group: 1, flag: 0, help: "" },
  // AList's defaults load from cdn.jsdelivr.net; ours ship with the web UI (scripts/webui-logo.svg).
  { key: "logo", value: "/images/logo.svg", type: "text", options: "", group: 2, flag: 0, help: "" },
  { key: "favicon", value: "/images/logo.svg", type: "string", options: "", group: 2, flag: 0, help: "" },
  { key: "main_color", value: "#1890ff", type: "string", options: "", group: 2, flag: 0, help: "" },
  { key: "home_icon", value: "🏠", type: "string", options: "", group: 2, flag: 0, help: "" },
  { key: "home_container", value: "max_980px", type: "select", options: "max_980px,hope_container", group: 2, flag: 0, help: "" },
  { key: "settings_layout", value: "list", type: "select", options: "list,responsive", group: 2, flag: 0, help: "" },
  { key: "text_types", value: "txt,htm,html,xml,java,properties,sql,js,md,json,conf,ini,vue,php,py,bat,gitignore,yml,go,sh,c,cpp,h,hpp,tsx,vtt,srt,ass,rs,lrc", type: "text", options: "", group: 3, flag: 1, help: "" },
  { key: "audio_types", value: "mp3,flac,ogg,m4a,wav,opus,wma", type: "text", options: "", group: 3, flag: 1, help: "" },
  { key: "video_types", value: "mp4,mkv,avi,mov,rmvb,webm,flv,m3u8", type: "text", options: "", group: 3, flag: 1, help: "" },
  { key: "image_types", value: "jpg,tiff,jpeg,png,gif,bmp,svg,ico,swf,webp", type: "text", options: "", group: 3, flag: 1, help: "" },
  { key: "proxy_types", value: "m3u8,url", type: "text", options: "", group: 3, flag: 1, help: "" },
  { key: "proxy_ignore_headers", value: "authorization,referer", type: "text", options: "", group: 3, flag: 1, help: "" },
  { key: "external_previews", value: "{}", type: "text", options: "", group: 3, flag: 0, help: "" },
  { key: "iframe_previews", value: IFRAME_PREVIEWS, type: "text", options: "", group: 3, flag: 0, help: "" },
  { key: "audio_cover", value: "https://jsd.nn.ci/gh/alist-org/logo@main/logo.svg", type: "string", options: "", group: 3, flag: 0, help: "" },
  { key: "audio_autoplay", value: "true", type: "bool", options: "", group: 3, flag: 0, help: "" },
  { key: "video_autoplay", value: "true", type: "bool", options: "", group: 3, flag: 0, help: "" },
  { key: "thumbnail_size", value: "144", type: "number", options: "", group: 3, flag: 0, help: "Thumbnail width in pixels. Height is scaled proportionally." },
  { key: "preview_archives_by_default", value: "true", type: "bool", options: "", group: 3, flag: 0, help: "" },
  { key: "readme_autorender", value: "true", type: "bool", options: "", group: 3, flag: 0, help: "" },
  { key: "filter_readme_scripts", value: "true", type: "bool", options: "", group: 3, flag: 0, help: "" },
  { key: "hide_files", value: "/\\/README.md/i", type: "text", options: "", group: 4, flag: 0, help: "" },
  { key: "package_download", value: "true", type: "bool", options: "", group: 4, flag: 0, help: "" },
  { key: "customize_head", value: "", type: "text", options: "", group: 4, flag: 1, help: "" },
  { key: "customize_body", value: "", type: "text", options: "", group: 4, flag: 1, help: "" },
  { key: "link_expiration", value: "0", type: "number", options: "", group: 4, flag: 1, help: "" },
  { key: "sign_all", value: "true", type: "bool", options: "", group: 4, flag: 1, help: "" },
  { key: "privacy_regs", value: PRIVACY_REGS, type: "text", options: "", group: 4, flag: 1, help: "" },
  { key: "ocr_api", value: "https://api.alistgo.com/ocr/file/json", type: "string", options: "", group: 4, flag: 0, help: "" },
  { key: "filename_char_mapping", value: "{\"/\": \"|\"}", type: "text", options: "", group: 4, flag: 0, help: "" },
  { key: "forward_direct_link_params", value: "false", type: "bool", options: "", group: 4, flag: 0, help: "" },
  { key: "ignore_direct_link_params", value: "sign,alist_ts", type: "string", options: "", group: 4, flag: 0, help: "" },
  { key: "webauthn_login_enabled", value: "false", type: "bool", options: "", group: 4, flag: 0, help: "" },
  { key: "max_devices", value: "0", type: "number", options: "", group: 4, flag: 0, help: "" },
  { key: "device_evict_policy", value: "deny", type: "select", options: "deny,evict_oldest", group: 4, flag: 0, help: "" },
  { key: "device_session_ttl", value: "86400", type: "number", options: "", group: 4, flag: 0, help: "" },
  { key: "token", value: GENERATED_TOKEN, type: "string", options: "", group: 0, flag: 1, help: "" },
  { key: "search_index", value: "none", type: "select", options: "database,database_non_full_text,bleve,meilisearch,none", group: 6, flag: 0, help: "" },
  { key: "auto_update_index", value: "false", type: "bool", options: "", group: 6, flag: 0, help: "" },
  { key: "ignore_paths", value: "", type: "text", options: "", group: 6, flag: 1, help: "one path per line" },
  { key: "max_index_depth", value: "20", type: "number", options: "", group: 6, flag: 1, help: "max depth of index" },
  { key: "index_progress", value: "{}", type: "text", options: "", group: 0, flag: 1, help: "" },
  { key: "sso_login_enabled", value: "false", type: "bool", options: "", group: 7, flag: 0, help: "" },
  { key: "sso_login_platform", value: "", type: "select", options: "Casdoor,Github,Microsoft,Google,Dingtalk,OIDC", group: 7, flag: 0, help: "" },
  { key: "sso_client_id", value: "", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_client_secret", value: "", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_oidc_username_key", value: "name", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_organization_name", value: "", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_application_name", value: "", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_endpoint_name", value: "", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_jwt_public_key", value: "", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_extra_scopes", value: "", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_auto_register", value: "false", type: "bool", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_default_dir", value: "/", type: "string", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_default_permission", value: "0", type: "number", options: "", group: 7, flag: 1, help: "" },
  { key: "sso_compatibility_mode", value: "false", type: "bool", options: "", group: 7, flag: 0, help: "" },
  { key: "ldap_login_enabled", value: "false", type: "bool", options: "", group: 8, flag: 0, help: "" },
  { key: "ldap_server", value: "", type: "string", options: "", group: 8, flag: 1, help: "" },
  { key: "ldap_manager_dn", value: "", type: "string", options: "", group: 8, flag: 1, help: "" },
  { key: "ldap_manager_password", value: "", type: "string", options: "", group: 8, flag: 1, help: "" },
  { key: "ldap_user_search_base", value: "", type: "string", options: "", group: 8, flag: 1, help: "" },
  { key: "ldap_user_search_filter", value: "(uid=%s)", type: "string", options: "", group: 8, flag: 1, help: "" },
  { key: "ldap_default_dir", value: "/", type: "string", options: "", group: 8, flag: 1, help: "" },
  { key: "ldap_default_permission", value: "0", type: "number", options: "", group: 8, flag: 1, help: "" },
  { key: "ldap_login_tips", value: "login with ldap", type: "string", options: "", group: 8, flag: 0, help: "" },
  { key: "s3_access_key_id", value: "", type: "string", options: "", group: 9, flag: 1, help: "" },
  { key: "s3_secret_access_key", value: "", type: "string", options: "", group: 9, flag: 1, help: "" },
  { key: "s3_buckets", value: "[]", type: "string", options: "", group: 9, flag: 1, help: "" },
  { key: "ftp_public_host", value: "127.0.0.1", type: "string", options: "", group: 10, flag: 1, help: "" },
  { key: "ftp_pasv_port_map", value: "", type: "text", options: "", group: 10, flag: 1, help: "" },
  { key: "ftp_proxy_user_agent", value: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/87.0.4280.88 Safari/537.36", type: "string", options: "", group: 10, flag: 1, help: "" },
  { key: "ftp_mandatory_tls", value: "false", type: "bool", options: "", group: 10, flag: 1, help: "" },
  { key: "ftp_implicit_tls", value: "false", type: "bool", options: "", group: 10, flag: 1, help: "" },
  { key: "ftp_tls_private_key_path", value: "", type: "string", options: "", group: 10, flag: 1, help: "" },
  { key: "ftp_tls_public_cert_path", value: "", type: "string", options: "", group: 10, flag: 1, help: "" },
  { key: "offline_download_task_threads_num", value: "5", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "offline_download_transfer_task_threads_num", value: "5", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "upload_task_threads_num", value: "5", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "copy_task_threads_num", value: "5", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "decompress_download_task_threads_num", value: "5", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "decompress_upload_task_threads_num", value: "5", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "max_client_download_speed", value: "-1", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "max_client_upload_speed", value: "-1", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "max_server_download_speed", value: "-1", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "max_server_upload_speed", value: "-1", type: "number", options: "", group: 11, flag: 1, help: "" },
  { key: "aria2_uri", value: "http://localhost:6800/jsonrpc", type: "string", options: "", group: 5, flag: 1, help: "" },
  { key: "aria2_secret", value: "", type: "string", options: "", group: 5, flag: 1, help: "" },
  { key: "qbittorrent_url", value: "http://admin:adminadmin@localhost:8080/", type: "string", options: "", group: 5, flag: 1, help: "" },
  { key: "qbittorrent_seedtime", value: "0", type: "number", options: "", group: 5, flag: 1, help: "" },
  { key: "transmission_uri", value: "http://localhost:9091/transmission/rpc", type: "string", options: "", group: 5, flag: 1, help: "" },
  { key: "transmission_seedtime", value: "0", type: "number", options: "", group: 5, flag: 1, help: "" },
];

export const settingDefinitionByKey: ReadonlyMap<string, SettingDefinition & { index: number }> = new Map(
  SETTING_DEFINITIONS.map((definition, index) => [definition.key, { ...definition, index }]),
);
