// S3 and S3-compatible services: the check lists at most one object under the root with a
// SigV4-signed request, which proves the endpoint, the bucket and the key pair together.
import { cleanPath } from "../lib/path.ts";
import type { SigningKeys } from "../lib/sigv4.ts";
import { requireText } from "./addition.ts";
import { unreachable } from "./failures.ts";
import { driverConfig, items } from "./items.ts";
import { s3Bucket, s3Files, signedRequest, xmlText } from "./s3-files.ts";
import { CheckFailed, type Addition, type Driver } from "./types.ts";

export const s3: Driver = {
  config: driverConfig({ name: "S3", local_sort: true, default_root: "/" }),
  additional: items([
    { name: "root_folder_path", type: "string", default: "/", required: true },
    { name: "bucket", type: "string", required: true },
    { name: "endpoint", type: "string", required: true },
    { name: "region", type: "string" },
    { name: "access_key_id", type: "string", required: true },
    { name: "secret_access_key", type: "string", required: true },
    { name: "session_token", type: "string" },
    { name: "custom_host", type: "string" },
    { name: "enable_custom_host_presign", type: "bool" },
    { name: "sign_url_expire", type: "number", default: "4" },
    { name: "placeholder", type: "string" },
    { name: "force_path_style", type: "bool" },
    { name: "list_object_version", type: "select", default: "v1", options: "v1,v2" },
    { name: "remove_bucket", type: "bool", help: "Remove bucket name from path when using custom host." },
    { name: "add_filename_to_disposition", type: "bool", help: "Add filename to Content-Disposition header." },
    {
      name: "storage_class",
      type: "select",
      options: ",standard,standard_ia,onezone_ia,intelligent_tiering,glacier,glacier_ir,deep_archive,archive",
      help: "Storage class for new objects. AWS and Tencent COS support different subsets (COS uses ARCHIVE/DEEP_ARCHIVE).",
    },
    // OpenList's (drivers/s3/meta.go:24-25; docs/decisions.md D12.4): browsers PUT straight to the bucket.
    {
      name: "enable_direct_upload",
      type: "bool",
      help: "Let the web UI upload straight to the bucket (HTTP Direct); the bucket needs a CORS rule allowing PUT from the site.",
    },
    {
      name: "direct_upload_host",
      type: "string",
      help: "Host (or scheme://host) that replaces the endpoint's in direct upload URLs.",
    },
  ]),
  files: (storage) => s3Files(storage),
  async check(addition, context) {
    const endpoint = requireText(addition, "endpoint");
    const { url, keys } = listUrl(addition);
    const request = await signedRequest(keys, url.toString());
    let response: Response;
    try {
      response = await fetch(request, { signal: context.signal });
    } catch (error) {
      throw unreachable(endpoint, error, context);
    }
    const body = await response.text().catch((error: unknown) => {
      throw unreachable(endpoint, error, context);
    });
    if (response.ok) return;
    const code = xmlText(body, "Code");
    throw new CheckFailed(
      code
        ? `${code}: ${xmlText(body, "Message") ?? ""}`.trim()
        : `${endpoint} answered HTTP ${response.status} ${response.statusText}`,
    );
  },
};

/** ListObjects of at most one key under the root, as the storage lists (AList's default is v1, which every S3 service answers). */
function listUrl(addition: Addition): { url: URL; keys: SigningKeys } {
  const { bucketUrl, keys } = s3Bucket(addition);
  const url = new URL(`${bucketUrl}/`);
  const root = cleanPath(addition.text("root_folder_path")).slice(1);
  if (addition.text("list_object_version") === "v2") url.searchParams.set("list-type", "2");
  url.searchParams.set("max-keys", "1");
  url.searchParams.set("prefix", root === "" ? "" : `${root}/`);
  return { url, keys };
}
