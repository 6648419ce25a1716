import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { secureHeaders } from "hono/secure-headers";
import { readConfig } from "../env.ts";
import type { AppEnv } from "./context.ts";
import { GATEHOUSE_VERSION } from "../version.ts";
import { payloadTooLarge } from "./on-error.ts";
import { isApiPath, isDavPath, isDownloadPath } from "./paths.ts";

/**
 * Any origin; the headers AList clients send. No cookies: the token travels in a header. Not on
 * the WebDAV server, whose OPTIONS is its own (DAV: 1, 2) and whose clients are not browsers.
 */
const corsForBrowsers = cors({
  origin: "*",
  allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
  allowHeaders: ["Authorization", "Content-Type", "Client-Id"],
  exposeHeaders: ["X-Request-Id", "X-Gatehouse-Version"],
  maxAge: 86400,
});
export const corsForClients: MiddlewareHandler<AppEnv> = (c, next) => (isDavPath(c.req.path) ? next() : corsForBrowsers(c, next));

/**
 * Hardening headers on every reply. The API serves JSON to clients on other origins, so resources
 * are cross-origin readable, and nothing may frame it or load anything through it.
 */
const apiSecurityHeaders = secureHeaders({
  crossOriginResourcePolicy: "cross-origin",
  xFrameOptions: "DENY",
  contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
});

/**
 * The web UI's page runs scripts, and customize_head may load anything an admin chooses (AList
 * sets no policy), so outside the API only framing is forbidden.
 */
const pageSecurityHeaders = secureHeaders({
  xFrameOptions: "DENY",
  contentSecurityPolicy: { frameAncestors: ["'none'"] },
  referrerPolicy: "same-origin",
});

/**
 * Files served by /d and /p come from anyone who can upload: in a browser they run sandboxed (no
 * script, no same-origin access), so an uploaded HTML or SVG page cannot act as this site.
 */
const downloadSecurityHeaders = secureHeaders({
  crossOriginResourcePolicy: "cross-origin",
  xFrameOptions: false,
  contentSecurityPolicy: { sandbox: [] },
});

export const securityHeaders: MiddlewareHandler<AppEnv> = (c, next) =>
  (isDownloadPath(c.req.path) ? downloadSecurityHeaders : isApiPath(c.req.path) ? apiSecurityHeaders : pageSecurityHeaders)(c, next);

/** One JSON line per request, keyed by the request id that is also sent back as X-Request-Id. */
export const accessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = Date.now();
  await next();
  c.header("X-Gatehouse-Version", GATEHOUSE_VERSION);
  console.log(
    JSON.stringify({
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      code: c.get("envelopeCode"),
      ms: Date.now() - started,
    }),
  );
};

/**
 * Bodies over MAX_BODY_BYTES get code 413, whether or not they declare a Content-Length. Uploads
 * are files, streamed to the storage: their limit is the platform's, not this one. The WebDAV
 * server caps its XML bodies itself (its PUT is an upload).
 */
export const limitBodySize: MiddlewareHandler<AppEnv> = (c, next) =>
  c.req.path === "/api/fs/put" || c.req.path === "/api/fs/form" || isDavPath(c.req.path) ? next() : bodyLimit({ maxSize: readConfig(c.env).maxBodyBytes, onError: payloadTooLarge })(c, next);
