// The Worker entry: HTTP requests go to the Hono app, the task queue's messages to the task runner,
// the cron trigger to the cleanup sweep and the sweep of background tasks.
import { createApp } from "./app.ts";
import { cleanUp } from "./cron/cleanup.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { databaseUrl, type Env } from "./env.ts";
import { consumeBatch } from "./features/tasks/runner.ts";
import { sweepTasks } from "./features/tasks/sweep.ts";
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
  async queue(batch, env) {
    await consumeBatch(database(env), env, batch as MessageBatch<{ id: number; ticket: number }>);
  },
  async scheduled(controller, env, ctx) {
    const db = database(env);
    const sweep = Promise.all([cleanUp(db), sweepUploads(db), sweepTasks(db, env)]).then(([removed, uploads, tasks]) =>
      console.log(JSON.stringify({ cron: controller.cron, removed, uploads, tasks })),
    );
    ctx.waitUntil(sweep);
    await sweep;
  },
} satisfies ExportedHandler<Env>;
