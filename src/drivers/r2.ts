// R2 through the Worker's own binding (wrangler.toml [[r2_buckets]]): no keys, no signatures, no
// network address. Folders are key prefixes, as on S3 (AList v3.58.0 drivers/s3/util.go:81-189):
// listed with a delimiter, made with a placeholder object, removed key by key. There is no URL to
// send a client to, so every download is a byte source served by this server (Range, ETag,
// If-None-Match); writes stream with their known length, in R2's multipart upload above one part,
// so any size fits in flat memory. R2 has no server-side copy: copies stream get → put.
// docs/decisions.md D7.1.
import { cleanPath } from "../lib/path.ts";
import { StreamCutter, withLength } from "../lib/streams.ts";
import { r2Bucket } from "./bindings.ts";
import { errorText } from "./failures.ts";
import { driverConfig, items } from "./items.ts";
import {
  CheckFailed,
  FileError,
  notAFolder,
  objectNotFound,
  type Addition,
  type ByteSource,
  type Driver,
  type FileBackend,
  type FileObject,
  type PartedUpload,
  type PartedUploads,
  type StorageHandle,
} from "./types.ts";

/** The binding `npm start` and wrangler.toml give the Worker, the item's default. */
const DEFAULT_R2_BINDING = "BUCKET";
/** Uploads up to this size are one put; larger ones go in parts of this size (more for huge files). */
export const R2_PART_BYTES = 16 * 1024 * 1024;
/** R2's smallest part but the last, and its most parts in one upload. */
const R2_MIN_PART_BYTES = 5 * 1024 * 1024;
const R2_MAX_PARTS = 10_000;
/** R2 deletes at most this many keys in one call, and lists at most this many per page. */
const R2_BATCH = 1000;
const MIB = 1024 * 1024;

export const r2: Driver = {
  config: driverConfig({ name: "R2 Binding", local_sort: true, only_proxy: true, default_root: "/" }),
  additional: items([
    {
      name: "binding",
      type: "string",
      default: DEFAULT_R2_BINDING,
      required: true,
      help: "The name of an R2 bucket binding of this Worker ([[r2_buckets]] binding in wrangler.toml)",
    },
    { name: "root_folder_path", type: "string", default: "/", required: true },
    { name: "placeholder", type: "string", help: "The empty object that keeps an empty folder; .alist when empty" },
  ]),
  files: (storage) => r2Files(storage),
  async check(addition) {
    const bucket = boundBucket(addition, (text) => new CheckFailed(text));
    const root = cleanPath(addition.text("root_folder_path")).slice(1);
    try {
      await bucket.list({ prefix: root === "" ? "" : `${root}/`, limit: 1 });
    } catch (error) {
      throw new CheckFailed(`R2 bucket "${addition.text("binding")}" answered: ${errorText(error)}`);
    }
  },
};

/** The addition's bucket, or `fail` saying that the Worker has no such binding. */
function boundBucket(addition: Addition, fail: (text: string) => Error): R2Bucket {
  const name = addition.text("binding").trim();
  const bucket = r2Bucket(name);
  if (!bucket)
    throw fail(
      `not bound: this Worker has no R2 bucket binding named "${name}" (add [[r2_buckets]] binding = "${name}" to wrangler.toml, or remove this storage; see docs/operations.md)`,
    );
  return bucket;
}

/** What every call to one storage's bucket needs: the bound bucket, the root and the placeholder's name. */
interface R2 {
  storage: StorageHandle;
  bucket: R2Bucket;
  /** The root folder's key prefix, without slashes at its ends ("" for the bucket's root). */
  root: string;
  placeholder: string;
}

/**
 * The R2 backend: the Files object of one storage, every operation a named function over its
 * context below, in this order: listing, reading (a byte source), writing, multipart parts.
 */
export function r2Files(storage: StorageHandle): FileBackend {
  const { addition } = storage;
  const r2: R2 = {
    storage,
    bucket: boundBucket(addition, (text) => new FileError("unavailable", text)),
    root: cleanPath(addition.text("root_folder_path")).slice(1),
    placeholder: addition.text("placeholder") || ".alist",
  };
  return {
    list: (dir) => listFolder(r2, dir),
    get: (path) => getObject(r2, path),

    link: (path) => linkOf(r2, path),

    async makeDir(parentDir, name) {
      await r2.bucket.put(`${folderPrefix(r2, joinActual(parentDir, name))}${r2.placeholder}`, "");
    },
    async rename(path, newName) {
      await deleteKeys(r2, await copyTree(r2, path, joinActual(parentOfActual(path), newName)));
    },
    async move(path, dstDir) {
      await deleteKeys(r2, await copyTree(r2, path, joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1))));
    },
    async copy(path, dstDir) {
      await copyTree(r2, path, joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1)));
    },
    remove: (path) => removeTree(r2, path),
    async put(dir, upload) {
      await putObject(r2, keyOf(r2, joinActual(dir, upload.name)), upload.size, upload.body, upload.contentType);
    },

    parts: r2Parts(r2),
  };
}

// Keys and objects.

/** The object key of an actual path (no leading slash), under the root. */
const keyOf = (r2: R2, path: string) => [r2.root, ...path.split("/").filter(Boolean)].filter(Boolean).join("/");
const folderPrefix = (r2: R2, path: string) => {
  const key = keyOf(r2, path);
  return key === "" ? "" : `${key}/`;
};
const nameOf = (key: string) => key.slice(key.replace(/\/$/, "").lastIndexOf("/") + 1).replace(/\/$/, "");
const internalPath = (key: string) => `/${key.replace(/\/$/, "")}`;
const joinActual = (dir: string, name: string) => (dir === "/" ? `/${name}` : `${dir}/${name}`);
const parentOfActual = (path: string) => path.slice(0, Math.max(1, path.lastIndexOf("/")));

const fileOf = (object: R2Object): FileObject => ({
  name: nameOf(object.key),
  size: object.size,
  isDir: false,
  modified: object.uploaded,
  path: internalPath(object.key),
});
const folderOf = (r2: R2, key: string): FileObject => ({
  name: nameOf(key),
  size: 0,
  isDir: true,
  modified: r2.storage.modified,
  path: internalPath(key),
});

// The storage's root is a folder, objects or not: a fresh root_folder_path lists empty.
const head = (r2: R2, path: string) => (path === "/" ? Promise.resolve(null) : r2.bucket.head(keyOf(r2, path)));

// Listing.

async function isFolder(r2: R2, path: string): Promise<boolean> {
  if (path === "/") return true;
  return (await r2.bucket.list({ prefix: folderPrefix(r2, path), limit: 1 })).objects.length > 0;
}

/** Every key under a folder, placeholders included, page by page. */
async function* keysUnder(r2: R2, path: string): AsyncGenerator<R2Object[]> {
  let cursor: string | undefined;
  do {
    const page = await r2.bucket.list({
      prefix: folderPrefix(r2, path),
      limit: R2_BATCH,
      ...(cursor ? { cursor } : {}),
    });
    yield page.objects;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}

async function listFolder(r2: R2, dir: string): Promise<FileObject[]> {
  const prefix = folderPrefix(r2, dir);
  const entries: FileObject[] = [];
  let cursor: string | undefined;
  do {
    const page = await r2.bucket.list({ prefix, delimiter: "/", ...(cursor ? { cursor } : {}) });
    for (const folder of page.delimitedPrefixes) entries.push(folderOf(r2, folder));
    for (const object of page.objects) {
      if (object.key.endsWith("/") || nameOf(object.key) === r2.placeholder) continue;
      entries.push(fileOf(object));
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  if (entries.length === 0 && !(await isFolder(r2, dir))) throw (await head(r2, dir)) ? notAFolder() : objectNotFound();
  return entries;
}

async function getObject(r2: R2, path: string): Promise<FileObject> {
  if (path === "/") return { name: "root", size: 0, isDir: true, modified: r2.storage.modified, path: "/" };
  const object = await head(r2, path);
  if (object) return fileOf(object);
  if (await isFolder(r2, path)) return folderOf(r2, keyOf(r2, path));
  throw objectNotFound();
}

// Reading: a byte source served by this server.

async function linkOf(r2: R2, path: string): Promise<{ source: ByteSource }> {
  const object = await head(r2, path);
  if (!object) throw objectNotFound();
  const source: ByteSource = {
    size: object.size,
    modified: object.uploaded,
    // The bytes of the version the headers describe: a replacement in between fails the read.
    async read(start, end) {
      const body = await r2.bucket.get(object.key, {
        range: { offset: start, length: end - start + 1 },
        onlyIf: { etagMatches: object.etag },
      });
      if (!body) throw objectNotFound();
      if (!("body" in body)) throw new Error(`${object.key} changed while it was being read`);
      return body.body as ReadableStream<Uint8Array>;
    },
  };
  return { source };
}

// Writing.

/** Stores `size` bytes from `body` under `key`: one put up to a part, R2's multipart upload above. */
async function putObject(r2: R2, key: string, size: number, body: ReadableStream<Uint8Array>, contentType: string) {
  const httpMetadata = { contentType: contentType || "application/octet-stream" };
  if (size <= R2_PART_BYTES) {
    await r2.bucket.put(key, withLength(body, size), { httpMetadata });
    return;
  }
  const partBytes = partSizeFor(size);
  const upload = await r2.bucket.createMultipartUpload(key, { httpMetadata });
  const cutter = new StreamCutter(body);
  try {
    const parts: R2UploadedPart[] = [];
    for (let offset = 0; offset < size; offset += partBytes) {
      const length = Math.min(partBytes, size - offset);
      parts.push(await upload.uploadPart(parts.length + 1, withLength(cutter.next(length), length)));
    }
    await cutter.end();
    await upload.complete(parts);
  } catch (error) {
    cutter.cancel(error);
    await upload.abort().catch(() => {});
    throw error;
  }
}

/** R2 has no server-side copy: the object streams through, in parts when big. */
async function copyObject(r2: R2, fromKey: string, toKey: string) {
  const source = await r2.bucket.get(fromKey);
  if (!source) throw objectNotFound();
  await putObject(r2, toKey, source.size, source.body, source.httpMetadata?.contentType ?? "");
}

/** Copies a file, or a folder key by key; answers the source keys. */
async function copyTree(r2: R2, path: string, toPath: string): Promise<string[]> {
  if (await head(r2, path)) {
    await copyObject(r2, keyOf(r2, path), keyOf(r2, toPath));
    return [keyOf(r2, path)];
  }
  const from = folderPrefix(r2, path);
  const to = folderPrefix(r2, toPath);
  // Listed whole first: a copy into a folder below its source must not copy its own copies.
  const keys: string[] = [];
  for await (const page of keysUnder(r2, path)) keys.push(...page.map((object) => object.key));
  if (keys.length === 0) throw objectNotFound();
  for (const key of keys) await copyObject(r2, key, to + key.slice(from.length));
  return keys;
}

async function deleteKeys(r2: R2, keys: string[]) {
  for (let start = 0; start < keys.length; start += R2_BATCH)
    await r2.bucket.delete(keys.slice(start, start + R2_BATCH));
}

async function removeTree(r2: R2, path: string): Promise<void> {
  if (await head(r2, path)) return r2.bucket.delete(keyOf(r2, path));
  // Each page listed is deleted before the next is asked for, so memory holds one page.
  for await (const page of keysUnder(r2, path))
    await deleteKeys(
      r2,
      page.map((object) => object.key),
    );
}

// Multipart parts.

function r2Parts(r2: R2): PartedUploads {
  const resumed = (upload: PartedUpload) =>
    r2.bucket.resumeMultipartUpload(keyOf(r2, joinActual(upload.dir, upload.name)), upload.uploadId);
  return {
    minPartBytes: R2_MIN_PART_BYTES,
    async begin(dir, name, contentType) {
      const upload = await r2.bucket.createMultipartUpload(keyOf(r2, joinActual(dir, name)), {
        httpMetadata: { contentType: contentType || "application/octet-stream" },
      });
      return { dir, name, uploadId: upload.uploadId };
    },
    async putPart(upload, index, size, body) {
      return (await resumed(upload).uploadPart(index + 1, withLength(body, size))).etag;
    },
    async complete(upload, tags) {
      await resumed(upload).complete(tags.map((etag, index) => ({ partNumber: index + 1, etag })));
    },
    async abort(upload) {
      await resumed(upload).abort();
    },
  };
}

/**
 * The part size for an upload of `size` bytes: R2_PART_BYTES, or more (whole MiB) when that would
 * take more than R2's 10,000 parts. R2 wants every part but the last of one size.
 */
export function partSizeFor(size: number): number {
  return Math.max(R2_PART_BYTES, Math.ceil(size / R2_MAX_PARTS / MIB) * MIB);
}
