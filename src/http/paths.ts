/** Paths of the API and the file endpoints: never answered with the web UI's HTML page. */
export function isApiPath(path: string): boolean {
  return /^\/(?:api|d|p|dav)(?:\/|$)/.test(path) || path === "/ping";
}

/** `/d/…` and `/p/…`: file bytes, not API replies. */
export const isDownloadPath = (path: string) => /^\/[dp](?:\/|$)/.test(path);
