// The file side of S3 (docs/decisions.md D7; AList v3.58.0 drivers/s3/util.go:81-189): folders are
// key prefixes, listed with ListObjects (v1 or v2, as `list_object_version` says) and a delimiter;
// a file is one HeadObject; downloads are presigned URLs computed here (no upstream call); writes
// are PutObject with a known length, CopyObject, and DeleteObjects in batches of 1000.
import { AwsClient } from "aws4fetch";
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

/** Most objects a folder copy, move or remove touches in one request: the work stays bounded. */
export const MAX_OBJECTS_PER_REQUEST = 1000;
const DEFAULT_SIGN_HOURS = 4;
/** The largest single PutObject S3 accepts. */
const MAX_PUT_BYTES = 5 * 1024 ** 3;
/** How long a presigned direct upload may start: enough to begin, not to keep a door open. */
const DIRECT_UPLOAD_SECONDS = 15 * 60;
/** S3's smallest part of a multipart upload, except the last. */
export const S3_MIN_PART_BYTES = 5 * 1024 ** 2;

interface S3Object {
  key: string;
  size: number;
  modified: Date;
  storageClass?: string;
}

/**
 * The bucket's URL (path-style for IPs, localhost and when asked, else virtual-hosted) and a SigV4
 * client with the storage's keys, for the check and the file side alike. No retries: aws4fetch's
 * ten would outlast a request (or a check) many times over.
 */
export function s3Bucket(addition: Addition): { bucket: string; host: string; bucketUrl: string; client: AwsClient } {
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
  const client = new AwsClient({
    accessKeyId: requireText(addition, "access_key_id"),
    secretAccessKey: requireText(addition, "secret_access_key"),
    sessionToken: addition.text("session_token") || undefined,
    service: "s3",
    region: addition.text("region") || "us-east-1",
    retries: 0,
  });
  const bucketUrl = pathStyle
    ? `${base.protocol}//${base.host}${basePath}/${encodeURIComponent(bucket)}`
    : `${base.protocol}//${bucket}.${base.host}${basePath}`;
  return { bucket, host: base.host, bucketUrl, client };
}

export function s3Files(storage: StorageHandle): FileBackend {
  const { addition } = storage;
  const { bucket, host: endpointHost, bucketUrl, client } = s3Bucket(addition);
  const root = cleanPath(addition.text("root_folder_path")).slice(1);
  const placeholder = addition.text("placeholder") || ".alist";

  /** The object key of an actual path (no leading slash), under the root. */
  const keyOf = (path: string) => [root, ...path.split("/").filter(Boolean)].filter(Boolean).join("/");
  const urlOf = (key: string) => `${bucketUrl}/${key.split("/").map(encodeURIComponent).join("/")}`;
  const nameOf = (key: string) => key.slice(key.replace(/\/$/, "").lastIndexOf("/") + 1).replace(/\/$/, "");
  const internalPath = (key: string) => `/${key.replace(/\/$/, "")}`;

  async function send(url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
    const request = await client.sign(url, {
      ...init,
      headers: { "X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD", ...init.headers },
    });
    try {
      return await fetch(request, {
        signal: anySignal(storage.signal, init.signal ?? undefined),
      });
    } catch (error) {
      throw new Error(`cannot reach ${endpointHost}: ${errorText(error)}`);
    }
  }

  async function failure(response: Response, what: string): Promise<Error> {
    const body = await response.text().catch(() => "");
    const code = xmlText(body, "Code");
    if (response.status === 404 && (code === "NoSuchKey" || code === undefined)) return objectNotFound();
    return new Error(
      code
        ? `${what}: ${code}: ${xmlText(body, "Message") ?? ""}`.trim()
        : `${what}: ${endpointHost} answered HTTP ${response.status}`,
    );
  }

  const v2 = addition.text("list_object_version") === "v2";

  /**
   * One page of ListObjects under `prefix`: v1 (AList's default) pages with a marker, v2 with a
   * continuation token. `token` is whichever the previous page gave.
   */
  async function listPage(prefix: string, delimiter: boolean, token: string | undefined, maxKeys = 1000) {
    const url = new URL(`${bucketUrl}/`);
    if (v2) url.searchParams.set("list-type", "2");
    url.searchParams.set("prefix", prefix);
    url.searchParams.set("max-keys", String(maxKeys));
    if (delimiter) url.searchParams.set("delimiter", "/");
    if (token) url.searchParams.set(v2 ? "continuation-token" : "marker", token);
    const response = await send(url.toString());
    if (!response.ok) throw await failure(response, "list objects");
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
      : v2
        ? xmlText(xml, "NextContinuationToken")
        : (xmlText(xml, "NextMarker") ?? lastKey);
    return { objects, prefixes, next };
  }

  const folderPrefix = (path: string) => {
    const key = keyOf(path);
    return key === "" ? "" : `${key}/`;
  };

  /** Every key under a folder (placeholders included), at most `cap`: for copies and removals. */
  async function allKeys(path: string, cap: number): Promise<S3Object[]> {
    const found: S3Object[] = [];
    let token: string | undefined;
    do {
      const page = await listPage(folderPrefix(path), false, token);
      found.push(...page.objects);
      if (found.length > cap)
        throw new Error(`more than ${cap} objects under ${path}: Gatehouse changes at most ${cap} objects per request`);
      token = page.next;
    } while (token);
    return found;
  }

  async function head(path: string): Promise<FileObject | null> {
    const key = keyOf(path);
    const response = await send(urlOf(key), { method: "HEAD" });
    if (response.status === 404) return null;
    if (!response.ok) throw await failure(response, "head object");
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

  async function isFolder(path: string): Promise<boolean> {
    if (keyOf(path) === "") return true;
    const page = await listPage(folderPrefix(path), false, undefined, 1);
    return page.objects.length > 0;
  }

  async function presign(key: string, name: string): Promise<string> {
    const hours = Number(addition.text("sign_url_expire")) || DEFAULT_SIGN_HOURS; // 0 means the default (docs/decisions.md D8.6)
    const url = new URL(urlOf(key));
    url.searchParams.set("X-Amz-Expires", String(Math.min(7 * 24 * 3600, Math.round(hours * 3600))));
    const escaped = encodeURIComponent(name).replace(
      /['()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    );
    url.searchParams.set(
      "response-content-disposition",
      addition.flag("add_filename_to_disposition")
        ? `attachment; filename="${name.replace(/"/g, "")}"; filename*=UTF-8''${escaped}`
        : `attachment; filename*=UTF-8''${escaped}`,
    );
    return (await client.sign(url.toString(), { method: "GET", aws: { signQuery: true } })).url;
  }

  /**
   * A link through `custom_host`: its host (and scheme), presigned only when asked (AList v3.58.0
   * drivers/s3/driver.go:128-134).
   */
  async function customHostLink(key: string): Promise<string> {
    const host = addition.text("custom_host");
    let url = addition.flag("enable_custom_host_presign")
      ? (
          await client.sign(
            `${urlOf(key)}?X-Amz-Expires=${Math.round((Number(addition.text("sign_url_expire")) || DEFAULT_SIGN_HOURS) * 3600)}`,
            { method: "GET", aws: { signQuery: true } },
          )
        ).url
      : urlOf(key);
    const target = new URL(url);
    const custom = new URL(/^https?:\/\//i.test(host) ? host : `${target.protocol}//${host}`);
    target.protocol = custom.protocol;
    target.host = custom.host;
    url = target.toString();
    return addition.flag("remove_bucket") ? url.replace(`/${encodeURIComponent(bucket)}`, "") : url;
  }

  async function copyObject(fromKey: string, toKey: string) {
    const source = `/${bucket}/${fromKey}`.split("/").map(encodeURIComponent).join("/");
    const response = await send(urlOf(toKey), { method: "PUT", headers: { "x-amz-copy-source": source } });
    if (!response.ok) throw await failure(response, "copy object");
    await response.body?.cancel();
  }

  async function deleteKeys(keys: string[]) {
    for (let start = 0; start < keys.length; start += 1000) {
      const batch = keys.slice(start, start + 1000);
      const body = `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${batch.map((key) => `<Object><Key>${xmlEscape(key)}</Key></Object>`).join("")}</Delete>`;
      const response = await send(`${bucketUrl}/?delete`, {
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
  async function copyTree(path: string, toPath: string): Promise<string[]> {
    const file = await head(path);
    if (file) {
      await copyObject(keyOf(path), keyOf(toPath));
      return [keyOf(path)];
    }
    const keys = (await allKeys(path, MAX_OBJECTS_PER_REQUEST)).map((object) => object.key);
    if (keys.length === 0) throw objectNotFound();
    const from = folderPrefix(path);
    const to = folderPrefix(toPath);
    for (const key of keys) await copyObject(key, to + key.slice(from.length));
    return keys;
  }

  const joinActual = (dir: string, name: string) => (dir === "/" ? `/${name}` : `${dir}/${name}`);
  const parentOfActual = (path: string) => path.slice(0, Math.max(1, path.lastIndexOf("/")));

  return {
    async list(dir) {
      const prefix = folderPrefix(dir);
      const entries: FileObject[] = [];
      let token: string | undefined;
      do {
        const page = await listPage(prefix, true, token);
        for (const folder of page.prefixes)
          entries.push({
            name: nameOf(folder),
            size: 0,
            isDir: true,
            modified: storage.modified,
            path: internalPath(folder),
          });
        for (const object of page.objects) {
          if (object.key.endsWith("/")) continue;
          const name = nameOf(object.key);
          if (name === placeholder) continue;
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
      if (entries.length === 0 && prefix !== "" && !(await isFolder(dir))) {
        throw (await head(dir)) ? notAFolder() : objectNotFound();
      }
      return entries;
    },

    async get(path) {
      if (keyOf(path) === "") return { name: "root", size: 0, isDir: true, modified: storage.modified, path: "/" };
      const file = await head(path);
      if (file) return file;
      if (await isFolder(path))
        return {
          name: nameOf(keyOf(path)),
          size: 0,
          isDir: true,
          modified: storage.modified,
          path: internalPath(keyOf(path)),
        };
      throw objectNotFound();
    },

    linksWithoutLookup: true,

    async link(path) {
      const key = keyOf(path);
      return { url: addition.text("custom_host") ? await customHostLink(key) : await presign(key, nameOf(key)) };
    },

    async makeDir(parentDir, name) {
      const response = await send(urlOf(`${folderPrefix(joinActual(parentDir, name))}${placeholder}`), {
        method: "PUT",
        body: "",
        headers: { "Content-Length": "0" },
      });
      if (!response.ok) throw await failure(response, "make folder");
    },

    async rename(path, newName) {
      const target = joinActual(parentOfActual(path), newName);
      await deleteKeys(await copyTree(path, target));
    },

    async move(path, dstDir) {
      await deleteKeys(await copyTree(path, joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1))));
    },

    async copy(path, dstDir) {
      await copyTree(path, joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1)));
    },

    async remove(path) {
      if (await head(path)) return deleteKeys([keyOf(path)]);
      const keys = (await allKeys(path, MAX_OBJECTS_PER_REQUEST)).map((object) => object.key);
      if (keys.length === 0) return; // nothing under it: already gone
      await deleteKeys(keys);
    },

    async put(dir, upload) {
      await putObject(keyOf(joinActual(dir, upload.name)), upload);
    },

    parts: multipart(),

    ...(addition.flag("enable_direct_upload")
      ? {
          async directUpload(dir: string, name: string, size: number) {
            return { url: await presignPut(keyOf(joinActual(dir, name)), size), method: "PUT" as const, headers: {} };
          },
        }
      : {}),
  };

  /**
   * A PutObject of exactly `size` bytes to `key`, valid DIRECT_UPLOAD_SECONDS (OpenList signs no
   * length and keeps it for `sign_url_expire` hours: docs/decisions.md D12.4). The browser sends
   * Content-Length itself, so signing it costs the client nothing. `direct_upload_host` replaces
   * the host after signing, as OpenList does (drivers/s3/util.go:80-93): that host must accept the
   * endpoint's signature.
   */
  async function presignPut(key: string, size: number): Promise<string> {
    const url = new URL(urlOf(key));
    url.searchParams.set("X-Amz-Expires", String(DIRECT_UPLOAD_SECONDS));
    const signed = new URL(
      (
        await client.sign(url.toString(), {
          method: "PUT",
          headers: { "Content-Length": String(size) },
          aws: { signQuery: true, allHeaders: true },
        })
      ).url,
    );
    const host = addition.text("direct_upload_host");
    if (host) {
      const custom = new URL(/^https?:\/\//i.test(host) ? host : `${signed.protocol}//${host}`);
      signed.protocol = custom.protocol;
      signed.host = custom.host;
    }
    return signed.toString();
  }

  /**
   * S3's multipart upload: part i+1 carries chunk i, each streamed with its length; the parts
   * wait upstream, invisible, until CompleteMultipartUpload joins them (or Abort drops them).
   */
  function multipart(): PartedUploads {
    const uploadUrl = (upload: PartedUpload, query: Record<string, string>) => {
      const url = new URL(urlOf(keyOf(joinActual(upload.dir, upload.name))));
      for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
      return url.toString();
    };
    return {
      minPartBytes: S3_MIN_PART_BYTES,
      async begin(dir, name, contentType) {
        const headers: Record<string, string> = { "Content-Type": contentType || "application/octet-stream" };
        const storageClass = addition.text("storage_class");
        if (storageClass) headers["x-amz-storage-class"] = storageClass.toUpperCase();
        const response = await send(`${urlOf(keyOf(joinActual(dir, name)))}?uploads`, { method: "POST", headers });
        if (!response.ok) throw await failure(response, "create multipart upload");
        const uploadId = xmlText(await response.text(), "UploadId");
        if (!uploadId) throw new Error("create multipart upload: the answer carries no UploadId");
        return { dir, name, uploadId };
      },
      async putPart(upload, index, size, body, signal) {
        const url = uploadUrl(upload, { partNumber: String(index + 1), uploadId: upload.uploadId });
        const response = await send(url, {
          method: "PUT",
          body: withLength(body, size),
          headers: { "Content-Length": String(size) },
          ...(signal ? { signal } : {}),
        });
        if (!response.ok) throw await failure(response, "upload part");
        await response.body?.cancel();
        const tag = response.headers.get("etag");
        if (!tag) throw new Error("upload part: the answer carries no ETag");
        return tag;
      },
      async complete(upload, tags) {
        const parts = tags
          .map((tag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${xmlEscape(tag)}</ETag></Part>`)
          .join("");
        const response = await send(uploadUrl(upload, { uploadId: upload.uploadId }), {
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
        const response = await send(uploadUrl(upload, { uploadId: upload.uploadId }), { method: "DELETE" });
        if (response.status === 404) return void (await response.body?.cancel()); // already gone
        if (!response.ok) throw await failure(response, "abort multipart upload");
        await response.body?.cancel();
      },
    };
  }

  async function putObject(key: string, upload: Upload) {
    if (upload.size > MAX_PUT_BYTES)
      throw new FileError(
        "upstream",
        `S3 takes at most ${MAX_PUT_BYTES} bytes in one upload; multipart uploads are not built yet`,
      );
    const headers: Record<string, string> = {
      "Content-Type": upload.contentType || "application/octet-stream",
      "Content-Length": String(upload.size),
    };
    const storageClass = addition.text("storage_class");
    if (storageClass) headers["x-amz-storage-class"] = storageClass.toUpperCase();
    const response = await send(urlOf(key), {
      method: "PUT",
      body: withLength(upload.body, upload.size),
      headers,
      ...(upload.signal ? { signal: upload.signal } : {}),
    });
    if (!response.ok) throw await failure(response, "put object");
    await response.body?.cancel();
  }
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
