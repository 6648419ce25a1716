// The texts share links answer, each defined once. OpenList's words where OpenList has the case
// (OpenList server/handles/sharing.go), so the web UI shows what it knows.

/** Management of a share that is not there or is someone else's (404). */
export const SHARE_NOT_FOUND = "sharing not found";
/** The management routes to the guest account. */
export const GUEST_REFUSED = "You are a guest";
export const PERMISSION_DENIED = "permission denied";
export const NO_FILES = "must add at least 1 object";
export const sharePathDenied = (path: string) => `permission denied to share path [${path}]`;
export const sameName = (name: string) => `two shared items have the same name [${name}]: share their folder instead`;
export const ID_TOO_LONG = "share id must be at most 64 characters";
export const ID_CHARACTERS = "share id can only contain letters, numbers, underscores, hyphens, and CJK characters";
export const ID_TAKEN = "sharing id already exists";
export const EXPIRES_INVALID = "expires must be an RFC 3339 time or null";

// ---- Using a share (browsing under /@s, downloading from /sd): never a real storage path.

export const INVALID_SHARE_ID = "invalid share id";
export const SHARE_GONE = "the share does not exist";
export const SHARE_INVALID = "the share has expired or is no longer valid";
export const WRONG_CODE = "wrong share code";
export const OBJECT_NOT_FOUND = "object not found";
export const ROOT_LINK = "cannot get sharing root link";
export const FOLDER_LINK = "a folder cannot be downloaded: open the share's page";
export const STORAGE_FAILED = "the storage behind this share failed";
/** Archives inside a share while the setting `share_archive_preview` is off (OpenList's words). */
export const ARCHIVE_PREVIEW_OFF = "sharing archives previewing is not allowed";
/** The share's creator may not read archives at the shared ZIP (its role scope's read-archives bit). */
export const ARCHIVE_NOT_READABLE = "archives cannot be opened in this share: download the file instead";
