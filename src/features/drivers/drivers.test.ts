// The driver group: templates field by field against AList v3.58.0 (common items with their
// conditions: internal/op/driver.go:61 `getMainItems`; additional items and configs: each driver's
// drivers/<name>/meta.go), written here from AList's source, not from src/.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { users } from "../../db/schema.ts";
import { getAs, login, signInAdmin } from "../../../test/support/auth.ts";
import { createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let admin: string;
beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture.close());

type Row = [name: string, type: string, defaultValue: string, options: string, required: boolean, help: string];
const item = ([name, type, defaultValue, options, required, help]: Row) => ({
  name,
  type,
  default: defaultValue,
  options,
  required,
  help,
});

// AList v3.58.0 internal/op/driver.go:61-153, one row per common item; webdav_policy has two forms.
const COMMON: Record<string, Row> = {
  mount_path: [
    "mount_path",
    "string",
    "",
    "",
    true,
    "The path you want to mount to, it is unique and cannot be repeated",
  ],
  order: ["order", "number", "", "", false, "use to sort"],
  remark: ["remark", "text", "", "", false, ""],
  cache_expiration: ["cache_expiration", "number", "30", "", true, "The cache expiration time for this storage"],
  web_proxy: ["web_proxy", "bool", "", "", false, ""],
  webdav_302: ["webdav_policy", "select", "302_redirect", "302_redirect,use_proxy_url,native_proxy", true, ""],
  webdav_native: ["webdav_policy", "select", "native_proxy", "use_proxy_url,native_proxy", true, ""],
  proxy_range: ["proxy_range", "bool", "", "", false, "Need to enable proxy"],
  down_proxy_url: ["down_proxy_url", "text", "", "", false, ""],
  down_proxy_sign: ["down_proxy_sign", "bool", "true", "", false, ""],
  order_by: ["order_by", "select", "", "name,size,modified", false, ""],
  order_direction: ["order_direction", "select", "", "asc,desc", false, ""],
  extract_folder: ["extract_folder", "select", "", "front,back", false, ""],
  disable_index: ["disable_index", "bool", "false", "", true, ""],
  enable_sign: ["enable_sign", "bool", "false", "", true, ""],
};
const HEAD = ["mount_path", "order", "remark"];
const TAIL = [
  "down_proxy_url",
  "down_proxy_sign",
  "order_by",
  "order_direction",
  "extract_folder",
  "disable_index",
  "enable_sign",
];

const config = (
  name: string,
  flags: Partial<Record<"local_sort" | "only_local" | "only_proxy" | "no_cache" | "no_upload" | "need_ms", boolean>>,
  defaultRoot: string,
) => ({
  name,
  local_sort: false,
  only_local: false,
  only_proxy: false,
  no_cache: false,
  no_upload: false,
  need_ms: false,
  ...flags,
  default_root: defaultRoot,
  alert: "",
});

const EXPECTED: Record<string, { config: ReturnType<typeof config>; common: string[]; additional: Row[] }> = {
  Local: {
    config: config("Local", { local_sort: true, only_local: true, no_cache: true }, "/"),
    common: [...HEAD, "webdav_native", ...TAIL],
    additional: [
      ["root_folder_path", "string", "/", "", true, ""],
      ["thumbnail", "bool", "", "", true, "enable thumbnail"],
      ["use_ffmpeg", "bool", "", "", true, "use ffmpeg to generate thumbnail"],
      ["thumb_cache_folder", "string", "", "", false, ""],
      [
        "thumb_concurrency",
        "string",
        "16",
        "",
        false,
        "Number of concurrent thumbnail generation goroutines. This controls how many thumbnails can be generated in parallel.",
      ],
      [
        "thumb_pixel",
        "string",
        "320",
        "",
        false,
        "Specifies the target width for image thumbnails in pixels. The height of the thumbnail will be calculated automatically to maintain the original aspect ratio of the image.",
      ],
      [
        "video_thumb_pos",
        "string",
        "20%",
        "",
        false,
        "The position of the video thumbnail. If the value is a number (integer ot floating point), it represents the time in seconds. If the value ends with '%', it represents the percentage of the video duration.",
      ],
      ["show_hidden", "bool", "true", "", false, "show hidden directories and files"],
      ["mkdir_perm", "string", "777", "", false, ""],
      [
        "recycle_bin_path",
        "string",
        "delete permanently",
        "",
        false,
        "path to recycle bin, delete permanently if empty or keep 'delete permanently'",
      ],
    ],
  },
  S3: {
    config: config("S3", { local_sort: true }, "/"),
    common: [...HEAD, "cache_expiration", "web_proxy", "webdav_302", ...TAIL],
    additional: [
      ["root_folder_path", "string", "/", "", true, ""],
      ["bucket", "string", "", "", true, ""],
      ["endpoint", "string", "", "", true, ""],
      ["region", "string", "", "", false, ""],
      ["access_key_id", "string", "", "", true, ""],
      ["secret_access_key", "string", "", "", true, ""],
      ["session_token", "string", "", "", false, ""],
      ["custom_host", "string", "", "", false, ""],
      ["enable_custom_host_presign", "bool", "", "", false, ""],
      ["sign_url_expire", "number", "4", "", false, ""],
      ["placeholder", "string", "", "", false, ""],
      ["force_path_style", "bool", "", "", false, ""],
      ["list_object_version", "select", "v1", "v1,v2", false, ""],
      ["remove_bucket", "bool", "", "", false, "Remove bucket name from path when using custom host."],
      ["add_filename_to_disposition", "bool", "", "", false, "Add filename to Content-Disposition header."],
      [
        "storage_class",
        "select",
        "",
        ",standard,standard_ia,onezone_ia,intelligent_tiering,glacier,glacier_ir,deep_archive,archive",
        false,
        "Storage class for new objects. AWS and Tencent COS support different subsets (COS uses ARCHIVE/DEEP_ARCHIVE).",
      ],
      // OpenList's, past AList's items (docs/decisions.md D11.4).
      [
        "enable_direct_upload",
        "bool",
        "",
        "",
        false,
        "Let the web UI upload straight to the bucket (HTTP Direct); the bucket needs a CORS rule allowing PUT from the site.",
      ],
      [
        "direct_upload_host",
        "string",
        "",
        "",
        false,
        "Host (or scheme://host) that replaces the endpoint's in direct upload URLs.",
      ],
    ],
  },
  FTP: {
    config: config("FTP", { local_sort: true, only_local: true }, "/"),
    common: [...HEAD, "cache_expiration", "webdav_native", ...TAIL],
    additional: [
      ["address", "string", "", "", true, ""],
      ["encoding", "string", "", "", true, ""],
      ["username", "string", "", "", true, ""],
      ["password", "string", "", "", true, ""],
      ["root_folder_path", "string", "/", "", true, ""],
    ],
  },
  SFTP: {
    config: config("SFTP", { local_sort: true, only_local: true }, "/"),
    common: [...HEAD, "cache_expiration", "webdav_native", ...TAIL],
    additional: [
      ["address", "string", "", "", true, ""],
      ["username", "string", "", "", true, ""],
      ["private_key", "text", "", "", false, ""],
      ["password", "string", "", "", false, ""],
      ["passphrase", "string", "", "", false, ""],
      ["root_folder_path", "string", "/", "", true, ""],
      ["ignore_symlink_error", "bool", "false", "", false, ""],
    ],
  },
  WebDav: {
    config: config("WebDav", { local_sort: true, only_proxy: true }, "/"),
    common: [...HEAD, "cache_expiration", "webdav_native", ...TAIL],
    additional: [
      ["vendor", "select", "other", "sharepoint,other", false, ""],
      ["address", "string", "", "", true, ""],
      ["username", "string", "", "", true, ""],
      ["password", "string", "", "", true, ""],
      ["root_folder_path", "string", "/", "", true, ""],
    ],
  },
  SMB: {
    config: config("SMB", { local_sort: true, only_local: true, no_cache: true }, "."),
    common: [...HEAD, "webdav_native", ...TAIL],
    additional: [
      ["root_folder_path", "string", ".", "", true, ""],
      ["address", "string", "", "", true, ""],
      ["username", "string", "", "", true, ""],
      ["password", "string", "", "", false, ""],
      ["share_name", "string", "", "", true, ""],
    ],
  },
  Alias: {
    config: config("Alias", { local_sort: true, no_cache: true }, "/"),
    common: [...HEAD, "web_proxy", "webdav_302", "proxy_range", ...TAIL],
    additional: [
      ["paths", "text", "", "", true, ""],
      ["protect_same_name", "bool", "true", "", false, "Protects same-name files from Delete or Rename"],
      ["download_concurrency", "number", "0", "", false, "Need to enable proxy"],
      ["download_part_size", "number", "0", "", false, "Need to enable proxy. Unit: KB"],
      ["writable", "bool", "false", "", false, ""],
    ],
  },
  Crypt: {
    config: config("Crypt", { local_sort: true, only_proxy: true, no_cache: true }, "/"),
    common: [...HEAD, "webdav_native", ...TAIL],
    additional: [
      ["filename_encryption", "select", "off", "off,standard,obfuscate", true, ""],
      ["directory_name_encryption", "select", "false", "false,true", true, ""],
      ["remote_path", "string", "", "", true, "This is where the encrypted data stores"],
      ["password", "string", "", "", true, "the main password"],
      [
        "salt",
        "string",
        "",
        "",
        false,
        "If you don't know what is salt, treat it as a second password. Optional but recommended",
      ],
      ["encrypted_suffix", "string", ".bin", "", true, "for advanced user only! encrypted files will have this suffix"],
      ["filename_encoding", "select", "base64", "base64,base32,base32768", true, "for advanced user only!"],
      ["thumbnail", "bool", "false", "", true, "enable thumbnail which pre-generated under .thumbnails folder"],
      ["show_hidden", "bool", "true", "", false, "show hidden directories and files"],
    ],
  },
  // From AList v3.58.0's drivers/url_tree/meta.go (no_cache: no cache_expiration item).
  UrlTree: {
    config: config("UrlTree", { local_sort: true, no_cache: true }, ""),
    common: [...HEAD, "web_proxy", "webdav_302", ...TAIL],
    additional: [
      [
        "url_structure",
        "text",
        "https://jsd.nn.ci/gh/alist-org/alist/README.md\nhttps://jsd.nn.ci/gh/alist-org/alist/README_cn.md\nfolder:\n  CONTRIBUTING.md:1635:https://jsd.nn.ci/gh/alist-org/alist/CONTRIBUTING.md\n  CODE_OF_CONDUCT.md:2093:https://jsd.nn.ci/gh/alist-org/alist/CODE_OF_CONDUCT.md",
        "",
        true,
        "structure:FolderName:\n  [FileName:][FileSize:][Modified:]Url",
      ],
      ["head_size", "bool", "false", "", false, "Use head method to get file size, but it may be failed."],
      ["writable", "bool", "false", "", false, ""],
    ],
  },
  Virtual: {
    config: config("Virtual", { local_sort: true, only_local: true, need_ms: true }, ""),
    common: [...HEAD, "cache_expiration", "webdav_native", ...TAIL],
    additional: [
      ["root_folder_path", "string", "", "", false, ""],
      ["num_file", "number", "30", "", true, ""],
      ["num_folder", "number", "30", "", true, ""],
      ["max_file_size", "number", "1073741824", "", true, ""],
      ["min_file_size", "number", "1048576", "", true, ""],
    ],
  },
};

const expectedInfo = (name: string) => {
  const expected = EXPECTED[name]!;
  return {
    common: expected.common.map((key) => item(COMMON[key]!)),
    additional: expected.additional.map(item),
    config: expected.config,
  };
};

describe("driver templates", () => {
  it("names the ten drivers in alphabetical order, the same on every call", async () => {
    const names = ["Alias", "Crypt", "FTP", "Local", "S3", "SFTP", "SMB", "UrlTree", "Virtual", "WebDav"];
    expect(await getAs(fixture, "/api/admin/driver/names", admin)).toEqual({
      code: 200,
      message: "success",
      data: names,
    });
    expect((await getAs(fixture, "/api/admin/driver/names", admin)).data).toEqual(names);
  });

  for (const name of Object.keys(EXPECTED)) {
    it(`serves ${name}'s common items, additional items and config as AList v3.58.0 lists them`, async () => {
      const reply = await getAs(fixture, `/api/admin/driver/info?driver=${name}`, admin);
      expect(reply).toEqual({ code: 200, message: "success", data: expectedInfo(name) });
      // Every item carries all six keys, in AList's key set.
      for (const entry of [...reply.data.common, ...reply.data.additional]) {
        expect(Object.keys(entry).sort()).toEqual(["default", "help", "name", "options", "required", "type"]);
      }
    });
  }

  it("lists every template by name, equal to info", async () => {
    const reply = await getAs(fixture, "/api/admin/driver/list", admin);
    expect(reply.code).toBe(200);
    expect(reply.data).toEqual(Object.fromEntries(Object.keys(EXPECTED).map((name) => [name, expectedInfo(name)])));
  });

  it("answers an unknown driver with 404 and a missing one with 400", async () => {
    expect(await getAs(fixture, "/api/admin/driver/info?driver=Nope", admin)).toEqual({
      code: 404,
      message: "driver [Nope] not found",
      data: null,
    });
    expect(await getAs(fixture, "/api/admin/driver/info?driver=s3", admin)).toEqual({
      code: 404,
      message: "driver [s3] not found",
      data: null,
    });
    expect(await getAs(fixture, "/api/admin/driver/info", admin)).toEqual({
      code: 400,
      message: "driver: is required",
      data: null,
    });
    expect(await getAs(fixture, "/api/admin/driver/info?driver=", admin)).toEqual({
      code: 400,
      message: "driver: is required",
      data: null,
    });
  });

  it("is for admins only", async () => {
    await fixture.db
      .insert(users)
      .values({ username: "dora", passwordHash: await hashStaticHash(await staticHash("dora pw")), roleIds: [] });
    const dora = (await login(fixture, { username: "dora", password: "dora pw" })).data!.token;
    for (const path of ["/api/admin/driver/list", "/api/admin/driver/names", "/api/admin/driver/info?driver=S3"]) {
      expect(await getAs(fixture, path, dora)).toEqual({ code: 403, message: "You are not an admin", data: null });
      expect(await (await fixture.request(path)).json()).toEqual({
        code: 401,
        message: "Guest user is disabled, login please",
        data: null,
      });
    }
  });
});
