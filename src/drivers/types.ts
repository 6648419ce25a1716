// What a driver is: its template (config, additional items) as AList v3.58 publishes it, and the
// check that tells whether a storage configured with it can work (AList v3.58.0
// internal/op/driver.go:61, :155; internal/op/storage.go:113).
import { FileError } from "../http/errors.ts";

/**
 * One field of a driver template; all six keys always present, strings "" when empty (AList v3.58.0
 * internal/driver/item.go:7).
 */
export interface DriverItem {
  name: string;
  type: "string" | "number" | "text" | "select" | "bool";
  default: string;
  options: string;
  required: boolean;
  help: string;
}

export interface DriverConfig {
  name: string;
  local_sort: boolean;
  only_local: boolean;
  only_proxy: boolean;
  no_cache: boolean;
  no_upload: boolean;
  need_ms: boolean;
  default_root: string;
  alert: string;
}

/** A storage's `status` once its driver's check passed; otherwise the status is why it failed. */
export const WORKING = "work";

/** A storage another one can point into (Alias paths, Crypt's remote_path). */
export interface MountedStorage {
  id: number;
  mountPath: string;
  disabled: boolean;
  status: string;
}

export interface CheckContext {
  /** Aborts when the check's time is up; checks hand it to fetch and close their sockets on it. */
  signal: AbortSignal;
  /** The time the check has, for its messages. */
  timeoutMs: number;
  /** For drivers that point into other storages: those mounted on or above the paths they point to. */
  storages: MountedStorage[];
}

/** A storage's `addition` read through its driver's template: missing keys take the item's default. */
export interface Addition {
  text(name: string): string;
  flag(name: string): boolean;
}

export interface Driver {
  config: DriverConfig;
  /**
   * AList's hidden `proxy_range` option: adds the common item of that name (AList v3.58.0
   * internal/op/driver.go:96-104).
   */
  proxyRangeOption?: boolean;
  additional: DriverItem[];
  /** The paths of other storages this one shows (Alias, Crypt); the check gets the storages mounted on or above them. */
  pointsInto?(addition: Addition): string[];
  /** Resolves when a storage with this addition can work; otherwise throws an error a person can act on. */
  check(addition: Addition, context: CheckContext): Promise<void>;
  /**
   * The file side: how a storage of this driver is browsed, downloaded and written. Absent for the
   * drivers that cannot serve files at the edge (Local, SMB, SFTP, Crypt): the fs layer answers
   * `driver <name> cannot serve files at the edge` for them.
   */
  files?(storage: StorageHandle): FileBackend;
}

/** A check's verdict on a storage: the message becomes its `status`. */
export class CheckFailed extends Error {
  override name = "CheckFailed";
}

// ---------------------------------------------------------------------------------------------
// The file side of a driver (docs/decisions.md D7). The fs layer resolves a full path to a storage
// and an actual path inside it ("/" or "/a/b", cleaned, never with `..`), then calls the storage's
// backend. Backends speak in actual paths; they add their own root (`root_folder_path`).
// ---------------------------------------------------------------------------------------------

/** What a backend knows of its storage: the row's settings, read once per request. */
export interface StorageHandle {
  id: number;
  mountPath: string;
  /** The storage's `modified`: the time AList gives folders that have none of their own. */
  modified: Date;
  addition: Addition;
  /** The fs layer, for drivers that show other storages (Alias): full paths, the caller's checks already done. */
  fs: StorageFs;
  /** Aborts with the request; backends pass it to every fetch and socket. */
  signal?: AbortSignal;
}

/** Full-path access to the mount tree for Alias. */
export interface StorageFs {
  list(fullPath: string): Promise<FileObject[]>;
  get(fullPath: string): Promise<FileObject>;
  link(fullPath: string, options: LinkOptions): Promise<Link>;
}

/** One file or folder as a driver sees it; the fs layer turns it into AList's wire object. */
export interface FileObject {
  name: string;
  /** Bytes; 0 for folders (UrlTree folders: the sum of their children). */
  size: number;
  isDir: boolean;
  modified: Date;
  /** When the upstream knows it; otherwise the wire shows `modified`. */
  created?: Date;
  /** The driver-internal path AList shows as `path` (S3: root + key); "" when the driver has none. */
  path: string;
  /** `{md5: "…"}` and the like, when the upstream gives them. */
  hashInfo?: Record<string, string>;
  /** S3's storage class of the object. */
  storageClass?: string;
}

export interface LinkOptions {
  /** True for `/d` and `raw_url` (the client will be sent there), false for `/p` (Gatehouse fetches it). */
  redirect: boolean;
  /** The client's request headers (Range, If-*), for backends that pass them on. */
  headers?: Headers;
}

/**
 * How to reach a file's bytes: a URL (with the headers a proxy must send: upstream credentials,
 * never shown to the client), or a byte source the fs layer serves itself with Range support.
 */
export type Link = { url: string; headers?: Record<string, string> } | { source: ByteSource };

/**
 * A link the client may be sent to: a URL that needs no headers of ours. A WebDAV target's URL needs
 * its credentials, which stay on the server (an Alias over it would otherwise redirect the client to
 * an address it cannot open, and show it the upstream's address).
 */
export const redirectable = (link: Link): link is { url: string } =>
  "url" in link && Object.keys(link.headers ?? {}).length === 0;

/** Bytes a backend reads itself (FTP's RETR with REST, Virtual's generated bytes). */
export interface ByteSource {
  size: number;
  modified: Date;
  /** The bytes from `start` to `end` inclusive, streamed; `end` < size. */
  read(start: number, end: number, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>>;
}

/** An upload: the body streams through, its length known in advance (`Content-Length`). */
export interface Upload {
  name: string;
  size: number;
  body: ReadableStream<Uint8Array>;
  contentType: string;
  modified?: Date;
  /** From `X-File-Md5`, `X-File-Sha1`, `X-File-Sha256`, for backends that can check them. */
  hashes?: { md5?: string; sha1?: string; sha256?: string };
  /** Aborted when the body fails: the request that sends it is aborted (docs/decisions.md D12.8). */
  signal?: AbortSignal;
}

/**
 * A storage's file operations, in actual paths. `list` and `link` are required; a missing optional
 * operation answers AList's `not implement`. Failures throw FileError (AList's texts) or, for
 * anything the upstream says, an Error whose message names no credential.
 */
export interface FileBackend {
  /** The children of a folder. Throws FileError "object not found" or "not a folder". */
  list(dir: string): Promise<FileObject[]>;
  /** One object without listing its parent (S3: a HeadObject). Absent: the fs layer lists the parent. */
  get?(path: string): Promise<FileObject>;
  link(path: string, options: LinkOptions): Promise<Link>;
  /**
   * True when `link` with redirect intent needs no lookup first (S3 presigns a key locally): /d then
   * makes no upstream call at all, and a missing object is the upstream's 404 at the link.
   */
  linksWithoutLookup?: boolean;
  makeDir?(parentDir: string, name: string): Promise<void>;
  rename?(path: string, newName: string): Promise<void>;
  /** Moves `path` into the folder `dstDir`, same storage. */
  move?(path: string, dstDir: string): Promise<void>;
  /** Copies `path` into the folder `dstDir`, same storage. */
  copy?(path: string, dstDir: string): Promise<void>;
  remove?(path: string): Promise<void>;
  /** Writes `upload.name` into `dir`, replacing an object of that name. */
  put?(dir: string, upload: Upload): Promise<void>;
  /**
   * True when a put whose body fails midway leaves the bytes that arrived under the final name
   * (WebDAV, FTP): the fs layer then removes that partial file. S3 stores nothing from a failed put.
   */
  partialUploads?: boolean;
  /** `/api/fs/other`. */
  other?(path: string, method: string, data: unknown): Promise<unknown>;
  /**
   * Uploads assembled upstream from parts sent one at a time, possibly by different requests and
   * isolates (S3's multipart upload). Absent: the fs layer stages parts itself. Used by the chunked
   * upload API and by background copies of big files.
   */
  parts?: PartedUploads;
  /**
   * HTTP Direct (docs/decisions.md D12.4): a short-lived URL the client uploads `name` into `dir`
   * with, exactly `size` bytes, without this server. Present only when the storage opted in.
   */
  directUpload?(dir: string, name: string, size: number): Promise<DirectUpload>;
}

/** Where and how a client uploads one file itself (OpenList internal/model/direct_upload.go). */
interface DirectUpload {
  url: string;
  method: "PUT";
  /** Headers the client must send as they are. */
  headers: Record<string, string>;
}

/**
 * An upload in parts. Everything a later call needs is in `PartedUpload`, which the caller keeps in
 * the database between requests; the backend holds no state of its own.
 */
export interface PartedUploads {
  /** The smallest part the upstream takes, except the last (S3: 5 MiB). */
  minPartBytes: number;
  /** Opens an upload of `name` into `dir`; nothing is visible under that name until `complete`. */
  begin(dir: string, name: string, contentType: string): Promise<PartedUpload>;
  /**
   * Stores part `index` (0-based) streamed from `body`, exactly `size` bytes; answers its tag.
   * `signal` aborts when the body fails: the request that sends it is aborted (docs/decisions.md D12.8).
   */
  putPart(
    upload: PartedUpload,
    index: number,
    size: number,
    body: ReadableStream<Uint8Array>,
    signal?: AbortSignal,
  ): Promise<string>;
  /** Joins the parts, in index order, into the final object, replacing one of that name. */
  complete(upload: PartedUpload, tags: string[]): Promise<void>;
  /** Drops the parts stored so far; the name keeps whatever it had before. */
  abort(upload: PartedUpload): Promise<void>;
}

export interface PartedUpload {
  dir: string;
  name: string;
  /** The upstream's id for the upload (S3's UploadId). */
  uploadId: string;
}

/** A driver's failures are the file side's one error type, with AList's texts (src/http/errors.ts). */
export { FileError, type FileErrorKind } from "../http/errors.ts";

export const objectNotFound = () => new FileError("not_found", "object not found");
export const notAFolder = () => new FileError("not_a_folder", "not a folder");
export const notAFile = () => new FileError("not_a_file", "not a file");
