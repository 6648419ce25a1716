// The task API (AList v3.58.0 server/handles/task.go:125-216, same in OpenList): the lists the web
// UI polls and the operations on tasks, for every kind, under /api/task (any account but the
// guest: its own tasks, an admin's: everyone's) and /api/admin/task (admins). The rows of `tasks`
// are all it reads (docs/decisions.md D15); the work behind them runs from the task queue.
import type { SQL } from "drizzle-orm";
import type { Context, MiddlewareHandler } from "hono";
import * as z from "zod/mini";
import { adminOnly, isAdmin, isGuest, planned, reading, signedIn } from "../../auth/guard.ts";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import type { Router } from "../../http/router.ts";
import { GUEST_NO_TASKS, INVALID_REQUEST_FORMAT, TASK_NOT_FOUND } from "./messages.ts";
import { firstUnitOf } from "./payload.ts";
import { sendUnits } from "./queue.ts";
import { creatorRefusal, DONE_STATES, TASK_KINDS, TaskState, taskInfo, type TaskKind } from "./rules.ts";
import {
  cancelTasks,
  clearTasks,
  deleteTasks,
  findTask,
  listPlan,
  retryCandidates,
  retryTasks,
  visibleTo,
} from "./store.ts";

const Kind = z.object({ kind: z.enum(TASK_KINDS).openapi({ description: "The task kind" }) });
const Tid = z.object({ tid: z.optional(z.string().check(z.maxLength(64))).openapi({ description: "The task id" }) });

const notGuest: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (isGuest(c.var.caller)) throw new ApiError(403, GUEST_NO_TASKS);
  await next();
};
const userTasks = {
  middleware: [...signedIn.middleware, notGuest] as [(typeof signedIn.middleware)[0], typeof notGuest],
  security: signedIn.security,
};

type Prefix = "/api/task" | "/api/admin/task";
const accessOf = (prefix: Prefix) => (prefix === "/api/task" ? userTasks : adminOnly);

const kindOf = (c: Context<AppEnv>) => c.req.param("kind") as TaskKind;
const visible = (c: Context<AppEnv>) => visibleTo(c.var.caller.user.id, isAdmin(c.var.caller));

/** The list plans, one per state group: read in the guard's batch. */
const listPlans = {
  undone: (c: Context<AppEnv>, callerId: SQL, callerIsAdmin: SQL) =>
    (TASK_KINDS as readonly string[]).includes(c.req.param("kind") ?? "")
      ? listPlan(c.var.db, kindOf(c), false, visibleTo(callerId, callerIsAdmin))
      : null,
  done: (c: Context<AppEnv>, callerId: SQL, callerIsAdmin: SQL) =>
    (TASK_KINDS as readonly string[]).includes(c.req.param("kind") ?? "")
      ? listPlan(c.var.db, kindOf(c), true, visibleTo(callerId, callerIsAdmin))
      : null,
};

/** The ids of a batch operation's body: an array of strings, else AList's 400. */
async function idsOf(c: Context<AppEnv>): Promise<string[]> {
  const body = await c.req.json().catch(() => undefined);
  if (!Array.isArray(body) || !body.every((id) => typeof id === "string"))
    throw new ApiError(400, INVALID_REQUEST_FORMAT);
  return body;
}

/** The reply of a batch operation: `{id: "task not found"}` for each id not found (or not the caller's). */
const notFoundOf = (ids: string[], found: string[]) =>
  Object.fromEntries(ids.filter((id) => !found.includes(id)).map((id) => [id, TASK_NOT_FOUND]));

type Operation = (c: Context<AppEnv>, ids: string[]) => Promise<string[]>;

const operations: Record<"cancel" | "delete", Operation> = {
  cancel: (c, ids) => cancelTasks(c.var.db, kindOf(c), ids, visible(c)),
  delete: (c, ids) => deleteTasks(c.var.db, kindOf(c), ids, visible(c)),
};

/**
 * Retries the tasks `ids` names (null: the failed ones) that their creators may still run as they
 * stand now (docs/decisions.md D15.10). Answers the ids found and why each held back was refused.
 */
async function retry(c: Context<AppEnv>, ids: string[] | null) {
  const candidates = await retryCandidates(c.var.db, kindOf(c), ids, visible(c));
  const refused = new Map<string, string>();
  for (const { task, creator } of candidates) {
    const refusal = creatorRefusal(task, creator);
    if (refusal) refused.set(task.id, refusal);
  }
  const allowed = candidates.map(({ task }) => task.id).filter((id) => !refused.has(id));
  if (allowed.length) {
    const { units } = await retryTasks(c.var.db, kindOf(c), allowed, visible(c), firstUnitOf);
    await sendUnits(c.env, units);
  }
  return { found: candidates.map(({ task }) => task.id), refused };
}

function routes(prefix: Prefix) {
  const access = accessOf(prefix);
  const list = (state: "undone" | "done") =>
    createRoute({
      method: "get",
      path: `${prefix}/{kind}/${state}`,
      ...reading(access, listPlans[state]),
      request: { params: Kind },
    });
  const byId = (op: "info" | "cancel" | "delete" | "retry") =>
    createRoute({
      method: "post",
      path: `${prefix}/{kind}/${op}`,
      ...access,
      request: { params: Kind, query: Tid },
    });
  const some = (op: "cancel" | "delete" | "retry") =>
    createRoute({
      method: "post",
      path: `${prefix}/{kind}/${op}_some`,
      ...access,
      request: { params: Kind },
    });
  const all = (op: "clear_done" | "clear_succeeded" | "retry_failed") =>
    createRoute({
      method: "post",
      path: `${prefix}/{kind}/${op}`,
      ...access,
      request: { params: Kind },
    });
  return {
    undone: list("undone"),
    done: list("done"),
    info: byId("info"),
    cancel: byId("cancel"),
    delete: byId("delete"),
    retry: byId("retry"),
    some: (["cancel", "delete", "retry"] as const).map((op) => [op, some(op)] as const),
    clearDone: all("clear_done"),
    clearSucceeded: all("clear_succeeded"),
    retryFailed: all("retry_failed"),
  };
}

export function registerTaskRoutes(app: Router) {
  for (const prefix of ["/api/task", "/api/admin/task"] as const) {
    const route = routes(prefix);
    app.openapi(route.undone, async (c) => ok(c, await planned(c, listPlans.undone)));
    app.openapi(route.done, async (c) => ok(c, await planned(c, listPlans.done)));
    app.openapi(route.info, async (c) => {
      const task = await findTask(c.var.db, kindOf(c), c.req.valid("query").tid ?? "", visible(c));
      if (!task) throw new ApiError(404, TASK_NOT_FOUND);
      return ok(c, taskInfo(task));
    });
    for (const op of ["cancel", "delete"] as const)
      app.openapi(route[op], async (c) => {
        const tid = c.req.valid("query").tid ?? "";
        if ((await operations[op](c, [tid])).length === 0) throw new ApiError(404, TASK_NOT_FOUND);
        return ok(c, null);
      });
    app.openapi(route.retry, async (c) => {
      const { found, refused } = await retry(c, [c.req.valid("query").tid ?? ""]);
      if (found.length === 0) throw new ApiError(404, TASK_NOT_FOUND);
      const refusal = refused.values().next().value;
      if (refusal !== undefined) throw new ApiError(403, refusal);
      return ok(c, null);
    });
    for (const [op, some] of route.some)
      app.openapi(some, async (c) => {
        const ids = await idsOf(c);
        if (op !== "retry") return ok(c, notFoundOf(ids, ids.length ? await operations[op](c, ids) : []));
        // A task its creator may no longer run answers why, as an unknown one answers `task not found`.
        const { found, refused } = ids.length ? await retry(c, ids) : { found: [], refused: new Map<string, string>() };
        return ok(c, { ...notFoundOf(ids, found), ...Object.fromEntries(refused) });
      });
    app.openapi(route.clearDone, async (c) => {
      await clearTasks(c.var.db, kindOf(c), DONE_STATES, visible(c));
      return ok(c, null);
    });
    app.openapi(route.clearSucceeded, async (c) => {
      await clearTasks(c.var.db, kindOf(c), [TaskState.SUCCEEDED], visible(c));
      return ok(c, null);
    });
    app.openapi(route.retryFailed, async (c) => {
      // The others run again; a task its creator may no longer run stays failed, and the reply says why.
      const refusal = (await retry(c, null)).refused.values().next().value;
      if (refusal !== undefined) throw new ApiError(403, refusal);
      return ok(c, null);
    });
  }
}
