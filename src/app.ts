// Builds the router: global middleware, feature routes, and the error and not-found replies.
import type { Database } from "./db/client.ts";
import type { MiddlewareHandler } from "hono";
import { ConfigError, type Env } from "./env.ts";
import { KEYS_PAGE_PATH, keysPage } from "./features/access-keys/page.ts";
import { registerAccessKeyRoutes } from "./features/access-keys/routes.ts";
import { registerAppPasswordRoutes } from "./features/app-passwords/routes.ts";
import type { AppEnv } from "./http/context.ts";
import { registerAuthRoutes } from "./features/auth/routes.ts";
import { registerLdapRoutes } from "./features/ldap/routes.ts";
import { registerDavRoutes } from "./features/dav/routes.ts";
import { errorReply } from "./features/dav/server.ts";
import { registerS3Routes, registerS3VirtualHosts } from "./features/s3/routes.ts";
import { registerDriverRoutes } from "./features/drivers/routes.ts";
import { registerArchiveDownloadRoutes } from "./features/archive/download.ts";
import { registerArchiveRoutes } from "./features/archive/routes.ts";
import { registerDownloadRoutes } from "./features/fs/download.ts";
import { registerFsReadRoutes } from "./features/fs/routes.ts";
import { registerFsBatchRoutes } from "./features/fs/batch-routes.ts";
import type { FileWrites } from "./features/fs/hooks.ts";
import { registerFsManageRoutes } from "./features/fs/manage-routes.ts";
import { registerFsUploadRoutes } from "./features/fs/upload-routes.ts";
import { IndexChanges } from "./features/search/changes.ts";
import { startTransfer } from "./features/tasks/start.ts";
import { registerUploadRoutes } from "./features/uploads/routes.ts";
import { registerMeRoutes } from "./features/me/routes.ts";
import { registerMessengerRoutes } from "./features/messenger/routes.ts";
import { registerMetaRoutes } from "./features/metas/routes.ts";
import { registerPasskeyRoutes } from "./features/passkeys/routes.ts";
import { registerPublicRoutes } from "./features/public/routes.ts";
import { registerRoleRoutes } from "./features/roles/routes.ts";
import { registerSearchRoutes } from "./features/search/routes.ts";
import { registerSessionRoutes } from "./features/sessions/routes.ts";
import { registerSettingRoutes } from "./features/settings/routes.ts";
import { uiShareEntry } from "./features/shares/archive.ts";
import { registerShareBrowsing, registerShareRoutes } from "./features/shares/routes.ts";
import { registerSsoRoutes } from "./features/sso/routes.ts";
import { registerSshKeyRoutes } from "./features/sshkeys/routes.ts";
import { registerStorageRoutes } from "./features/storages/routes.ts";
import { registerOfflineDownloadRoutes } from "./features/tasks/offline-download.ts";
import { registerTaskRoutes } from "./features/tasks/routes.ts";
import { registerTorrentRoutes } from "./features/torrent/routes.ts";
import { registerTwoFactorRoutes } from "./features/two-factor/routes.ts";
import { registerUserRoutes } from "./features/users/routes.ts";
import { serveWebUi } from "./features/webui/page.ts";
import { webUiRoles } from "./features/webui/roles.ts";
import { accessLog, corsForClients, limitBodySize, securityHeaders } from "./http/middleware.ts";
import { createNotFoundHandler } from "./http/not-found.ts";
import { isApiPath, isDavPath } from "./http/paths.ts";
import { handleError } from "./http/on-error.ts";
import { createRouter } from "./http/router.ts";

/** Where the OpenAPI document is served; its header (title, version) is in scripts/openapi.ts. */
const OPENAPI_DOCUMENT_PATH = "/api/openapi.json";

export interface AppDependencies {
  /** The database for a request's bindings: Hrana/HTTP in the Worker, a Node client in unit tests. */
  database(env: Env): Database;
}

/**
 * What the features built on the file side do with its writes (features/fs/hooks.ts): the search
 * index notes each change, and a copy or move between storages becomes a background task.
 */
const fileWrites: FileWrites = {
  log: (db, state) => new IndexChanges(db, state),
  transfer: (request, transfer) =>
    startTransfer(request, transfer, new IndexChanges(request.db, request.state).forTask()),
};

export function createApp(dependencies: AppDependencies) {
  const app = createRouter();

  const useDatabase: MiddlewareHandler<AppEnv> = async (c, next) => {
    c.set("db", dependencies.database(c.env));
    await next();
  };
  app.use("*", accessLog, securityHeaders, corsForClients);
  registerS3VirtualHosts(app, useDatabase);
  app.use("*", limitBodySize);

  // Plain text, outside the envelope and before any database work: a liveness probe. Any method
  // answers, as in AList; the document shows the GET clients use.
  app.all("/ping", (c) => c.text("pong"));
  app.openAPIRegistry.registerPath({ method: "get", path: "/ping" });

  app.use("/api/*", useDatabase);
  app.use("/d/*", useDatabase);
  app.use("/p/*", useDatabase);
  for (const kind of ["ae", "ad", "ap"]) app.use(`/${kind}/*`, useDatabase);
  app.use("/sd/*", useDatabase);
  app.use("/sad/*", useDatabase);
  app.use("/dav/*", useDatabase);
  app.use("/s3/*", useDatabase);
  // The served web UI reads roles as OpenList's numbers; every other client, as AList's ids (D17).
  app.use("/api/*", webUiRoles);
  registerPublicRoutes(app);
  registerAuthRoutes(app);
  registerLdapRoutes(app);
  registerTwoFactorRoutes(app);
  registerPasskeyRoutes(app);
  registerSsoRoutes(app);
  registerMeRoutes(app);
  registerAppPasswordRoutes(app);
  registerAccessKeyRoutes(app);
  registerSessionRoutes(app);
  registerSettingRoutes(app);
  registerMessengerRoutes(app);
  registerSshKeyRoutes(app);
  registerUserRoutes(app);
  registerRoleRoutes(app);
  registerDriverRoutes(app);
  registerStorageRoutes(app);
  registerMetaRoutes(app);
  // A path under /@s/ is a share's: answered before the file side's guards (shares/routes.ts).
  registerShareBrowsing(app);
  registerFsReadRoutes(app);
  registerFsManageRoutes(app, fileWrites);
  registerFsUploadRoutes(app, fileWrites);
  registerFsBatchRoutes(app, fileWrites);
  registerSearchRoutes(app);
  registerTorrentRoutes(app);
  registerUploadRoutes(app);
  registerArchiveRoutes(app);
  registerTaskRoutes(app);
  registerOfflineDownloadRoutes(app);
  registerDownloadRoutes(app);
  registerArchiveDownloadRoutes(app, uiShareEntry);
  registerShareRoutes(app);
  registerDavRoutes(app);
  registerS3Routes(app);

  // Both travel in one header; the guard tells them apart by shape (a JWT or not).
  app.openAPIRegistry.registerComponent("securitySchemes", "token", {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description:
      "A login token from /api/auth/login, raw as AList clients send it, or `Bearer <token>`. Ends at logout, eviction, a password change or expiry.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "permanentToken", {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description:
      "The permanent token (private setting `token`): acts as the admin, until reset_token or set_token replaces it.",
  });
  // Built from the definitions above by scripts/openapi.ts (`npm run openapi`; a unit test fails
  // when it is stale) and published into the assets folder: a static file, so its 75 KiB are
  // neither in the bundle nor parsed at every cold start.
  app.get(OPENAPI_DOCUMENT_PATH, async (c) => {
    const file = await c.env.ASSETS?.fetch(new Request(new URL(OPENAPI_DOCUMENT_PATH, c.req.url)));
    if (!file?.ok) {
      await file?.body?.cancel();
      throw new ConfigError("the OpenAPI document is not in the assets folder (npm run openapi puts it there)");
    }
    return new Response(file.body, { headers: { "Content-Type": "application/json" } });
  });

  // A WebDAV client reads the HTTP status: a failure at /dav, in a middleware before the server
  // too, is WebDAV's reply, never the envelope with HTTP 200 (docs/decisions.md D25.5).
  app.onError((error, c) => (isDavPath(c.req.path) ? errorReply(error, c.get("requestId")) : handleError(error, c)));
  // Outside the API, what no route answers is the web UI's page (AList's NoRoute); in the API, or
  // on a deploy without the UI, an envelope.
  const apiNotFound = createNotFoundHandler(() => app.routes);
  // The access keys page (docs/decisions.md D16.7) is no route: it needs no database and no guard.
  app.notFound(
    async (c) =>
      (c.req.path === KEYS_PAGE_PATH ? await keysPage(c) : undefined) ??
      (isApiPath(c.req.path) ? undefined : await serveWebUi(c, () => dependencies.database(c.env))) ??
      apiNotFound(c),
  );
  return app;
}
