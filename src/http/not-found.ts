import type { Context } from "hono";
import type { RouterRoute } from "hono/types";
import { envelope } from "./envelope.ts";

/**
 * The reply for a request no route handled: 405 when some route answers this path under another
 * method, else 404. AList answered both with its HTML page; API clients need an envelope.
 */
export function createNotFoundHandler(routes: () => RouterRoute[]) {
  let patterns: { method: string; pattern: RegExp }[] | undefined;
  return (c: Context) => {
    patterns ??= routes()
      .filter((route) => route.method !== "ALL")
      .map((route) => ({ method: route.method, pattern: pathPattern(route.path) }));
    const path = c.req.path;
    const allowed = [...new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method))];
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      return envelope(c, 405, `method ${c.req.method} not allowed for ${path}; use ${allowed.join(" or ")}`, null);
    }
    return envelope(c, 404, `no route for ${c.req.method} ${path}`, null);
  };
}

function pathPattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) =>
      segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".*" : segment.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  // Exact, as Hono's router is: `/api/me/` is no route at all, not `/api/me` under another method.
  return new RegExp(`^${source}$`);
}
