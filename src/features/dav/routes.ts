// /dav and everything below it, every method: the WebDAV server (server.ts). It speaks HTTP
// statuses and XML, not the JSON envelope, so it is documented in docs/webdav.md rather than in
// the OpenAPI document.
import type { Router } from "../../http/router.ts";
import { handleDav } from "./server.ts";

export function registerDavRoutes(app: Router) {
  // `/dav/*` also matches `/dav` itself.
  app.all("/dav/*", handleDav);
}
