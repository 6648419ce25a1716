/** Paths of the API and the file endpoints: never answered with the web UI's HTML page. */
export function isApiPath(path: string): boolean {
  return /^\/(?:api|d|p|sd|sad|ae|ad|ap|dav|s3)(?:\/|$)/.test(path) || path === "/ping";
}

/** `/d/…`, `/p/…`, `/sd/…`, `/sad/…`, an archive's entries (`/ae/…`, `/ad/…`, `/ap/…`), the WebDAV server and the S3 endpoint: file bytes, not API replies. */
export const isDownloadPath = (path: string) => /^\/(?:[dp]|sd|sad|a[edp]|dav|s3)(?:\/|$)/.test(path);

/** The WebDAV server: its own statuses, bodies and methods (no CORS: its clients are not browsers). */
export const isDavPath = (path: string) => /^\/dav(?:\/|$)/.test(path);

/** The S3 endpoint: its own statuses, XML bodies and streamed uploads (docs/decisions.md D22). */
export const isS3Path = (path: string) => /^\/s3(?:\/|$)/.test(path);
