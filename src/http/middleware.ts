import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { logs, readConfig } from "../env.ts";
import type { AppEnv } from "./context.ts";
import { GATEHOUSE_VERSION } from "../version.ts";
import { payloadTooLarge } from "./on-error.ts";
import { isApiPath, isDavPath, isDownloadPath, isS3Path } from "./paths.ts";

// CORS: any origin, the headers AList clients send, no cookies (the token travels in a header).
// Not on the WebDAV server, whose OPTIONS is its own (DAV: 1, 2) and whose clients are not browsers.
const corsHeaders: [string, string][] = [
  ["Access-Control-Allow-Origin", "*"],
  ["Access-Control-Expose-Headers", "X-Request-Id,X-Gatehouse-Version"],
];
const preflightHeaders: [string, string][] = [
  ...corsHeaders,
  ["Access-Control-Allow-Headers", "Authorization,Content-Type,Client-Id"],
  ["Access-Control-Allow-Methods", "GET,POST,PUT,DELETE,OPTIONS"],
  ["Access-Control-Max-Age", "86400"],
  ["Vary", "Access-Control-Request-Headers"],
];

/** A preflight (any OPTIONS outside /dav) is answered here; every other reply gets the CORS headers. */
export const corsForClients: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (isDavPath(c.req.path)) return next();
  if (c.req.method === "OPTIONS") return new Response(null, { status: 204, headers: preflightHeaders });
  await next();
  setReplyHeaders(c, corsHeaders);
};

/**
 * Sets `headers` on the reply. A reply from the assets binding (or a fetch()) has immutable
 * headers: it is copied once (the body streams on), and the copy takes them.
 */
function setReplyHeaders(c: Context<AppEnv>, headers: readonly (readonly [string, string])[]): void {
  try {
    for (const [name, value] of headers) c.res.headers.set(name, value);
  } catch {
    c.res = new Response(c.res.body, c.res);
    for (const [name, value] of headers) c.res.headers.set(name, value);
  }
}

// Hardening headers on every reply, one table per kind of reply, set after the handler ran (on
// its own Response too). What they say:
// - API replies are JSON for clients on other origins: cross-origin readable, never framed, loading
//   nothing. Headers only old browsers read (IE's download options and XSS auditor, Flash's
//   cross-domain policies, DNS prefetch and origin clustering, which concern pages) are left off:
//   every header is work for every proxy in front, and API replies are most replies.
// - The web UI's page runs scripts, and customize_head may load anything an admin chooses (AList
//   sets no policy), so outside the API only framing is forbidden.
// - Files served by /d and /p come from anyone who can upload: in a browser they run sandboxed (no
//   script, no same-origin access), so an uploaded HTML or SVG page cannot act as this site.
const HSTS = "max-age=15552000; includeSubDomains";
const apiHeaders = [
  ["Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
  ["Cross-Origin-Resource-Policy", "cross-origin"],
  ["Referrer-Policy", "no-referrer"],
  ["Strict-Transport-Security", HSTS],
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "DENY"],
] as const;
const pageHeaders = [
  ["Content-Security-Policy", "frame-ancestors 'none'"],
  // Popups it opens keep their opener: single sign-on's hands the token back that way (D20.1).
  ["Cross-Origin-Opener-Policy", "same-origin-allow-popups"],
  ["Cross-Origin-Resource-Policy", "same-origin"],
  ["Origin-Agent-Cluster", "?1"],
  ["Referrer-Policy", "same-origin"],
  ["Strict-Transport-Security", HSTS],
  ["X-Content-Type-Options", "nosniff"],
  ["X-DNS-Prefetch-Control", "off"],
  ["X-Download-Options", "noopen"],
  ["X-Frame-Options", "DENY"],
  ["X-Permitted-Cross-Domain-Policies", "none"],
  ["X-XSS-Protection", "0"],
] as const;
const downloadHeaders = [
  ["Content-Security-Policy", "sandbox"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
  ["Cross-Origin-Resource-Policy", "cross-origin"],
  ["Referrer-Policy", "no-referrer"],
  ["Strict-Transport-Security", HSTS],
  ["X-Content-Type-Options", "nosniff"],
] as const;

// Single sign-on's routes run in the UI's popup (docs/decisions.md D20.1): they keep the opener
// (no COOP isolation, which would cut it on the way through the provider), and the callback's page
// brings its own policy, allowing its one script by hash; the refusals get the API's.
const SSO_POPUP_PATHS = new Set([
  "/api/auth/sso",
  "/api/auth/sso_callback",
  "/api/auth/sso_get_token",
  "/api/auth/get_sso_id",
]);
const ssoPopupHeaders = apiHeaders.map(([name, value]) =>
  name === "Cross-Origin-Opener-Policy" ? ([name, "unsafe-none"] as const) : ([name, value] as const),
);

export const securityHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const path = c.req.path;
  if (SSO_POPUP_PATHS.has(path)) {
    const ownPolicy = c.res.headers.get("Content-Security-Policy");
    setReplyHeaders(c, ssoPopupHeaders);
    if (ownPolicy !== null) c.res.headers.set("Content-Security-Policy", ownPolicy);
    return;
  }
  setReplyHeaders(c, isDownloadPath(path) ? downloadHeaders : isApiPath(path) ? apiHeaders : pageHeaders);
};

/**
 * One JSON line per request, keyed by the request id that is also sent back as X-Request-Id, at
 * the reply's level: `error` for failures (HTTP or envelope code 500 and up), `warn` for refusals
 * (400-499) and for the file side's expected answers that AList codes 500 (errors.ts
 * `isExpectedAnswer`: nothing there, no storage mounted), `info` for the rest. Under LOG_LEVEL
 * nothing of a line is computed when its level is off (production runs at `warn`: wrangler.toml).
 */
export const accessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = Date.now();
  // Always the server's own: an X-Request-Id a client sends is ignored, so no outsider picks the
  // ids the logs are searched by.
  const id = crypto.randomUUID();
  c.set("requestId", id);
  // A bad LOG_LEVEL (or MAX_BODY_BYTES …) fails every request with the configuration error.
  const config = readConfig(c.env ?? {});
  await next();
  c.header("X-Gatehouse-Version", GATEHOUSE_VERSION);
  // Set again on the reply: a handler's own Response (WebDAV, file bytes) does not carry the
  // headers middleware prepared before it ran.
  c.header("X-Request-Id", id);
  const worst = Math.max(c.res.status, c.get("envelopeCode") ?? 0);
  const level = worst >= 500 && !c.get("expectedFailure") ? "error" : worst >= 400 ? "warn" : "info";
  if (!logs(config, level)) return;
  const line = JSON.stringify({
    level,
    requestId: id,
    method: c.req.method,
    path: c.req.path,
    status: c.res.status,
    code: c.get("envelopeCode"),
    ms: Date.now() - started,
  });
  if (level === "error") console.error(line);
  else console.log(line);
};

/**
 * Bodies over MAX_BODY_BYTES get code 413, whether or not they declare a Content-Length. Uploads
 * (and the chunks of a chunked upload, held to their own size) are files, streamed to the storage: their limit is the platform's, not this one. The WebDAV
 * server caps its XML bodies itself (its PUT is an upload).
 */
export const limitBodySize: MiddlewareHandler<AppEnv> = (c, next) => {
  const method = c.req.method;
  if (
    method === "GET" ||
    method === "HEAD" ||
    method === "OPTIONS" ||
    c.req.path === "/api/fs/put" ||
    c.req.path === "/api/fs/form" ||
    c.req.path === "/api/fs/multipart/chunk" ||
    isDavPath(c.req.path) ||
    isS3Path(c.req.path)
  )
    return next();
  const maxSize = readConfig(c.env).maxBodyBytes;
  let limit = bodyLimits.get(maxSize);
  if (!limit) {
    limit = bodyLimit({ maxSize, onError: payloadTooLarge });
    bodyLimits.set(maxSize, limit);
  }
  return limit(c, next);
};

/** One body-limit middleware per limit (one, in practice), built once per isolate. */
const bodyLimits = new Map<number, MiddlewareHandler<AppEnv>>();
