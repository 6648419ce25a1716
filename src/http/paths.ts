/** Paths of the API and the file endpoints: never answered with the web UI's HTML page. */
export function isApiPath(path: string): boolean {
  return /^\/(?:api|d|p|sd|sad|ae|ad|ap|dav)(?:\/|$)/.test(path) || path === "/ping";
}

/** `/d/…`, `/p/…`, `/sd/…`, `/sad/…`, an archive's entries (`/ae/…`, `/ad/…`, `/ap/…`) and the WebDAV server: file bytes, not API replies. */
export const isDownloadPath = (path: string) => /^\/(?:[dp]|sd|sad|a[edp]|dav)(?:\/|$)/.test(path);

/** The WebDAV server: its own statuses, bodies and methods (no CORS: its clients are not browsers). */
export const isDavPath = (path: string) => /^\/dav(?:\/|$)/.test(path);
