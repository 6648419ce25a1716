// The Worker entry: HTTP requests go to the Hono app, the task queue's messages to the task runner,
// the cron trigger to the cleanup sweep, the sweeps of background tasks and abandoned chunked
// uploads, and the search index build's next steps (docs/decisions.md D11.2).
import { createApp } from "./app.ts";
import { cleanUp } from "./cron/cleanup.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { useBindings } from "./drivers/bindings.ts";
import { runBuild } from "./features/search/build.ts";
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

/** How long one cron run spends on index build steps (a cron invocation may run for minutes). */
const CRON_BUILD_BUDGET_MS = 60_000;

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    useBindings(env);
    return app.fetch(request, env, ctx);
  },
  async queue(batch, env) {
    useBindings(env);
    await consumeBatch(database(env), env, batch as MessageBatch<{ id: number; ticket: number }>);
  },
  async scheduled(controller, env, ctx) {
    useBindings(env);
    const db = database(env);
    const sweep = Promise.all([cleanUp(db), sweepUploads(db), sweepTasks(db, env)]).then(([removed, uploads, tasks]) =>
      console.log(JSON.stringify({ cron: controller.cron, removed, uploads, tasks })),
    );
    // A build or update still running continues here (nothing to do when its queue is empty).
    const build = runBuild(db, CRON_BUILD_BUDGET_MS).then((report) => {
      if (report.steps > 0) console.log(JSON.stringify({ cron: controller.cron, index: report }));
    });
    ctx.waitUntil(build);
    ctx.waitUntil(sweep);
    await Promise.all([sweep, build]);
  },
} satisfies ExportedHandler<Env>;
