// The one path module of the file side. Every path a client sends goes through here before it
// names anything: cleaning, joining the caller's base path, prefix tests and URL decoding.
// docs/decisions.md D8.1: the base path is joined to every request path, so no spelling escapes it.
import { cleanPath } from "../../lib/path.ts";

export { cleanPath };

/** True when the raw path climbs with `..` (as a segment, with either slash). */
export function hasRelativeSegment(raw: string): boolean {
  return raw.replace(/\\/g, "/").split("/").includes("..");
}

/**
 * The full path in the mount tree for a path a user sent: the base path joined to the cleaned
 * request path. Null when the request climbs with `..` (callers answer messages.ts's RELATIVE_PATH_REFUSED).
 * NUL and other control characters cannot name a file anywhere: they are refused too.
 */
export function joinBasePath(basePath: string, requestPath: string): string | null {
  if (hasRelativeSegment(requestPath) || /[\u0000-\u001f]/.test(requestPath)) return null;
  const base = cleanPath(basePath);
  const path = cleanPath(requestPath);
  if (base === "/") return path;
  return path === "/" ? base : `${base}${path}`;
}

/** `path` equals `prefix` or lies below it, on a `/` boundary (`/a` holds `/a/b`, not `/ab`). */
export function isWithin(path: string, prefix: string): boolean {
  return prefix === "/" || path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The paths below `path` as a range of an index on paths: [`prefix`, `upper`), the prefix being the
 * path with its "/" and the bound the same with that "/" raised to "0", its neighbour in byte order
 * (SQLite compares text as UTF-8 bytes, so this holds for any character). A read then visits the
 * rows of that subtree, not every row of the table.
 */
export function subtreeRange(path: string): { prefix: string; upper: string } {
  const prefix = path === "/" ? "/" : `${path}/`;
  return { prefix, upper: `${prefix.slice(0, -1)}0` };
}

export function parentOf(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export function joinName(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/** `/`, then every ancestor down to the path itself: `/a/b` → `/`, `/a`, `/a/b`. */
export function pathChain(path: string): string[] {
  const chain = ["/"];
  let prefix = "";
  for (const segment of path.split("/").filter(Boolean)) {
    prefix += `/${segment}`;
    chain.push(prefix);
  }
  return chain;
}

/**
 * Names of files and folders (docs/decisions.md D8.3): not empty, not `.` or `..`, no `/`, `\` or
 * control characters. `a..b.txt` is a fine name (AList refused it).
 */
export function isValidName(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !/[/\\\u0000-\u001f]/.test(name);
}

/**
 * The path of a `/d` or `/p` URL, decoded exactly once (docs/decisions.md D8.3). A `%` that starts
 * no escape stays a `%`, so a file named `100%.txt` downloads; bytes that are not UTF-8 are kept as
 * they came. The result is cleaned: `..` can only climb to the root of the tree.
 */
export function decodeDownloadPath(rawPath: string): string {
  const decoded = rawPath.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  return cleanPath(decoded);
}

/**
 * Each segment percent-escaped as Go's url.PathEscape does it (AList's links: AList v3.58.0
 * server/handles/fsread.go:393-396).
 */
export function escapePath(path: string): string {
  return path
    .split("/")
    .map((segment) =>
      encodeURIComponent(segment)
        .replace(/%24/g, "$")
        .replace(/%26/g, "&")
        .replace(/%2B/g, "+")
        .replace(/%3A/g, ":")
        .replace(/%3D/g, "=")
        .replace(/%40/g, "@")
        .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join("/");
}
