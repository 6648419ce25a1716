// The task lists the web UI polls (AList v3.58.0 server/handles/task.go:125, docs/decisions.md
// D6.2). Gatehouse runs no background tasks: uploads and copies finish within their request, so
// every list is empty. The operations on tasks (info, cancel, clear_done, …) are not served: there
// is never a task to name. No decisions and no queries, so routes.ts is the whole feature; its one
// text is the guest's refusal below.
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import type { MiddlewareHandler } from "hono";
import { adminOnly, isGuest, signedIn } from "../../auth/guard.ts";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { envelopeResponse, type Router } from "../../http/router.ts";

const KINDS = [
  "upload",
  "copy",
  "offline_download",
  "offline_download_transfer",
  "s3_transition",
  "decompress",
  "decompress_upload",
] as const;
const Kind = z.object({ kind: z.enum(KINDS).openapi({ description: "The task kind" }) });

/** AList's refusal of the guest on the user task lists. */
const GUEST_NO_TASKS = "You are a guest";

const notGuest: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (isGuest(c.var.caller)) throw new ApiError(403, GUEST_NO_TASKS);
  await next();
};
const userTasks = {
  middleware: [...signedIn.middleware, notGuest] as [(typeof signedIn.middleware)[0], typeof notGuest],
  security: signedIn.security,
};

function routes(prefix: "/api/task" | "/api/admin/task", access: typeof userTasks | typeof adminOnly) {
  const list = (state: "undone" | "done") =>
    createRoute({
      method: "get",
      path: `${prefix}/{kind}/${state}`,
      tags: ["tasks"],
      summary: `The ${state} tasks of a kind: always empty (no background tasks at the edge)`,
      ...access,
      request: { params: Kind },
      responses: envelopeResponse(
        z.array(z.object({ id: z.string(), name: z.string(), state: z.number().check(z.int()) })).check(z.maxLength(0)),
        "No tasks",
      ),
    });
  return [list("undone"), list("done")];
}

export function registerTaskRoutes(app: Router) {
  for (const route of [...routes("/api/task", userTasks), ...routes("/api/admin/task", adminOnly)])
    app.openapi(route, (c) => ok(c, []));
}
