// The Worker entry: HTTP requests go to the Hono app, the cron trigger to the cleanup sweep.
import { createApp } from "./app.ts";
import { cleanUp } from "./cron/cleanup.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { useBindings } from "./drivers/bindings.ts";
import { databaseUrl, type Env } from "./env.ts";

// One client per isolate and database: it is stateless over HTTP, so reuse only saves setup.
let cached: { key: string; db: Database } | undefined;
function database(env: Env): Database {
  const { url, authToken } = databaseUrl(env);
  const key = `${url}\n${authToken ?? ""}`;
  if (cached?.key !== key) cached = { key, db: openDatabase(url, authToken) };
  return cached.db;
}

const app = createApp({ database });

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    useBindings(env);
    return app.fetch(request, env, ctx);
  },
  async scheduled(controller, env, ctx) {
    useBindings(env);
    const sweep = cleanUp(database(env)).then((report) =>
      console.log(JSON.stringify({ cron: controller.cron, removed: report })),
    );
    ctx.waitUntil(sweep);
    await sweep;
  },
} satisfies ExportedHandler<Env>;
