// What the Worker runs outside requests, composed from the features as src/app.ts composes the
// routes: a queue batch goes to the task runner; the cron trigger runs the cleanup sweep, the
// sweeps of background tasks and abandoned chunked uploads, and the search index build's next
// steps (docs/decisions.md D11.2).
import { cleanUp } from "./cron/cleanup.ts";
import type { Database } from "./db/client.ts";
import type { Env } from "./env.ts";
import { runBuild } from "./features/search/build.ts";
import { consumeBatch } from "./features/tasks/runner.ts";
import { sweepTasks } from "./features/tasks/sweep.ts";
import { sweepUploads } from "./features/uploads/sweep.ts";

/** How long one cron run spends on index build steps (a cron invocation may run for minutes). */
const CRON_BUILD_BUDGET_MS = 60_000;

/** A batch of the task queue's messages: one unit each. */
export function runQueue(db: Database, env: Env, batch: MessageBatch<{ id: number; ticket: number }>) {
  return consumeBatch(db, env, batch);
}

/** The cron trigger's work; each part is also handed to `waitUntil`, so none is cut short. */
export async function runCron(db: Database, env: Env, cron: string, ctx: ExecutionContext) {
  const sweep = Promise.all([cleanUp(db), sweepUploads(db), sweepTasks(db, env)]).then(([removed, uploads, tasks]) =>
    console.log(JSON.stringify({ cron, removed, uploads, tasks })),
  );
  // A build or update still running continues here (nothing to do when its queue is empty).
  const build = runBuild(db, CRON_BUILD_BUDGET_MS).then((report) => {
    if (report.steps > 0) console.log(JSON.stringify({ cron, index: report }));
  });
  ctx.waitUntil(build);
  ctx.waitUntil(sweep);
  await Promise.all([sweep, build]);
}
