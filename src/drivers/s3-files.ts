// The file side of S3 (docs/decisions.md D7; AList v3.58.0 drivers/s3/util.go:81-189): folders are
// key prefixes, listed with ListObjects (v1 or v2, as `list_object_version` says) and a delimiter;
// a file is one HeadObject; downloads are presigned URLs computed here (no upstream call); writes
// are PutObject with a known length, CopyObject, and DeleteObjects in batches of 1000.
import { type SignOptions, type SigningKeys, signRequest } from "../lib/sigv4.ts";
import { cleanPath } from "../lib/path.ts";
import { anySignal, withLength } from "../lib/streams.ts";
import { requireText } from "./addition.ts";
import { errorText } from "./failures.ts";
import {
  CheckFailed,
  FileError,
  notAFolder,
  objectNotFound,
  type Addition,
  type FileBackend,
  type FileObject,
  type PartedUpload,
  type PartedUploads,
  type StorageHandle,
  type Upload,
} from "./types.ts";

/** Most objects a folder copy or move touches in one request (a subrequest each): the work stays bounded. */
const MAX_OBJECTS_PER_REQUEST = 1000;
/**
 * A folder's removal goes a listing page at a time (two subrequests per 1,000 objects), up to this
 * many pages, so a move between storages can remove a big source folder at its end.
 */
const MAX_REMOVE_PAGES = 100;
const DEFAULT_SIGN_HOURS = 4;
/** The largest single PutObject S3 accepts. */
const MAX_PUT_BYTES = 5 * 1024 ** 3;
/** How long a presigned direct upload may start: enough to begin, not to keep a door open. */
const DIRECT_UPLOAD_SECONDS = 15 * 60;
/** S3's smallest part of a multipart upload, except the last. */
const S3_MIN_PART_BYTES = 5 * 1024 ** 2;

interface S3Object {
  key: string;
  size: number;
  modified: Date;
  storageClass?: string;
}

/**
 * The bucket's URL (path-style for IPs, localhost and when asked, else virtual-hosted) and the
 * storage's SigV4 keys, for the check and the file side alike.
 */
export function s3Bucket(addition: Addition): { bucket: string; host: string; bucketUrl: string; keys: SigningKeys } {
  const endpoint = requireText(addition, "endpoint");
  const bucket = requireText(addition, "bucket");
  let base: URL;
  try {
    base = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `https://${endpoint}`);
  } catch (error) {
    throw new CheckFailed(`endpoint "${endpoint}" is not a URL: ${errorText(error)}`);
  }
  const pathStyle =
    addition.flag("force_path_style") ||
    base.hostname === "localhost" ||
    /^\d{1,3}(\.\d{1,3}){3}$/.test(base.hostname) ||
    base.hostname.startsWith("[");
  const basePath = base.pathname.replace(/\/+$/, "");
  const keys: SigningKeys = {
    accessKeyId: requireText(addition, "access_key_id"),
    secretAccessKey: requireText(addition, "secret_access_key"),
    service: "s3",
    region: addition.text("region") || "us-east-1",
  };
  const sessionToken = addition.text("session_token");
  if (sessionToken) keys.sessionToken = sessionToken;
  const bucketUrl = pathStyle
    ? `${base.protocol}//${base.host}${basePath}/${encodeURIComponent(bucket)}`
    : `${base.protocol}//${bucket}.${base.host}${basePath}`;
  return { bucket, host: base.host, bucketUrl, keys };
}

/**
 * `init` as a Request signed in its Authorization header, the payload unsigned (streamed bodies
 * cannot be hashed ahead). No retries: a 5xx is the caller's to report.
 */
export async function signedRequest(
  keys: SigningKeys,
  url: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Request> {
  const options: SignOptions = { method: init.method ?? "GET", headers: init.headers ?? {} };
  const signed = await signRequest(url, keys, options);
  // Node's fetch wants `duplex` for a streamed body; workerd ignores it.
  const full: RequestInit & { duplex?: "half" } = { ...init, headers: signed.headers };
  if (init.body instanceof ReadableStream) full.duplex = "half";
  return new Request(signed.url, full);
}

/** What every call to one storage's bucket needs: the bucket, its keys, the root and the options. */
interface S3 {
  storage: StorageHandle;
  addition: Addition;
  bucket: string;
  endpointHost: string;
  bucketUrl: string;
  keys: SigningKeys;
  /** The root folder's key prefix, without slashes at its ends ("" for the bucket's root). */
  root: string;
  placeholder: string;
  /** ListObjects v2 rather than v1 (AList's default). */
  v2: boolean;
}

/**
 * The S3 backend: the Files object of one storage, every operation a named function over its
 * context below, in this order: listing, reading and links, writing, multipart parts.
 */
export function s3Files(storage: StorageHandle): FileBackend {
  const { addition } = storage;
  const { bucket, host: endpointHost, bucketUrl, keys } = s3Bucket(addition);
  const s3: S3 = {
    storage,
    addition,
    bucket,
    endpointHost,
    bucketUrl,
    keys,
    root: cleanPath(addition.text("root_folder_path")).slice(1),
    placeholder: addition.text("placeholder") || ".alist",
    v2: addition.text("list_object_version") === "v2",
  };
  return {
    list: (dir) => listFolder(s3, dir),
    get: (path) => getObject(s3, path),

    linksWithoutLookup: true,
    link: (path) => linkOf(s3, path),

    makeDir: (parentDir, name) => makeFolder(s3, joinActual(parentDir, name)),
    async rename(path, newName) {
      await deleteKeys(s3, await copyTree(s3, path, joinActual(parentOfActual(path), newName)));
    },
    async move(path, dstDir) {
      await deleteKeys(s3, await copyTree(s3, path, joinActual(dstDir, baseOfActual(path))));
    },
    async copy(path, dstDir) {
      await copyTree(s3, path, joinActual(dstDir, baseOfActual(path)));
    },
    remove: (path) => removeTree(s3, path),
    put: (dir, upload) => putObject(s3, keyOf(s3, joinActual(dir, upload.name)), upload),

    parts: s3Parts(s3),
    ...(addition.flag("enable_direct_upload")
      ? {
          async directUpload(dir: string, name: string, size: number) {
            return {
              url: await presignPut(s3, keyOf(s3, joinActual(dir, name)), size),
              method: "PUT" as const,
              headers: {},
            };
          },
        }
      : {}),
  };
}

// Keys and paths.

/** The object key of an actual path (no leading slash), under the root. */
const keyOf = (s3: S3, path: string) => [s3.root, ...path.split("/").filter(Boolean)].filter(Boolean).join("/");
const urlOf = (s3: S3, key: string) => `${s3.bucketUrl}/${key.split("/").map(encodeURIComponent).join("/")}`;
const nameOf = (key: string) => key.slice(key.replace(/\/$/, "").lastIndexOf("/") + 1).replace(/\/$/, "");
const internalPath = (key: string) => `/${key.replace(/\/$/, "")}`;
const joinActual = (dir: string, name: string) => (dir === "/" ? `/${name}` : `${dir}/${name}`);
const parentOfActual = (path: string) => path.slice(0, Math.max(1, path.lastIndexOf("/")));
const baseOfActual = (path: string) => path.slice(path.lastIndexOf("/") + 1);

const folderPrefix = (s3: S3, path: string) => {
  const key = keyOf(s3, path);
  return key === "" ? "" : `${key}/`;
};

// Requests.

async function send(
  s3: S3,
  url: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  const request = await signedRequest(s3.keys, url, init);
  try {
    return await fetch(request, {
      signal: anySignal(s3.storage.signal, init.signal ?? undefined),
    });
  } catch (error) {
    throw new Error(`cannot reach ${s3.endpointHost}: ${errorText(error)}`);
  }
}

async function failure(s3: S3, response: Response, what: string): Promise<Error> {
  const body = await response.text().catch(() => "");
  const code = xmlText(body, "Code");
  if (response.status === 404 && (code === "NoSuchKey" || code === undefined)) return objectNotFound();
  return new Error(
    code
      ? `${what}: ${code}: ${xmlText(body, "Message") ?? ""}`.trim()
      : `${what}: ${s3.endpointHost} answered HTTP ${response.status}`,
  );
}

// Listing.

/**
 * One page of ListObjects under `prefix`: v1 (AList's default) pages with a marker, v2 with a
 * continuation token. `token` is whichever the previous page gave.
 */
async function listPage(s3: S3, prefix: string, delimiter: boolean, token: string | undefined, maxKeys = 1000) {
  const url = new URL(`${s3.bucketUrl}/`);
  if (s3.v2) url.searchParams.set("list-type", "2");
  url.searchParams.set("prefix", prefix);
  url.searchParams.set("max-keys", String(maxKeys));
  if (delimiter) url.searchParams.set("delimiter", "/");
  if (token) url.searchParams.set(s3.v2 ? "continuation-token" : "marker", token);
  const response = await send(s3, url.toString());
  if (!response.ok) throw await failure(s3, response, "list objects");
  const xml = await response.text();
  const objects: S3Object[] = blocks(xml, "Contents").map((block) => ({
    key: xmlText(block, "Key") ?? "",
    size: Number(xmlText(block, "Size") ?? 0),
    modified: new Date(xmlText(block, "LastModified") ?? 0),
    storageClass: xmlText(block, "StorageClass"),
  }));
  const prefixes = blocks(xml, "CommonPrefixes").map((block) => xmlText(block, "Prefix") ?? "");
  const truncated = xmlText(xml, "IsTruncated") === "true";
  // v1 gives NextMarker only with a delimiter; otherwise the last key is the marker.
  const lastKey = [...objects.map((o) => o.key), ...prefixes].sort().at(-1);
  const next = !truncated
    ? undefined
    : s3.v2
      ? xmlText(xml, "NextContinuationToken")
      : (xmlText(xml, "NextMarker") ?? lastKey);
  return { objects, prefixes, next };
}

/** Every key under a folder (placeholders included), at most `cap`: for copies and removals. */
async function allKeys(s3: S3, path: string, cap: number): Promise<S3Object[]> {
  const found: S3Object[] = [];
  let token: string | undefined;
  do {
    const page = await listPage(s3, folderPrefix(s3, path), false, token);
    found.push(...page.objects);
    if (found.length > cap)
      throw new Error(`more than ${cap} objects under ${path}: Gatehouse changes at most ${cap} objects per request`);
    token = page.next;
  } while (token);
  return found;
}

async function head(s3: S3, path: string): Promise<FileObject | null> {
  const key = keyOf(s3, path);
  const response = await send(s3, urlOf(s3, key), { method: "HEAD" });
  if (response.status === 404) return null;
  if (!response.ok) throw await failure(s3, response, "head object");
  return {
    name: nameOf(key),
    size: Number(response.headers.get("content-length") ?? 0),
    isDir: false,
    modified: new Date(response.headers.get("last-modified") ?? 0),
    path: internalPath(key),
    ...(response.headers.get("x-amz-storage-class")
      ? { storageClass: response.headers.get("x-amz-storage-class")! }
      : { storageClass: "STANDARD" }),
  };
}

async function isFolder(s3: S3, path: string): Promise<boolean> {
  if (keyOf(s3, path) === "") return true;
  const page = await listPage(s3, folderPrefix(s3, path), false, undefined, 1);
  return page.objects.length > 0;
}

async function listFolder(s3: S3, dir: string): Promise<FileObject[]> {
  const prefix = folderPrefix(s3, dir);
  const entries: FileObject[] = [];
  let token: string | undefined;
  do {
    const page = await listPage(s3, prefix, true, token);
    for (const folder of page.prefixes)
      entries.push({
        name: nameOf(folder),
        size: 0,
        isDir: true,
        modified: s3.storage.modified,
        path: internalPath(folder),
      });
    for (const object of page.objects) {
      if (object.key.endsWith("/")) continue;
      const name = nameOf(object.key);
      if (name === s3.placeholder) continue;
      entries.push({
        name,
        size: object.size,
        isDir: false,
        modified: object.modified,
        path: internalPath(object.key),
        ...(object.storageClass ? { storageClass: object.storageClass } : {}),
      });
    }
    token = page.next;
  } while (token);
  if (entries.length === 0 && prefix !== "" && !(await isFolder(s3, dir))) {
    throw (await head(s3, dir)) ? notAFolder() : objectNotFound();
  }
  return entries;
}

async function getObject(s3: S3, path: string): Promise<FileObject> {
  const { modified } = s3.storage;
  if (keyOf(s3, path) === "") return { name: "root", size: 0, isDir: true, modified, path: "/" };
  const file = await head(s3, path);
  if (file) return file;
  if (await isFolder(s3, path))
    return { name: nameOf(keyOf(s3, path)), size: 0, isDir: true, modified, path: internalPath(keyOf(s3, path)) };
  throw objectNotFound();
}

// Reading and links: presigned URLs, computed here without an upstream call.

async function linkOf(s3: S3, path: string): Promise<{ url: string }> {
  const key = keyOf(s3, path);
  return { url: s3.addition.text("custom_host") ? await customHostLink(s3, key) : await presign(s3, key, nameOf(key)) };
}

async function presign(s3: S3, key: string, name: string): Promise<string> {
  const hours = Number(s3.addition.text("sign_url_expire")) || DEFAULT_SIGN_HOURS; // 0 means the default (docs/decisions.md D8.6)
  const url = new URL(urlOf(s3, key));
  url.searchParams.set("X-Amz-Expires", String(Math.min(7 * 24 * 3600, Math.round(hours * 3600))));
  const escaped = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  url.searchParams.set(
    "response-content-disposition",
    s3.addition.flag("add_filename_to_disposition")
      ? `attachment; filename="${name.replace(/"/g, "")}"; filename*=UTF-8''${escaped}`
      : `attachment; filename*=UTF-8''${escaped}`,
  );
  return (await signRequest(url.toString(), s3.keys, { presign: true })).url;
}

/**
 * A link through `custom_host`: its host (and scheme), presigned only when asked (AList v3.58.0
 * drivers/s3/driver.go:128-134).
 */
async function customHostLink(s3: S3, key: string): Promise<string> {
  const { addition } = s3;
  const host = addition.text("custom_host");
  let url = addition.flag("enable_custom_host_presign")
    ? (
        await signRequest(
          `${urlOf(s3, key)}?X-Amz-Expires=${Math.round((Number(addition.text("sign_url_expire")) || DEFAULT_SIGN_HOURS) * 3600)}`,
          s3.keys,
          { presign: true },
        )
      ).url
    : urlOf(s3, key);
  const target = new URL(url);
  const custom = new URL(/^https?:\/\//i.test(host) ? host : `${target.protocol}//${host}`);
  target.protocol = custom.protocol;
  target.host = custom.host;
  url = target.toString();
  return addition.flag("remove_bucket") ? url.replace(`/${encodeURIComponent(s3.bucket)}`, "") : url;
}

// Writing.

async function makeFolder(s3: S3, path: string) {
  const response = await send(s3, urlOf(s3, `${folderPrefix(s3, path)}${s3.placeholder}`), {
    method: "PUT",
    body: "",
    headers: { "Content-Length": "0" },
  });
  if (!response.ok) throw await failure(s3, response, "make folder");
}

async function copyObject(s3: S3, fromKey: string, toKey: string) {
  const source = `/${s3.bucket}/${fromKey}`.split("/").map(encodeURIComponent).join("/");
  const response = await send(s3, urlOf(s3, toKey), { method: "PUT", headers: { "x-amz-copy-source": source } });
  if (!response.ok) throw await failure(s3, response, "copy object");
  await response.body?.cancel();
}

async function deleteKeys(s3: S3, keys: string[]) {
  for (let start = 0; start < keys.length; start += 1000) {
    const batch = keys.slice(start, start + 1000);
    const body = `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${batch.map((key) => `<Object><Key>${xmlEscape(key)}</Key></Object>`).join("")}</Delete>`;
    const response = await send(s3, `${s3.bucketUrl}/?delete`, {
      method: "POST",
      body,
      headers: { "Content-MD5": await md5Base64(body), "Content-Type": "application/xml" },
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(
        `delete objects: ${xmlText(text, "Code") ?? `HTTP ${response.status}`}: ${xmlText(text, "Message") ?? ""}`.trim(),
      );
    const failed = blocks(text, "Error").map((block) => `${xmlText(block, "Key")}: ${xmlText(block, "Code")}`);
    if (failed.length > 0)
      throw new Error(`delete objects: ${failed.length} not deleted (${failed.slice(0, 3).join("; ")})`);
  }
}

/** Copies a file, or a folder object by object; returns the source keys. */
async function copyTree(s3: S3, path: string, toPath: string): Promise<string[]> {
  const file = await head(s3, path);
  if (file) {
    await copyObject(s3, keyOf(s3, path), keyOf(s3, toPath));
    return [keyOf(s3, path)];
  }
  const keys = (await allKeys(s3, path, MAX_OBJECTS_PER_REQUEST)).map((object) => object.key);
  if (keys.length === 0) throw objectNotFound();
  const from = folderPrefix(s3, path);
  const to = folderPrefix(s3, toPath);
  for (const key of keys) await copyObject(s3, key, to + key.slice(from.length));
  return keys;
}

async function removeTree(s3: S3, path: string): Promise<void> {
  if (await head(s3, path)) return deleteKeys(s3, [keyOf(s3, path)]);
  // Each page deleted, the listing starts over: what is left is the next page. Nothing under it: already gone.
  for (let page = 0; page < MAX_REMOVE_PAGES; page++) {
    const { objects, next } = await listPage(s3, folderPrefix(s3, path), false, undefined);
    if (objects.length > 0)
      await deleteKeys(
        s3,
        objects.map((object) => object.key),
      );
    if (!next) return;
  }
  throw new Error(
    `more than ${MAX_REMOVE_PAGES * 1000} objects under ${path}: Gatehouse removes at most ${MAX_REMOVE_PAGES * 1000} objects per request`,
  );
}

async function putObject(s3: S3, key: string, upload: Upload) {
  if (upload.size > MAX_PUT_BYTES)
    throw new FileError(
      "upstream",
      `S3 takes at most ${MAX_PUT_BYTES} bytes in one upload; multipart uploads are not built yet`,
    );
  const headers: Record<string, string> = {
    "Content-Type": upload.contentType || "application/octet-stream",
    "Content-Length": String(upload.size),
  };
  const storageClass = s3.addition.text("storage_class");
  if (storageClass) headers["x-amz-storage-class"] = storageClass.toUpperCase();
  const response = await send(s3, urlOf(s3, key), {
    method: "PUT",
    body: withLength(upload.body, upload.size),
    headers,
    ...(upload.signal ? { signal: upload.signal } : {}),
  });
  if (!response.ok) throw await failure(s3, response, "put object");
  await response.body?.cancel();
}

/**
 * A PutObject of exactly `size` bytes to `key`, valid DIRECT_UPLOAD_SECONDS (OpenList signs no
 * length and keeps it for `sign_url_expire` hours: docs/decisions.md D12.4). The browser sends
 * Content-Length itself, so signing it costs the client nothing. `direct_upload_host` replaces
 * the host after signing, as OpenList does (drivers/s3/util.go:80-93): that host must accept the
 * endpoint's signature.
 */
async function presignPut(s3: S3, key: string, size: number): Promise<string> {
  const url = new URL(urlOf(s3, key));
  url.searchParams.set("X-Amz-Expires", String(DIRECT_UPLOAD_SECONDS));
  const signed = new URL(
    (
      await signRequest(url.toString(), s3.keys, {
        method: "PUT",
        headers: { "Content-Length": String(size) },
        presign: true,
        allHeaders: true,
      })
    ).url,
  );
  const host = s3.addition.text("direct_upload_host");
  if (host) {
    const custom = new URL(/^https?:\/\//i.test(host) ? host : `${signed.protocol}//${host}`);
    signed.protocol = custom.protocol;
    signed.host = custom.host;
  }
  return signed.toString();
}

// Multipart parts.

/**
 * S3's multipart upload: part i+1 carries chunk i, each streamed with its length; the parts
 * wait upstream, invisible, until CompleteMultipartUpload joins them (or Abort drops them).
 */
function s3Parts(s3: S3): PartedUploads {
  const uploadUrl = (upload: PartedUpload, query: Record<string, string>) => {
    const url = new URL(urlOf(s3, keyOf(s3, joinActual(upload.dir, upload.name))));
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url.toString();
  };
  return {
    minPartBytes: S3_MIN_PART_BYTES,
    async begin(dir, name, contentType) {
      const headers: Record<string, string> = { "Content-Type": contentType || "application/octet-stream" };
      const storageClass = s3.addition.text("storage_class");
      if (storageClass) headers["x-amz-storage-class"] = storageClass.toUpperCase();
      const response = await send(s3, `${urlOf(s3, keyOf(s3, joinActual(dir, name)))}?uploads`, {
        method: "POST",
        headers,
      });
      if (!response.ok) throw await failure(s3, response, "create multipart upload");
      const uploadId = xmlText(await response.text(), "UploadId");
      if (!uploadId) throw new Error("create multipart upload: the answer carries no UploadId");
      return { dir, name, uploadId };
    },
    async putPart(upload, index, size, body, signal) {
      const url = uploadUrl(upload, { partNumber: String(index + 1), uploadId: upload.uploadId });
      const response = await send(s3, url, {
        method: "PUT",
        body: withLength(body, size),
        headers: { "Content-Length": String(size) },
        ...(signal ? { signal } : {}),
      });
      if (!response.ok) throw await failure(s3, response, "upload part");
      await response.body?.cancel();
      const tag = response.headers.get("etag");
      if (!tag) throw new Error("upload part: the answer carries no ETag");
      return tag;
    },
    async complete(upload, tags) {
      const parts = tags
        .map((tag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${xmlEscape(tag)}</ETag></Part>`)
        .join("");
      const response = await send(s3, uploadUrl(upload, { uploadId: upload.uploadId }), {
        method: "POST",
        body: `<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`,
        headers: { "Content-Type": "application/xml" },
      });
      // S3 may answer 200 and put the error in the body (the join failed after it started).
      const text = await response.text();
      if (!response.ok || /<Error>/.test(text))
        throw new Error(
          `complete multipart upload: ${xmlText(text, "Code") ?? `HTTP ${response.status}`}: ${xmlText(text, "Message") ?? ""}`.trim(),
        );
    },
    async abort(upload) {
      const response = await send(s3, uploadUrl(upload, { uploadId: upload.uploadId }), { method: "DELETE" });
      if (response.status === 404) return void (await response.body?.cancel()); // already gone
      if (!response.ok) throw await failure(s3, response, "abort multipart upload");
      await response.body?.cancel();
    },
  };
}

async function md5Base64(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("MD5", new TextEncoder().encode(text)));
  let binary = "";
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function blocks(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((match) => match[1]!);
}

export function xmlText(xml: string, tag: string): string | undefined {
  const raw = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1];
  return raw
    ?.replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, "&");
}

const xmlEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
