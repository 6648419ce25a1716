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
  type PartedUploads,
  type StorageHandle,
} from "./types.ts";

/** The binding `npm start` and wrangler.toml give the Worker, the item's default. */
export const DEFAULT_R2_BINDING = "BUCKET";
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

export function r2Files(storage: StorageHandle): FileBackend {
  const { addition } = storage;
  const bucket = boundBucket(addition, (text) => new FileError("unavailable", text));
  const root = cleanPath(addition.text("root_folder_path")).slice(1);
  const placeholder = addition.text("placeholder") || ".alist";

  /** The object key of an actual path (no leading slash), under the root. */
  const keyOf = (path: string) => [root, ...path.split("/").filter(Boolean)].filter(Boolean).join("/");
  const folderPrefix = (path: string) => {
    const key = keyOf(path);
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
  const folderOf = (key: string): FileObject => ({
    name: nameOf(key),
    size: 0,
    isDir: true,
    modified: storage.modified,
    path: internalPath(key),
  });

  // The storage's root is a folder, objects or not: a fresh root_folder_path lists empty.
  const head = (path: string) => (path === "/" ? Promise.resolve(null) : bucket.head(keyOf(path)));

  async function isFolder(path: string): Promise<boolean> {
    if (path === "/") return true;
    return (await bucket.list({ prefix: folderPrefix(path), limit: 1 })).objects.length > 0;
  }

  /** Every key under a folder, placeholders included, page by page. */
  async function* keysUnder(path: string): AsyncGenerator<R2Object[]> {
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix: folderPrefix(path), limit: R2_BATCH, ...(cursor ? { cursor } : {}) });
      yield page.objects;
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }

  /** Stores `size` bytes from `body` under `key`: one put up to a part, R2's multipart upload above. */
  async function putObject(key: string, size: number, body: ReadableStream<Uint8Array>, contentType: string) {
    const httpMetadata = { contentType: contentType || "application/octet-stream" };
    if (size <= R2_PART_BYTES) {
      await bucket.put(key, withLength(body, size), { httpMetadata });
      return;
    }
    const partBytes = partSizeFor(size);
    const upload = await bucket.createMultipartUpload(key, { httpMetadata });
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
  async function copyObject(fromKey: string, toKey: string) {
    const source = await bucket.get(fromKey);
    if (!source) throw objectNotFound();
    await putObject(toKey, source.size, source.body, source.httpMetadata?.contentType ?? "");
  }

  /** Copies a file, or a folder key by key; answers the source keys. */
  async function copyTree(path: string, toPath: string): Promise<string[]> {
    if (await head(path)) {
      await copyObject(keyOf(path), keyOf(toPath));
      return [keyOf(path)];
    }
    const from = folderPrefix(path);
    const to = folderPrefix(toPath);
    // Listed whole first: a copy into a folder below its source must not copy its own copies.
    const keys: string[] = [];
    for await (const page of keysUnder(path)) keys.push(...page.map((object) => object.key));
    if (keys.length === 0) throw objectNotFound();
    for (const key of keys) await copyObject(key, to + key.slice(from.length));
    return keys;
  }

  async function deleteKeys(keys: string[]) {
    for (let start = 0; start < keys.length; start += R2_BATCH)
      await bucket.delete(keys.slice(start, start + R2_BATCH));
  }

  const parts: PartedUploads = {
    minPartBytes: R2_MIN_PART_BYTES,
    async begin(dir, name, contentType) {
      const upload = await bucket.createMultipartUpload(keyOf(joinActual(dir, name)), {
        httpMetadata: { contentType: contentType || "application/octet-stream" },
      });
      return { dir, name, uploadId: upload.uploadId };
    },
    async putPart(upload, index, size, body) {
      const resumed = bucket.resumeMultipartUpload(keyOf(joinActual(upload.dir, upload.name)), upload.uploadId);
      return (await resumed.uploadPart(index + 1, withLength(body, size))).etag;
    },
    async complete(upload, tags) {
      const resumed = bucket.resumeMultipartUpload(keyOf(joinActual(upload.dir, upload.name)), upload.uploadId);
      await resumed.complete(tags.map((etag, index) => ({ partNumber: index + 1, etag })));
    },
    async abort(upload) {
      await bucket.resumeMultipartUpload(keyOf(joinActual(upload.dir, upload.name)), upload.uploadId).abort();
    },
  };

  return {
    async list(dir) {
      const prefix = folderPrefix(dir);
      const entries: FileObject[] = [];
      let cursor: string | undefined;
      do {
        const page = await bucket.list({ prefix, delimiter: "/", ...(cursor ? { cursor } : {}) });
        for (const folder of page.delimitedPrefixes) entries.push(folderOf(folder));
        for (const object of page.objects) {
          if (object.key.endsWith("/") || nameOf(object.key) === placeholder) continue;
          entries.push(fileOf(object));
        }
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
      if (entries.length === 0 && !(await isFolder(dir))) throw (await head(dir)) ? notAFolder() : objectNotFound();
      return entries;
    },

    async get(path) {
      if (path === "/") return { name: "root", size: 0, isDir: true, modified: storage.modified, path: "/" };
      const object = await head(path);
      if (object) return fileOf(object);
      if (await isFolder(path)) return folderOf(keyOf(path));
      throw objectNotFound();
    },

    async link(path) {
      const object = await head(path);
      if (!object) throw objectNotFound();
      const source: ByteSource = {
        size: object.size,
        modified: object.uploaded,
        // The bytes of the version the headers describe: a replacement in between fails the read.
        async read(start, end) {
          const body = await bucket.get(object.key, {
            range: { offset: start, length: end - start + 1 },
            onlyIf: { etagMatches: object.etag },
          });
          if (!body) throw objectNotFound();
          if (!("body" in body)) throw new Error(`${object.key} changed while it was being read`);
          return body.body as ReadableStream<Uint8Array>;
        },
      };
      return { source };
    },

    async makeDir(parentDir, name) {
      await bucket.put(`${folderPrefix(joinActual(parentDir, name))}${placeholder}`, "");
    },

    async rename(path, newName) {
      await deleteKeys(await copyTree(path, joinActual(parentOfActual(path), newName)));
    },

    async move(path, dstDir) {
      await deleteKeys(await copyTree(path, joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1))));
    },

    async copy(path, dstDir) {
      await copyTree(path, joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1)));
    },

    async remove(path) {
      if (await head(path)) return bucket.delete(keyOf(path));
      // Each page listed is deleted before the next is asked for, so memory holds one page.
      for await (const page of keysUnder(path)) await deleteKeys(page.map((object) => object.key));
    },

    async put(dir, upload) {
      await putObject(keyOf(joinActual(dir, upload.name)), upload.size, upload.body, upload.contentType);
    },

    parts,
  };
}

/**
 * The part size for an upload of `size` bytes: R2_PART_BYTES, or more (whole MiB) when that would
 * take more than R2's 10,000 parts. R2 wants every part but the last of one size.
 */
export function partSizeFor(size: number): number {
  return Math.max(R2_PART_BYTES, Math.ceil(size / R2_MAX_PARTS / MIB) * MIB);
}
