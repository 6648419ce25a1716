// The Worker entry: HTTP requests go to the Hono app (src/app.ts), the task queue's messages and
// the cron trigger to the jobs composed in src/jobs.ts.
import { createApp } from "./app.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { useBindings } from "./drivers/bindings.ts";
import { databaseUrl, type Env } from "./env.ts";
import { runCron, runQueue } from "./jobs.ts";

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
  async queue(batch, env) {
    useBindings(env);
    await runQueue(database(env), env, batch as MessageBatch<{ id: number; ticket: number }>);
  },
  async scheduled(controller, env, ctx) {
    useBindings(env);
    await runCron(database(env), env, controller.cron, ctx);
  },
} satisfies ExportedHandler<Env>;
