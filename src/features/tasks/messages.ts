// The texts of the task API and of the background work behind it. The refusals are AList's words
// (AList v3.58.0 server/handles/task.go:86-123, server/middlewares/auth.go:195-203).

/** The guest on /api/task/*. */
export const GUEST_NO_TASKS = "You are a guest";
/** An unknown id, or someone else's: the same answer, so ids cannot be probed. */
export const TASK_NOT_FOUND = "task not found";
/** A batch operation's body that is not an array of ids. */
export const INVALID_REQUEST_FORMAT = "invalid request format";

/** A unit whose worker vanished and whose attempts are used up (the cron sweep's verdict). */
export const INTERRUPTED = "the task was interrupted and its attempts are used up: retry it";
/** A canceled task's error, as AList shows it. */
export const CANCELED = "context canceled";
/** The source of a copy changed between the walk and the copy of a file. */
export const sourceSizeChanged = (name: string, expected: number, actual: number) =>
  `${name} changed while it was copied: ${expected} bytes expected, ${actual} read`;
/** A source read that the upstream refused. */
export const readFailed = (name: string, status: number) => `failed to read ${name}: upstream answered ${status}`;

// ---- Offline download

export const URL_NOT_HTTP = "only http and https URLs can be downloaded";
export const toolNotFound = (tool: string) => `failed get tool: tool ${tool} not found`;
export const fetchFailed = (status: number) => `http status code ${status}`;
export const SIZE_UNKNOWN =
  "the server did not say how big the file is (no Content-Length): a storage upload needs the size first";
/** An Alias's targets are held to the caller's metas, which a background task does not have. */
export const NOT_INTO_ALIAS = "offline downloads cannot go into an Alias: choose a folder of its target storage";
