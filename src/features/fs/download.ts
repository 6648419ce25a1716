// `/d/*path` and `/p/*path` (AList v3.58.0 server/middlewares/down.go:19,
// server/handles/down.go:23, :50): no login, the sign is the only gate. `/d` sends the client to
// the upstream (302) when the storage allows it, else serves like `/p`; `/p` streams the bytes
// through this server. One database round trip: the tree, the metas and the settings.
import { redirectable } from "../../drivers/types.ts";
import type { Context } from "hono";
import type { AppEnv } from "../../http/context.ts";
import { readAtMost } from "../../http/body.ts";
import { ApiError } from "../../http/errors.ts";
import type { Router } from "../../http/router.ts";
import { sanitizeMarkdown } from "./markdown.ts";
import { markdownTooLarge, PROXY_NOT_ALLOWED } from "./messages.ts";
import { fileFailure, MountTree } from "./mounts.ts";
import { baseName, decodeDownloadPath, escapePath } from "./path.ts";
import { signFor, signRequired, targetNeedsSign } from "./rules.ts";
import { serveLink } from "./serve.ts";
import { signProblem } from "./sign.ts";
import type { FsState } from "./state.ts";
import { readState } from "./store.ts";
import { extensionOf } from "./wire.ts";

/** Markdown bigger than this is not rendered safe in memory; it is refused rather than served raw. */
const MAX_MARKDOWN_BYTES = 4 * 1024 * 1024;

export function registerDownloadRoutes(app: Router) {
  // HEAD is answered by the GET route (Hono), without a body.
  app.get("/d/:path{.+}", (c) => download(c, "d"));
  app.get("/p/:path{.+}", (c) => download(c, "p"));
  for (const kind of ["d", "p"] as const) {
    app.openAPIRegistry.registerPath({ method: "get", path: `/${kind}/{path}` });
  }
}

async function download(c: Context<AppEnv>, kind: "d" | "p"): Promise<Response> {
  const url = new URL(c.req.url);
  const path = decodeDownloadPath(url.pathname.slice(2));
  const state = await readState(c.var.db, { paths: [path], folders: [] });
  const tree = new MountTree(state.tree, c.var.db, c.req.raw.signal);
  const storage = await tree.storageAt(path);
  const sign = url.searchParams.get("sign") ?? "";

  const checked = signRequired(state, path, storage);
  if (checked) {
    const problem = await signProblem(state.settings.token, path, sign);
    if (problem) throw new ApiError(401, problem);
  }
  // Through an alias, a target a meta password guards or a hide rule hides needs the sign as it
  // would named directly.
  tree.guardedBy({
    async enter(target) {
      if (checked || !targetNeedsSign(state, [target])) return;
      const problem = await signProblem(state.settings.token, path, sign);
      if (problem) throw new ApiError(401, problem);
    },
    entries: (_target, entries) => entries,
  });

  const mounted = await tree.mount(path);
  const { driver } = mounted;
  const ext = extensionOf(path);
  const mustProxy =
    driver.config.only_proxy ||
    driver.config.only_local ||
    mounted.storage.webProxy ||
    state.settings.proxyTypes.has(ext);

  if (kind === "d" && !mustProxy) {
    const link = await tree.link(path, { redirect: true, headers: c.req.raw.headers });
    if (redirectable(link)) return redirect(c, withForwardedParams(state, link.url, url.searchParams));
    return serveLink(c.req.raw, link, baseName(path));
  }
  if (
    kind === "p" &&
    !mustProxy &&
    mounted.storage.webdavPolicy !== "use_proxy_url" &&
    !state.settings.textTypes.has(ext)
  ) {
    throw new ApiError(403, PROXY_NOT_ALLOWED);
  }
  if (mounted.storage.downProxyUrl !== "" && !url.searchParams.has("d")) {
    const base = mounted.storage.downProxyUrl.split("\n")[0]!.trim().replace(/\/+$/, "");
    const sign = mounted.storage.downProxySign ? `?sign=${await signFor(state, path, storage, true)}` : "";
    return redirect(c, `${base}${escapePath(path)}${sign}`);
  }

  const link = await tree.link(path, { redirect: false, headers: c.req.raw.headers });
  if ("url" in link) link.url = withForwardedParams(state, link.url, url.searchParams);
  const filterMarkdown = ext === "md" && state.settings.filterReadmeScripts;
  try {
    // Filtered Markdown is made safe whole: a range of it could cut a tag in two.
    const response = await serveLink(filterMarkdown ? withoutRange(c.req.raw) : c.req.raw, link, baseName(path));
    return filterMarkdown ? await safeMarkdown(response) : response;
  } catch (error) {
    throw fileFailure(error, "");
  }
}

function withoutRange(request: Request): Request {
  const headers = new Headers(request.headers);
  for (const name of ["range", "if-range", "if-none-match", "if-modified-since"]) headers.delete(name);
  return new Request(request, { headers });
}

/** Go's redirect: 302, a tiny HTML body for GET, and no caching or referrer. */
function redirect(c: Context<AppEnv>, location: string): Response {
  const headers = {
    Location: location,
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "max-age=0, no-cache, no-store, must-revalidate",
    "Content-Type": "text/html; charset=utf-8",
  };
  const escaped = location.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return new Response(c.req.method === "HEAD" ? null : `<a href="${escaped}">Found</a>.\n`, { status: 302, headers });
}

/** `forward_direct_link_params`: the request's query, minus the ignored names, added to the link. */
function withForwardedParams(state: FsState, link: string, query: URLSearchParams): string {
  if (!state.settings.forwardDirectLinkParams) return link;
  const target = new URL(link);
  for (const [name, value] of query)
    if (!state.settings.ignoreDirectLinkParams.has(name)) target.searchParams.append(name, value);
  return target.toString();
}

/**
 * The upstream's Markdown, made script-free (docs/decisions.md D8.7); other statuses pass as they
 * are.
 */
async function safeMarkdown(response: Response): Promise<Response> {
  if (response.status !== 200 || response.body === null) return response;
  const bytes = await readAtMost(response.body, MAX_MARKDOWN_BYTES, response.headers.get("content-length"));
  if (!bytes) throw new ApiError(500, markdownTooLarge(MAX_MARKDOWN_BYTES));
  const body = sanitizeMarkdown(new TextDecoder().decode(bytes));
  const headers = new Headers(response.headers);
  for (const name of ["content-length", "content-encoding", "content-range", "etag", "accept-ranges"])
    headers.delete(name);
  headers.set("Content-Type", "text/plain; charset=utf-8");
  return new Response(body, { status: 200, headers });
}
