// /s3 and everything below it, every method: the S3-compatible endpoint (server.ts). It speaks
// S3's XML and statuses, not the JSON envelope, so it is documented in docs/s3.md rather than in
// the OpenAPI document, as the WebDAV server is. With S3_VIRTUAL_HOST set, `<bucket>.<that host>`
// answers virtual-hosted-style requests too, at any path (docs/decisions.md D22.17).
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/context.ts";
import type { Router } from "../../http/router.ts";
import { virtualBucketOf } from "./rules.ts";
import { handleS3 } from "./server.ts";

export function registerS3Routes(app: Router) {
  // `/s3/*` also matches `/s3` itself.
  app.all("/s3/*", (c) => handleS3(c));
}

/**
 * Virtual-hosted-style S3: a request to `<bucket>.<S3_VIRTUAL_HOST>` is the endpoint's whatever its
 * path, so this runs before every route (and before the body limit: its PutObject is an upload).
 */
export function registerS3VirtualHosts(app: Router, useDatabase: MiddlewareHandler<AppEnv>) {
  app.use("*", async (c, next) => {
    // Unset (the default), no host is a bucket's: the URL is not parsed on every request.
    const base = c.env?.S3_VIRTUAL_HOST;
    const bucket = base ? virtualBucketOf(new URL(c.req.url).hostname, base) : null;
    if (bucket === null) return next();
    await useDatabase(c, async () => {
      c.res = await handleS3(c, bucket);
    });
  });
}
