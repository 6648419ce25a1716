import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { secureHeaders } from "hono/secure-headers";
import { readConfig, type AppEnv } from "../env.ts";
import { GATEHOUSE_VERSION } from "../version.ts";
import { payloadTooLarge } from "./on-error.ts";

/** Any origin; the headers AList clients send. No cookies: the token travels in a header. */
export const corsForClients = cors({
  origin: "*",
  allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
  allowHeaders: ["Authorization", "Content-Type", "Client-Id"],
  exposeHeaders: ["X-Request-Id", "X-Gatehouse-Version"],
  maxAge: 86400,
});

/**
 * Hardening headers on every reply. The API serves JSON to clients on other origins, so resources
 * are cross-origin readable, and nothing may frame it or load anything through it.
 */
export const securityHeaders = secureHeaders({
  crossOriginResourcePolicy: "cross-origin",
  xFrameOptions: "DENY",
  contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
});

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

/** Bodies over MAX_BODY_BYTES get code 413, whether or not they declare a Content-Length. */
export const limitBodySize: MiddlewareHandler<AppEnv> = (c, next) =>
  bodyLimit({ maxSize: readConfig(c.env).maxBodyBytes, onError: payloadTooLarge })(c, next);
