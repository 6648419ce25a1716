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
/** A unit, or a retry, of a task whose creator no longer may do what it does (docs/decisions.md D15.10). */
export const CREATOR_GONE = "the user who created this task no longer exists: it cannot run";
export const CREATOR_DISABLED = "the user who created this task is disabled: it cannot run";
export const creatorMayNot = (what: string) => `the user who created this task may no longer ${what}: it cannot run`;
/** A canceled task's error, as AList shows it. */
export const CANCELED = "context canceled";

// ---- Offline download

export const URL_NOT_HTTP = "only http and https URLs can be downloaded";
export const toolNotFound = (tool: string) => `failed get tool: tool ${tool} not found`;
export const fetchFailed = (status: number) => `http status code ${status}`;
export const SIZE_UNKNOWN =
  "the server did not say how big the file is (no Content-Length): a storage upload needs the size first";
/** An Alias's targets are held to the caller's metas, which a background task does not have. */
export const NOT_INTO_ALIAS = "offline downloads cannot go into an Alias: choose a folder of its target storage";
/** A URL, or a redirect on its way, to the Worker's own machine or a private network (docs/decisions.md D15.9). */
export const privateAddress = (host: string) =>
  `refused to download from ${host}: loopback, private and link-local addresses are off limits unless OFFLINE_DOWNLOAD_PRIVATE_HOSTS names them`;
export const REDIRECT_NOT_HTTP = "a redirect led to a URL that is not http or https";
export const tooManyRedirects = (hops: number) => `stopped after ${hops} redirects`;
/** A later part's ranged read answered with the whole file: no retry makes that server send a part. */
export const RANGE_IGNORED =
  "the server advertised ranges (Accept-Ranges: bytes) but answered a ranged read with the whole file: it cannot be downloaded in parts";
