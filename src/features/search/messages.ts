// Every text search answers: AList's where AList has the route (AList v3.58.0 internal/errs/search.go,
// server/handles/index.go).

export const SEARCH_UNAVAILABLE = "search not available";
export const INDEX_RUNNING = "index is running";
export const INDEX_NOT_RUNNING = "index is not running";
/** The progress's `error` when a folder could not be listed (the build goes on). */
export const failedListing = (path: string, reason: string) => `failed to list ${path}: ${reason}`;
/** Keywords holding a NUL or another control character (FTS5 stops at a NUL): refused, not guessed at. */
export const KEYWORDS_NOT_TEXT = "keywords must not contain control characters or unpaired surrogates";
/** OpenList's texts for the manual scan (server/handles/scan.go, internal/op/recursive_list.go). */
export const SCAN_RUNNING = "manual scan is running, please try later";
export const SCAN_NOT_RUNNING = "manual scan is not running";
