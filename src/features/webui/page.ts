// The web UI's pages. Workers Static Assets serves the front end's build folders without running
// the Worker (wrangler.toml [assets]); every other request reaches the router, and what no route
// answers comes here: outside the API, the app's index page, rendered per request the way AList's
// server rewrites it (server/static/static.go): title, icons, the customize_head/customize_body
// snippets, and window.OPENLIST_CONFIG pointing the app at this origin.
import type { Context } from "hono";
import { toBase64Url } from "../../auth/encoding.ts";
import type { Database } from "../../db/client.ts";
import type { AppEnv } from "../../http/context.ts";
import { readPublicSettings } from "../settings/store.ts";
import { WEB_UI_HEADER, WEB_UI_MARK } from "./roles.ts";

/** The front end's build folders; the assets layer answers them before the Worker runs. */
const ASSET_FOLDERS = /^\/(?:assets|static|images|streamer)\//;

/** The private settings the page needs besides the public ones. */
const PAGE_PRIVATE_KEYS = ["customize_head", "customize_body"] as const;

/**
 * The reply for a non-API request no route answered, or undefined when this deploy has no web UI
 * (no ASSETS binding, or no index.html in it: GATEHOUSE_WEB_UI=off), so the caller answers as the
 * API does.
 */
export async function serveWebUi(c: Context<AppEnv>, database: () => Database): Promise<Response | undefined> {
  const assets = c.env.ASSETS;
  if (!assets) return undefined;
  // index.html is read once per isolate, so awaiting it first costs nothing after the first
  // request, and an API-only deploy answers as the API does, without a database read.
  const url = new URL(c.req.url);
  const source = await indexSource(assets, url);
  if (!source) return undefined;
  const method = c.req.method;
  const readable = method === "GET" || method === "HEAD";

  // The assets layer answers these folders itself, misses included; the Worker sees them only when
  // called directly (tests). A miss is a plain 404, never the HTML page a script tag cannot use.
  if (ASSET_FOLDERS.test(c.req.path)) {
    if (!readable) return new Response(null, { status: 405, headers: { Allow: "GET, HEAD" } });
    const asset = await assets.fetch(new Request(c.req.url, { method, headers: c.req.raw.headers }));
    if (asset.status !== 404) return asset;
    await asset.body?.cancel();
    return new Response("404 page not found", {
      status: 404,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
  }

  // AList's NoRoute: the page for GET and POST, 405 with an empty body for anything else.
  if (!readable && method !== "POST") return new Response(null, { status: 405 });

  if (c.req.path === "/manifest.json" && readable) return manifest(await readPublicSettings(database(), []));

  const settings = await readPublicSettings(database(), PAGE_PRIVATE_KEYS);

  // The management pages get no customize_head/customize_body, as in AList: a snippet that breaks
  // the page can always be fixed from /@manage/settings.
  const manage = c.req.path === "/@manage" || c.req.path.startsWith("/@manage/");
  const page = pageSettings(settings, url.origin, manage);
  const [headOk, bodyOk] = await Promise.all([
    endsWhereItStarts(page.customizeHead),
    endsWhereItStarts(page.customizeBody),
  ]);
  if (!headOk) page.customizeHead = leftOut("customize_head");
  if (!bodyOk) page.customizeBody = leftOut("customize_body");

  const key = JSON.stringify(page);
  const known = rendered.get(key);
  const etag = known?.etag ?? `"${await digest(`${source.etag}\n${key}`)}"`;
  const headers = { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache", ETag: etag };
  if (matchesEtag(c.req.header("If-None-Match"), etag)) return new Response(null, { status: 304, headers });
  if (known) return new Response(known.html, { status: 200, headers });

  // First time with these settings: stream the rewrite out, and keep a copy for the next request.
  const [body, copy] = render(new Response(source.html), page).body!.tee();
  const remember = new Response(copy).text().then((html) => {
    if (rendered.size >= 16) rendered.delete(rendered.keys().next().value!);
    rendered.set(key, { html, etag });
  });
  try {
    c.executionCtx.waitUntil(remember);
  } catch {
    // No execution context (a test calling the app directly): the copy still completes.
  }
  return new Response(body, { status: 200, headers });
}

// Per isolate. The assets belong to the deployed version, as the isolate does, so index.html is
// read once; pages are kept by everything that goes into them (settings, origin, page kind), so a
// saved setting makes a new key and shows on the next load. The settings read itself is per request.
let indexSourcePromise: Promise<{ html: string; etag: string } | null> | undefined;
const rendered = new Map<string, { html: string; etag: string }>();

/** index.html from the assets, or null when this deploy has none (GATEHOUSE_WEB_UI=off). */
function indexSource(assets: Fetcher, url: URL): Promise<{ html: string; etag: string } | null> {
  indexSourcePromise ??= (async () => {
    const response = await assets.fetch(new Request(new URL("/index.html", url)));
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (!response.ok) throw new Error(`web UI: index.html answered ${response.status}`);
    const html = await response.text();
    return { html, etag: response.headers.get("ETag") ?? (await digest(html)) };
  })();
  // A failed read is not remembered: the next request tries again.
  indexSourcePromise.catch(() => (indexSourcePromise = undefined));
  return indexSourcePromise;
}

interface PageSettings {
  title: string;
  favicon: string;
  logo: string;
  mainColor: string;
  origin: string;
  customizeHead: string;
  customizeBody: string;
}

function pageSettings(settings: Record<string, string>, origin: string, manage: boolean): PageSettings {
  return {
    title: settings.site_title ?? "",
    favicon: settings.favicon ?? "",
    // `logo` may hold a light and a dark variant, one per line; the icon takes the first.
    logo: (settings.logo ?? "").split("\n")[0]!.trim(),
    mainColor: settings.main_color ?? "",
    origin,
    customizeHead: manage ? "" : (settings.customize_head ?? ""),
    customizeBody: manage ? "" : (settings.customize_body ?? ""),
  };
}

/**
 * The web app manifest index.html links to, from the same settings as the page: the browser reads
 * it on every page (a page in its place logged a syntax error each time) and names and draws an
 * installed app with it.
 */
function manifest(settings: Record<string, string>): Response {
  const title = settings.site_title || "Gatehouse";
  const icon = (settings.logo ?? "").split("\n")[0]!.trim();
  const body = {
    name: title,
    short_name: title,
    start_url: "/",
    scope: "/",
    display: "standalone",
    ...(settings.main_color ? { theme_color: settings.main_color } : {}),
    icons: icon ? [{ src: icon, sizes: "any" }] : [],
  };
  return new Response(JSON.stringify(body), {
    headers: { "Content-Type": "application/manifest+json", "Cache-Control": "no-cache" },
  });
}

function render(index: Response, page: PageSettings): Response {
  // HTMLRewriter streams: each handler sees the page as it passes, nothing is buffered but the
  // config script's text.
  let config = "";
  return new HTMLRewriter()
    .on("head > title", { element: (title) => void title.setInnerContent(page.title) })
    .on('link[rel="shortcut icon"], link[rel="icon"]', {
      element: (link) => void (page.favicon && link.setAttribute("href", page.favicon)),
    })
    .on('link[rel="apple-touch-icon"]', { element: (link) => void (page.logo && link.setAttribute("href", page.logo)) })
    .on("head > script:not([type]):not([src])", {
      // The inline script that declares window.OPENLIST_CONFIG; text arrives in chunks.
      text(chunk) {
        config += chunk.text;
        chunk.remove();
        if (chunk.lastInTextNode) chunk.after(configure(config, page), { html: true });
      },
    })
    .onDocument({
      comments(comment) {
        const marker = comment.text.trim();
        if (marker === "customize head") comment.replace(page.customizeHead, { html: true });
        else if (marker === "customize body") comment.replace(page.customizeBody, { html: true });
      },
    })
    .transform(index);
}

/**
 * The front end's config script with its placeholders filled (AList replaces the same strings), and
 * the mark on the page's own API requests.
 */
function configure(script: string, page: PageSettings): string {
  const values: Record<string, string> = { cdn: "", base_path: "", api: page.origin, main_color: page.mainColor };
  const filled = script.replace(
    /\b(cdn|base_path|api|main_color): undefined\b/g,
    (_, key: string) => `${key}: ${jsString(values[key]!)}`,
  );
  // The semicolon: the config script's last statement has none, and a "(" after it would call it.
  return `${filled}\n;${MARK_REQUESTS}\n`;
}

/**
 * Runs before the app's scripts: every request of this page to this origin's /api/ carries
 * `X-Gatehouse-UI: openlist`, so the API answers roles in the numbers this front end reads
 * (roles.ts; docs/decisions.md D17). The app's axios sends through XMLHttpRequest; fetch is marked
 * too. Same origin only: the header never leaves for another host, and needs no CORS preflight.
 */
const MARK_REQUESTS = `(function () {
  var header = ${jsString(WEB_UI_HEADER)}, mark = ${jsString(WEB_UI_MARK)};
  function ours(url) {
    try {
      var u = new URL(url, location.href);
      return u.origin === location.origin && u.pathname.indexOf("/api/") === 0;
    } catch (e) {
      return false;
    }
  }
  var open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    this.__gatehouseMark = ours(url);
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (this.__gatehouseMark) this.setRequestHeader(header, mark);
    return send.apply(this, arguments);
  };
  var fetched = window.fetch;
  if (fetched) window.fetch = function (input, init) {
    if (!ours(input instanceof Request ? input.url : String(input))) return fetched.apply(this, arguments);
    var request = new Request(input, init);
    request.headers.set(header, mark);
    return fetched.call(this, request);
  };
})();`;

/** A JS string literal that cannot end the script element it sits in. */
function jsString(value: string): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function leftOut(key: string): string {
  return `<!-- ${key} left out: it does not end where it starts (an unclosed comment, tag, script or style) -->`;
}

// Verdicts on the snippets seen lately; they change only when an admin saves them.
const verdicts = new Map<string, boolean>();

/**
 * Whether an HTML snippet leaves the parser where it found it. Pasted into the page unchecked, an
 * unclosed `<!--`, `<script>`, `<style>` or attribute would swallow the app's own scripts after it
 * and the page would never start. The real HTML tokenizer decides: a marker element after the
 * snippet must still be seen as an element.
 */
async function endsWhereItStarts(snippet: string): Promise<boolean> {
  if (snippet === "") return true;
  const known = verdicts.get(snippet);
  if (known !== undefined) return known;
  let seen = false;
  const probe = new HTMLRewriter()
    .on("gatehouse-end-probe", {
      element() {
        seen = true;
      },
    })
    .transform(new Response(`${snippet}<gatehouse-end-probe></gatehouse-end-probe>`));
  await probe.arrayBuffer();
  // Raw-text elements the tokenizer may not switch into (they hold text in a scripting browser).
  const ok =
    seen &&
    balanced(snippet, [
      "noscript",
      "template",
      "iframe",
      "noembed",
      "noframes",
      "xmp",
      "textarea",
      "title",
      "style",
      "script",
    ]) &&
    !/<plaintext[\s/>]/i.test(snippet);
  if (verdicts.size >= 16) verdicts.delete(verdicts.keys().next().value!);
  verdicts.set(snippet, ok);
  return ok;
}

function balanced(snippet: string, names: string[]): boolean {
  return names.every((name) => {
    const opens = snippet.match(new RegExp(`<${name}[\\s/>]`, "gi"))?.length ?? 0;
    const closes = snippet.match(new RegExp(`</${name}\\s*>`, "gi"))?.length ?? 0;
    return opens <= closes;
  });
}

async function digest(text: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return toBase64Url(hash.subarray(0, 18));
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed === etag || trimmed === `W/${etag}`;
  });
}
