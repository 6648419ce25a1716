// Routes anyone may call: what the AList web UI loads before anyone signs in. No decisions, queries
// or refusals of its own (the settings' read is settings/store.ts's), so routes.ts is the whole
// feature.
import { createRoute } from "../../http/openapi.ts";
import { ok } from "../../http/envelope.ts";
import type { Router } from "../../http/router.ts";
import { ARCHIVE_EXTENSIONS } from "../archive/rules.ts";
import { readPublicSettings } from "../settings/store.ts";
import { HTTP_TOOL } from "../tasks/offline-download.ts";

const publicSettings = createRoute({
  method: "get",
  path: "/api/public/settings",
});

// The AList web UI calls these two on every page load and renders nothing if they fail.
// Archives: what Gatehouse can open (ZIP); offline downloads have the HTTP tool (docs/decisions.md D15.7).
const archiveExtensions = createRoute({
  method: "get",
  path: "/api/public/archive_extensions",
});

const offlineDownloadTools = createRoute({
  method: "get",
  path: "/api/public/offline_download_tools",
});

export function registerPublicRoutes(app: Router) {
  app.openapi(publicSettings, async (c) => ok(c, await readPublicSettings(c.var.db)));
  app.openapi(archiveExtensions, (c) => ok(c, ARCHIVE_EXTENSIONS));
  app.openapi(offlineDownloadTools, (c) => ok(c, [HTTP_TOOL]));
}
