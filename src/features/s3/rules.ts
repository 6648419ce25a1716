// The S3 endpoint's decisions (docs/decisions.md D22): which operation a request is (and which are
// not built yet), where a bucket and a key land in the mount tree, how a listing walks the folders
// in S3's key order, and how the file side's refusals read as S3 error codes.
import type { FileObject } from "../../drivers/types.ts";
import { ApiError, FileError, type FileErrorKind } from "../../http/errors.ts";
import { joinName } from "../fs/path.ts";
import type { XmlElement } from "../dav/xml.ts";
import {
  BAD_KEY,
  CONTINUATION_INVALID,
  COPY_SOURCE_INVALID,
  DELETE_XML_INVALID,
  deleteTooMany,
  ENCODING_TYPE_INVALID,
  MAX_KEYS_INVALID,
  NO_SUCH_BUCKET,
  NO_SUCH_KEY,
  unsupported,
  S3_ERRORS,
  type S3Code,
} from "./messages.ts";

const S3_PREFIX = "/s3";

/** A refusal in S3's words: its code (the status follows from it) and message. */
export class S3Error extends Error {
  override name = "S3Error";
  constructor(
    readonly code: S3Code,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  get status(): number {
    return S3_ERRORS[this.code];
  }
}

/** The file side's refusals by kind: nothing there is NoSuchKey, a storage that cannot is NotImplemented. */
const KIND_CODES: Record<FileErrorKind, S3Code> = {
  not_found: "NoSuchKey",
  no_storage: "NoSuchKey",
  not_a_folder: "NoSuchKey",
  not_a_file: "NoSuchKey",
  exists: "InvalidRequest",
  not_implemented: "NotImplemented",
  forbidden: "AccessDenied",
  upstream: "InternalError",
  unavailable: "ServiceUnavailable",
  refused: "InvalidRequest",
};

/** Any refusal as an S3Error: its own, the file side's by kind, the API's 403s as AccessDenied. */
export function s3ErrorOf(error: unknown): S3Error | null {
  if (error instanceof S3Error) return error;
  if (error instanceof FileError) return new S3Error(KIND_CODES[error.kind], error.message);
  if (error instanceof ApiError)
    return new S3Error(
      error.code === 403 ? "AccessDenied" : error.code === 404 ? "NoSuchKey" : "InvalidRequest",
      error.message,
    );
  return null;
}

// ---------------------------------------------------------------------------------------------
// The request: bucket, key and operation.

/** `/s3/<bucket>/<key>`, decoded; null bucket for the service itself. */
export function bucketAndKey(pathname: string): { bucket: string | null; key: string } {
  const rest = pathname.slice(S3_PREFIX.length).replace(/^\//, "");
  if (rest === "") return { bucket: null, key: "" };
  const slash = rest.indexOf("/");
  const rawBucket = slash < 0 ? rest : rest.slice(0, slash);
  const rawKey = slash < 0 ? "" : rest.slice(slash + 1);
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw new S3Error("InvalidArgument", BAD_KEY);
    }
  };
  return { bucket: decode(rawBucket), key: decode(rawKey) };
}

/** A bucket's full path: a folder at the top of the key's scope (D22.1); null for a name that is no folder name. */
export function bucketPath(scope: string, bucket: string): string | null {
  if (bucket === "" || bucket === "." || bucket === ".." || bucket.includes("/")) return null;
  return joinName(scope, bucket);
}

/** An object key's full path below its bucket; null for a key that no path holds (empty, `.` or `..` segments). */
export function objectPath(bucket: string, key: string): string | null {
  const segments = key.replace(/\/$/, "").split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) return null;
  return `${bucket}/${segments.join("/")}`;
}

/**
 * CopyObject's `x-amz-copy-source`: `bucket/key` (a leading `/` allowed), URL-encoded, maybe with
 * `?versionId=` (this endpoint keeps no versions: only `null`, the one version there is, is taken).
 */
export function copySourceOf(header: string): { bucket: string; key: string } {
  const [path = "", query = ""] = header.trim().split("?", 2);
  const version = new URLSearchParams(query).get("versionId");
  if (version !== null && version !== "null") throw new S3Error("NoSuchVersion", COPY_SOURCE_INVALID);
  const { bucket, key } = bucketAndKey(`${S3_PREFIX}/${path.replace(/^\//, "")}`);
  if (bucket === null || bucket === "" || key === "" || key.endsWith("/"))
    throw new S3Error("InvalidArgument", COPY_SOURCE_INVALID);
  return { bucket, key };
}

/**
 * CopyObject's conditions on its source (`x-amz-copy-source-if-*`) as the HTTP conditions they
 * are, so the file side's checks apply S3's precedence (D22.16): a matching if-match wins over a
 * failing if-unmodified-since, a failing if-none-match over a holding if-modified-since. An ETag
 * sent without its quotes (S3 takes both) is quoted.
 */
export function copySourceConditions(headers: Headers): Headers {
  const out = new Headers();
  const quoted = (list: string) =>
    list
      .split(",")
      .map((tag) => tag.trim())
      .map((tag) => (tag === "*" || tag.startsWith('"') || tag.startsWith("W/") ? tag : `"${tag}"`))
      .join(", ");
  for (const name of ["if-match", "if-none-match", "if-modified-since", "if-unmodified-since"]) {
    const value = headers.get(`x-amz-copy-source-${name}`);
    if (value !== null) out.set(name, name.endsWith("match") ? quoted(value) : value);
  }
  return out;
}

/**
 * The bucket a virtual-hosted-style request names (D22.17): the host's labels before the configured
 * S3 host (`photos.s3.example.com` under `s3.example.com` is `photos`); null for any other host,
 * and always when none is configured.
 */
export function virtualBucketOf(hostname: string, base: string | undefined): string | null {
  const suffix = (base ?? "")
    .trim()
    .toLowerCase()
    .replace(/^\.+|\.+$/g, "");
  if (suffix === "") return null;
  const host = hostname.toLowerCase();
  if (!host.endsWith(`.${suffix}`)) return null;
  const bucket = host.slice(0, -(suffix.length + 1));
  return bucket === "" ? null : bucket;
}

/** A virtual-hosted-style request's bucket and key: the bucket from its host, the key its whole path. */
export const virtualBucketAndKey = (bucket: string, pathname: string) =>
  bucketAndKey(`${S3_PREFIX}/${encodeURIComponent(bucket)}${pathname.startsWith("/") ? pathname : `/${pathname}`}`);

/** S3's limit of keys in one DeleteObjects. */
const MAX_DELETE_KEYS = 1000;

/** DeleteObjects' `<Delete>` body: its keys, in order, and whether the reply is Quiet (errors only). */
export function deleteRequestOf(root: XmlElement | null): { keys: string[]; quiet: boolean } {
  if (root?.local !== "Delete") throw new S3Error("MalformedXML", DELETE_XML_INVALID);
  const children = (element: XmlElement) => element.children.filter((child) => typeof child !== "string");
  const text = (element: XmlElement) => element.children.filter((child) => typeof child === "string").join("");
  const keys: string[] = [];
  let quiet = false;
  for (const child of children(root)) {
    if (child.local === "Quiet") quiet = text(child).trim() === "true";
    else if (child.local === "Object") {
      const key = children(child).find((part) => part.local === "Key");
      if (!key) throw new S3Error("MalformedXML", DELETE_XML_INVALID);
      keys.push(text(key));
    }
  }
  if (keys.length === 0) throw new S3Error("MalformedXML", DELETE_XML_INVALID);
  if (keys.length > MAX_DELETE_KEYS) throw new S3Error("MalformedXML", deleteTooMany(MAX_DELETE_KEYS));
  return { keys, quiet };
}

export type Operation =
  | "ListBuckets"
  | "HeadBucket"
  | "CreateBucket"
  | "DeleteBucket"
  | "GetBucketLocation"
  | "ListObjects"
  | "ListObjectsV2"
  | "HeadObject"
  | "GetObject"
  | "PutObject"
  | "CopyObject"
  | "DeleteObject"
  | "DeleteObjects"
  | MultipartOperation;

/** Multipart uploads (multipart.ts, D22.9): on the chunked upload sessions of /api/fs/multipart. */
export type MultipartOperation =
  | "CreateMultipartUpload"
  | "UploadPart"
  | "CompleteMultipartUpload"
  | "AbortMultipartUpload"
  | "ListParts"
  | "ListMultipartUploads";

/** Query names that only select how a reply is written, never another operation. */
const PASSIVE = new Set(["x-id", "versionId"]);
const UPLOADS_LIST_PARAMS = new Set([
  "uploads",
  "prefix",
  "delimiter",
  "max-uploads",
  "key-marker",
  "upload-id-marker",
  "encoding-type",
]);
const LIST_PARAMS = new Set([
  "list-type",
  "prefix",
  "delimiter",
  "max-keys",
  "continuation-token",
  "start-after",
  "encoding-type",
  "fetch-owner",
  "marker",
]);

/**
 * The operation a request asks for, or NotImplemented naming what it is (multipart uploads,
 * ACLs, tagging...: D22.4).
 */
export function operationOf(
  method: string,
  bucket: string | null,
  key: string,
  query: URLSearchParams,
  headers: Headers,
): Operation {
  // A presigned URL's X-Amz-* parameters are its signature, not part of the operation (D22.5); nor is
  // the `x-amz-checksum-mode` an SDK's presigner hoists from a GET's headers (it asks for checksums
  // in the reply, which carries none).
  const names = [...query.keys()].filter(
    (name) => !PASSIVE.has(name) && !name.startsWith("X-Amz-") && name !== "x-amz-checksum-mode",
  );
  const refuse = (what: string): never => {
    throw new S3Error("NotImplemented", unsupported(what));
  };
  if (bucket === null) {
    if (method === "GET" && names.length === 0) return "ListBuckets";
    return refuse(`${method} on the service`);
  }
  if (key === "") {
    if (method === "HEAD" && names.length === 0) return "HeadBucket";
    if (method === "GET" && names.length === 1 && names[0] === "location") return "GetBucketLocation";
    if (method === "GET" && names.every((name) => LIST_PARAMS.has(name)))
      return query.get("list-type") === "2" ? "ListObjectsV2" : "ListObjects";
    if (method === "PUT" && names.length === 0) return "CreateBucket";
    if (method === "DELETE" && names.length === 0) return "DeleteBucket";
    if (method === "POST" && names.length === 1 && names[0] === "delete") return "DeleteObjects";
    if (method === "GET" && query.has("uploads") && names.every((name) => UPLOADS_LIST_PARAMS.has(name)))
      return "ListMultipartUploads";
    return refuse(`${method} ?${names.join("&")} on a bucket`);
  }
  const multipart = multipartOperationOf(method, names, headers);
  if (multipart) return multipart;
  const rest = names.filter((name) => !name.startsWith("response-"));
  if (rest.length > 0) refuse(`${method} ?${rest.join("&")} on an object`);
  if (method === "GET") return "GetObject";
  if (method === "HEAD") return "HeadObject";
  if (method === "PUT") {
    if (headers.has("x-amz-copy-source")) return "CopyObject";
    return "PutObject";
  }
  if (method === "DELETE") return "DeleteObject";
  return refuse(`${method} on an object`);
}

/** The multipart operation on an object a request asks for; null when it names none; NotImplemented for UploadPartCopy. */
function multipartOperationOf(method: string, names: string[], headers: Headers): MultipartOperation | null {
  const has = (name: string) => names.includes(name);
  if (!has("uploads") && !has("uploadId") && !has("partNumber")) return null;
  const only = (...allowed: string[]) => names.every((name) => allowed.includes(name));
  if (method === "POST" && has("uploads") && only("uploads")) return "CreateMultipartUpload";
  if (method === "PUT" && has("uploadId") && has("partNumber") && only("uploadId", "partNumber")) {
    if (headers.has("x-amz-copy-source")) throw new S3Error("NotImplemented", unsupported("UploadPartCopy"));
    return "UploadPart";
  }
  if (method === "POST" && has("uploadId") && only("uploadId")) return "CompleteMultipartUpload";
  if (method === "DELETE" && has("uploadId") && only("uploadId")) return "AbortMultipartUpload";
  if (method === "GET" && has("uploadId") && only("uploadId", "max-parts", "part-number-marker", "encoding-type"))
    return "ListParts";
  throw new S3Error("NotImplemented", unsupported(`${method} ?${names.join("&")} on an object`));
}

// ---------------------------------------------------------------------------------------------
// Listings

/** S3's key order: UTF-8 bytes, which is code point order (JavaScript compares UTF-16 units). */
export function compareKeys(a: string, b: string): number {
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next();
    const q = y.next();
    if (p.done || q.done) return p.done && q.done ? 0 : p.done ? -1 : 1;
    const d = p.value.codePointAt(0)! - q.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

export interface ListRequest {
  prefix: string;
  delimiter: string;
  maxKeys: number;
  /** Keys at or before this one are skipped (start-after, a continuation token, a marker). */
  after: string;
}

export interface ListResult {
  objects: { key: string; object: FileObject }[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or common prefix returned. */
  last: string | undefined;
}

/** At most this many keys per page, as S3. */
const MAX_KEYS = 1000;

export function listRequestOf(query: URLSearchParams, version: 1 | 2): ListRequest & { encodeUrl: boolean } {
  const rawMax = query.get("max-keys");
  if (rawMax !== null && !/^\d{1,9}$/.test(rawMax)) throw new S3Error("InvalidArgument", MAX_KEYS_INVALID);
  const encoding = query.get("encoding-type");
  if (encoding !== null && encoding !== "url") throw new S3Error("InvalidArgument", ENCODING_TYPE_INVALID);
  const delimiter = query.get("delimiter") ?? "";
  if (delimiter !== "" && delimiter !== "/")
    throw new S3Error("NotImplemented", unsupported(`The delimiter ${JSON.stringify(delimiter)} (only "/")`));
  let after = version === 2 ? (query.get("start-after") ?? "") : (query.get("marker") ?? "");
  const token = version === 2 ? query.get("continuation-token") : null;
  if (token !== null) after = tokenKey(token);
  return {
    prefix: query.get("prefix") ?? "",
    delimiter,
    maxKeys: Math.min(rawMax === null ? MAX_KEYS : Number(rawMax), MAX_KEYS),
    after,
    encodeUrl: encoding === "url",
  };
}

/** A continuation token: the last key returned, base64url-encoded (opaque to clients, as S3's). */
export const continuationToken = (key: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(key)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

function tokenKey(token: string): string {
  try {
    const binary = atob(token.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(binary, (ch) => ch.charCodeAt(0)),
    );
  } catch {
    throw new S3Error("InvalidArgument", CONTINUATION_INVALID);
  }
}

/**
 * One page of a bucket's keys in S3's order, walking folders as the keys ask: with delimiter `/`
 * one folder (its subfolders are common prefixes); without, the folders below the prefix depth
 * first, each in key order (a folder `a` sorts as `a/`), skipping whole subtrees that lie at or
 * before `after` and stopping once the page is full. `list` answers a folder's visible entries by
 * its path relative to the bucket (`""` the bucket), and [] for a folder that is not there.
 */
export async function listPage(
  request: ListRequest,
  list: (dir: string) => Promise<FileObject[]>,
): Promise<ListResult> {
  const { prefix, delimiter, maxKeys, after } = request;
  const objects: ListResult["objects"] = [];
  const prefixes: string[] = [];
  let count = 0;
  let truncated = false;
  let last: string | undefined;
  const full = () => count >= maxKeys;
  const take = (key: string, object: FileObject | null): boolean => {
    if (full()) {
      truncated = true;
      return false;
    }
    if (object) objects.push({ key, object });
    else prefixes.push(key);
    count++;
    last = key;
    return true;
  };
  const sorted = (dir: string, entries: FileObject[]) =>
    entries
      .map((object) => ({ key: `${dir}${object.name}${object.isDir ? "/" : ""}`, object }))
      .sort((a, b) => compareKeys(a.key, b.key));
  const start = prefix.slice(0, prefix.lastIndexOf("/") + 1);

  if (delimiter === "/") {
    for (const { key, object } of sorted(start, await list(start.replace(/\/$/, "")))) {
      if (!key.startsWith(prefix) || compareKeys(key, after) <= 0) continue;
      if (!take(key, object.isDir ? null : object)) break;
    }
    return { objects, prefixes, truncated, last };
  }

  const walk = async (dir: string): Promise<boolean> => {
    for (const { key, object } of sorted(dir, await list(dir.replace(/\/$/, "")))) {
      if (object.isDir) {
        // Below the prefix, or on the way to it; and not wholly at or before `after`.
        if (!key.startsWith(prefix) && !prefix.startsWith(key)) continue;
        if (compareKeys(key, after) <= 0 && !after.startsWith(key)) continue;
        if (!(await walk(key))) return false;
      } else {
        if (!key.startsWith(prefix) || compareKeys(key, after) <= 0) continue;
        if (!take(key, object)) return false;
      }
    }
    return true;
  };
  await walk(start);
  return { objects, prefixes, truncated, last };
}

export const noSuchBucket = () => new S3Error("NoSuchBucket", NO_SUCH_BUCKET);
export const noSuchKey = () => new S3Error("NoSuchKey", NO_SUCH_KEY);
