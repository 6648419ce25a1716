// The texts the file side answers (/api/fs/*, /d, /p, and the file operations WebDAV shares), each
// defined once. Most are AList's own words, kept so clients that match on them keep working; the
// WebDAV server (src/features/dav/) imports the ones it repeats.

// ---- Access (rules.ts)

/** AList's one text for a role denial, a hidden path and a wrong password alike. */
export const ACCESS_DENIED = "password is incorrect or you have no permission";

/** A path outside the path limit, or a change the caller's permissions do not allow. */
export const PERMISSION_DENIED = "permission denied";

/**
 * AList's text for a request path with `..` segments (AList v3.58.0 pkg/utils/path.go:85-90,
 * internal/errs/errors.go:13).
 */
export const RELATIVE_PATH_REFUSED = "access using relative path is not allowed";

/** fs/list with `refresh` by a caller who may not write there; AList's text. */
export const REFRESH_REFUSED = "Refresh without permission";

/** fs/dirs with `force_root` by someone other than the admin; AList's text (capitalised, unlike PERMISSION_DENIED). */
export const FORCE_ROOT_REFUSED = "Permission denied";

/** A rename of a path its meta's password guards (or that holds one), without the password; AList's text. */
export const RENAME_PASSWORD_PROTECTED = "Path is password-protected and cannot be renamed.";

/** A move, copy or remove of a name that is or holds a password-protected folder, without its password. */
export const protectedInside = (name: string) => `${name} is or holds a password-protected folder: give its password`;
/** A copy, move or rename that would carry hidden names out from under the rules that hide them. */
export const hiddenInsideOf = (name: string) =>
  `${name} holds hidden items: only a user who may see hidden items can copy, move or rename it`;

/** Renaming, moving or removing what keeps a caller's own view of the tree in place. */
export const OWN_BASE_PATH = "your base path and the folders above it cannot be renamed, moved or removed";
export const OWN_SCOPE_ROOT =
  "a folder your permissions start at (and the folders above it) cannot be renamed, moved or removed";
export const HOLDS_MOUNT_POINT =
  "a folder holding a storage's mount point cannot be renamed, moved or removed: change the storage's mount path on the storage page";

// ---- Names and requests

export const INVALID_NAME = "invalid file name";
export const EMPTY_NAMES = "Empty file names";
export const FILE_EXISTS = "file exists";
export const nameExists = (name: string) => `file [${name}] exists`;
export const intoItself = (operation: "move" | "copy", name: string) => `cannot ${operation} ${name} into itself`;
export const FILES_INTO_ITSELF = "cannot move a folder's files into the folder itself";
export const FILE_PATH_NOT_ENCODED = "File-Path is not percent-encoded UTF-8";
/** Go's strconv error for a Content-Length that is not a number, as AList answers fs/put. */
export const contentLengthInvalid = (header: string) =>
  `strconv.ParseInt: parsing ${JSON.stringify(header)}: invalid syntax`;
export const regexpInvalid = (error: unknown) =>
  `error parsing regexp: ${error instanceof Error ? error.message : String(error)}`;
/** The name of the finished task fs/put and fs/form report with `As-Task: true`. */
export const uploadTaskName = (name: string, mountPath: string, actualPath: string) =>
  `upload ${name} to [${mountPath}](${actualPath})`;
export const movedCount = (count: number) => `Successfully moved ${count} ${count === 1 ? "file" : "files"}`;

/**
 * A batch that stopped part-way: the failure, then which names were done and which not
 * (docs/decisions.md D8.8).
 */
export const partlyDone = (failure: string, verb: string, done: readonly string[], notDone: readonly string[]) =>
  `${failure} (${verb} before it: ${done.join(", ")}; not ${verb}: ${notDone.join(", ")})`;

// ---- Storages and operations (mounts.ts, operations.ts)

/** A driver without the operation asked for; AList's text. */
export const NOT_IMPLEMENTED = "not implement";
/** A backend's lookup of a name that is not there. */
export const OBJECT_NOT_FOUND = "object not found";
export const NOT_A_FILE = "not a file";
export const LINK_FAILED_PREFIX = "failed link: ";
export const LIST_FAILED_PREFIX = "failed get objs: ";
export const LIST_NOT_FOUND = `${LIST_FAILED_PREFIX}failed get dir: ${OBJECT_NOT_FOUND}`;
/** Part of every refusal of a path no storage serves. */
const STORAGE_NOT_FOUND = "storage not found";
export const NO_STORAGE_AT_ROOT = `failed get storage: ${STORAGE_NOT_FOUND}; please add a storage first`;
export const noStorageAt = (path: string) => `failed get storage: ${STORAGE_NOT_FOUND}; rawPath: ${path}`;
export const driverNotFound = (driver: string) => `failed get storage: driver [${driver}] not found`;
export const driverNotAtEdge = (driver: string) => `driver ${driver} cannot serve files at the edge`;
export const storageNotInit = (status: string) => `storage not init: ${status}`;
export const tooManyAliases = (depth: number) => `more than ${depth} aliases in a row (does an alias show itself?)`;
export const STORAGE_ROOT_RENAME = "a storage's root is renamed by changing its mount path";
export const STORAGE_ROOT_MOVE = "a storage's root is moved by changing its mount path";
export const STORAGE_ROOT_DELETE =
  "delete root folder is not allowed, please goto the manage page to delete the storage instead";
export const ACROSS_STORAGES_MOVE = "can't move files between two storages, try to copy";
export const tooManyAcross = (name: string, max: number) =>
  `${name} holds more than ${max} files and folders: Gatehouse copies at most ${max} between storages per request; copy its folders one at a time`;
export const tooManyWalked = (dir: string, max: number) =>
  `more than ${max} entries below ${dir}: Gatehouse walks at most ${max} per request`;
export const fileAtDestination = (name: string) => `${name} is a file at the destination`;
// ---- Reading a file from its storage (link-read.ts): the storage's failure, named by the file's name
// only (never the upstream's address, which may carry credentials).
export const readFailed = (name: string, status: number) => `the storage answered HTTP ${status} to a read of ${name}`;
export const readUnreachable = (name: string) => `the storage could not be reached to read ${name}`;
export const readBrokenOff = (name: string, next: number, end: number) =>
  `the storage broke off a read of ${name} at byte ${next} of ${end + 1}`;

// ---- Uploads (operations.ts putFile)

export const uploadEndedEarly = (sent: number, size: number) =>
  `the upload ended early: ${sent} of its ${size} bytes arrived`;
export const uploadTooLong = (size: number) => `the upload sent more than the ${size} bytes it declared`;

// ---- Form uploads (multipart.ts)

export const FORM_NOT_MULTIPART = "the body must be multipart/form-data with a boundary";
export const FORM_LENGTH_MISSING = "a form upload needs its Content-Length";
/** Go's text when a form has no `file` part, as AList answers it. */
export const FORM_NO_FILE = "http: no such file";
export const FORM_SHORTER = "the form is shorter than its Content-Length says";
export const FORM_ENDED_EARLY = "the form ended before its Content-Length";
export const FORM_FILE_NOT_LAST = "the file must be the form's last part, followed by its closing boundary";

// ---- /d and /p (download.ts, sign.ts, serve.ts)

export const SIGN_EXPIRE_MISSING = "expire missing";
export const SIGN_EXPIRE_INVALID = "expire invalid";
export const SIGN_EXPIRED = "sign expired";
export const SIGN_INVALID = "sign invalid";
export const PROXY_NOT_ALLOWED = "proxy not allowed";
export const markdownTooLarge = (max: number) =>
  `markdown larger than ${max} bytes is not previewed while filter_readme_scripts is on`;
export const upstreamUnreachable = (url: string, reason: string) => `http request [${url}] failure: ${reason}`;
export const upstreamRedirected = (url: string, status: number) =>
  `http request [${url}] failure,status: ${status} (a redirect the credentials of this storage are not sent to)`;
export const upstreamFailed = (url: string, status: number, text: string) =>
  `http request [${url}] failure,status: ${status} response:${text}`;
