// /s3 and everything below it, every method: the S3-compatible endpoint (server.ts). It speaks
// S3's XML and statuses, not the JSON envelope, so it is documented in docs/s3.md rather than in
// the OpenAPI document, as the WebDAV server is.
import type { Router } from "../../http/router.ts";
import { handleS3 } from "./server.ts";

export function registerS3Routes(app: Router) {
  // `/s3/*` also matches `/s3` itself.
  app.all("/s3/*", handleS3);
}
