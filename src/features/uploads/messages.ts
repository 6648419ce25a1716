// What the chunked upload API and HTTP Direct answer, in OpenList's words where it has the case
// (OpenList server/handles/multipart.go, internal/multipart/session.go, server/handles/direct_upload.go).

export const MULTIPART_DISABLED = "multipart upload is disabled";
export const FILE_SIZE_INVALID = "multipart upload requires a valid X-File-Size header";
export const FILE_SIZE_NOT_POSITIVE =
  "multipart upload requires a positive X-File-Size; upload empty files via /fs/put";
export const CHUNK_SIZE_INVALID = "X-Chunk-Size must be a whole number of bytes";
export const fileTooLarge = (size: number, parts: number, chunk: number) =>
  `a file of ${size} bytes needs more than ${parts} chunks of ${chunk} bytes`;
export const SESSION_NOT_FOUND = "multipart upload session not found";
export const SESSION_EXPIRED = "multipart upload session expired";
export const CHUNK_INDEX_INVALID = "invalid X-Chunk-Index header";
export const chunkOutOfRange = (index: number, total: number) => `chunk index ${index} out of range [0,${total})`;
export const chunkSizeWrong = (index: number, got: number, expected: number) =>
  `chunk ${index} must be ${expected} bytes, got ${got}`;
export const incompleteChunk = (index: number, expected: number) =>
  `incomplete chunk ${index}: expected ${expected} bytes`;
export const chunkTooLarge = (index: number, expected: number) =>
  `chunk ${index} larger than expected ${expected} bytes`;
export const chunkDiffers = (index: number) =>
  `chunk ${index} was already stored with different bytes; abort the upload to start over`;
export const chunkDiffersCompleted = (index: number) =>
  `chunk ${index} differs from the bytes the completed upload holds`;
export const hashInvalid = (header: string, digits: number) => `${header} must be ${digits} hex digits`;
export const STATUS_LOOKUP_INVALID = "status lookup requires upload_id, or path and size";
export const cannotComplete = (received: number, size: number) =>
  `cannot complete: ${received} of ${size} bytes received`;
export const COMPLETING = "the upload is being completed by another request";
export const SESSION_COMPLETING = "the upload is being completed; no more chunks are taken";
export const STORAGE_CHANGED = "the storage under this upload's path changed; abort it and upload again";
export const DIRECT_UPLOAD_OFF = "direct upload is not enabled on this storage";
export const FILE_NAME_INVALID = "using relative path is not allowed";
