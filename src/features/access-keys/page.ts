// The access keys page (docs/decisions.md D16.7): the OpenList web UI has no page for keys, so this
// small one is served at a path of its own. Plain HTML and one script (page.html), no framework
// and nothing fetched from elsewhere; it signs in with the token the web UI keeps (localStorage
// `token`) and calls /api/me/access_key/*. Every value from the server is set as text, never as HTML.
// The page is a static file in the assets folder (scripts/webui.ts copies it there), not in the
// bundle (docs/decisions.md D27.5); only the Worker reaches it (wrangler.toml runs it first).
import type { Context } from "hono";
import { ConfigError } from "../../env.ts";
import type { AppEnv } from "../../http/context.ts";

export const KEYS_PAGE_PATH = "/@keys";
/** Where scripts/webui.ts puts page.html in the assets folder. */
const KEYS_PAGE_ASSET = "/@keys.html";

/** The page, for GET and HEAD; anything else is no page here. */
export async function keysPage(c: Context<AppEnv>): Promise<Response | undefined> {
  const method = c.req.method;
  if (method !== "GET" && method !== "HEAD") return undefined;
  const file = await c.env.ASSETS?.fetch(new Request(new URL(KEYS_PAGE_ASSET, c.req.url)));
  if (!file?.ok || method === "HEAD") await file?.body?.cancel();
  if (!file?.ok)
    throw new ConfigError("the access keys page is not in the assets folder (npm run webui puts it there)");
  return new Response(method === "HEAD" ? null : file.body, {
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache" },
  });
}
