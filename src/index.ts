// The Worker entry: HTTP requests go to the Hono app, the cron trigger to the cleanup sweeps.
import { createApp } from "./app.ts";
import { cleanUp } from "./cron/cleanup.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { databaseUrl, type Env } from "./env.ts";
import { sweepUploads } from "./features/uploads/sweep.ts";

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
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    const db = database(env);
    const sweep = Promise.all([cleanUp(db), sweepUploads(db)]).then(([report, uploads]) =>
      console.log(JSON.stringify({ cron: controller.cron, removed: report, uploads })),
    );
    ctx.waitUntil(sweep);
    await sweep;
  },
} satisfies ExportedHandler<Env>;
