// The documentation of the tasks routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

/** AList's TaskInfo (rules.ts `taskInfo`), as the task routes and offline downloads answer it. */
const TaskInfoSchema = z.object({
  id: z.string(),
  name: z.string(),
  creator: z.string(),
  creator_role: z.array(z.number()),
  state: z.number().check(z.int()).openapi({
    description:
      "0 pending, 1 running, 2 succeeded, 3 canceling, 4 canceled, 7 failed, 8 waiting retry (tache's numbers)",
  }),
  status: z.string(),
  progress: z.number().openapi({ description: "0 to 100" }),
  start_time: z.nullable(z.string()),
  end_time: z.nullable(z.string()),
  total_bytes: z.number(),
  error: z.string(),
});

type Prefix = "/api/task" | "/api/admin/task";

/** The task routes' documentation under one prefix (routes.ts builds the same routes under both). */
function taskDocs(prefix: Prefix): RouteDocs {
  const tags = prefix === "/api/task" ? ["tasks"] : ["tasks", "admin"];
  const list = (state: "undone" | "done") => ({
    tags,
    summary: `The ${state} tasks of a kind${prefix === "/api/task" ? " (the caller's own; an admin's: everyone's)" : ""}`,
    responses: envelopeResponse(z.array(TaskInfoSchema), "The tasks, oldest first"),
  });
  const byId = (summary: string, data: z.ZodMiniType) => ({
    tags,
    summary,
    responses: envelopeResponse(data, "Done; 404 `task not found` for an unknown id or someone else's"),
  });
  const some = (op: "cancel" | "delete" | "retry") => ({
    tags,
    summary: `${op} several tasks: the body is a JSON array of task ids (else 400 \`invalid request format\`)`,
    responses: envelopeResponse(
      z.record(z.string(), z.string()),
      op === "retry"
        ? '`{}`, or `{<id>: "task not found"}` for each id not found and `{<id>: "<why>"}` for each task its creator may no longer run'
        : '`{}`, or `{<id>: "task not found"}` for each id not found',
    ),
  });
  const all = (summary: string) => ({ tags, summary, responses: envelopeResponse(z.null(), "Done") });
  return {
    [`get ${prefix}/{kind}/undone`]: list("undone"),
    [`get ${prefix}/{kind}/done`]: list("done"),
    [`post ${prefix}/{kind}/info`]: byId("One task", TaskInfoSchema),
    [`post ${prefix}/{kind}/cancel`]: byId("Cancel a task: it stops between parts and ends canceled", z.null()),
    [`post ${prefix}/{kind}/delete`]: byId("Delete a task whatever its state", z.null()),
    [`post ${prefix}/{kind}/retry`]: byId(
      "Run a task again: what failed or was canceled runs anew; 403 when its creator may no longer do what it does",
      z.null(),
    ),
    [`post ${prefix}/{kind}/cancel_some`]: some("cancel"),
    [`post ${prefix}/{kind}/delete_some`]: some("delete"),
    [`post ${prefix}/{kind}/retry_some`]: some("retry"),
    [`post ${prefix}/{kind}/clear_done`]: all("Delete the succeeded, canceled and failed tasks"),
    [`post ${prefix}/{kind}/clear_succeeded`]: all("Delete the succeeded tasks"),
    [`post ${prefix}/{kind}/retry_failed`]: all(
      "Retry the failed tasks; those whose creator may no longer run them stay failed, and the reply is a 403 naming why",
    ),
  };
}

export const routeDocs: RouteDocs = {
  ...taskDocs("/api/task"),
  ...taskDocs("/api/admin/task"),
  "post /api/fs/add_offline_download": {
    tags: ["fs"],
    summary: "Download URLs into a folder in the background, one task each (tool SimpleHttp)",
    responses: envelopeResponse(z.object({ tasks: z.array(TaskInfoSchema) }), "The tasks started"),
  },
};
