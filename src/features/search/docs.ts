// The documentation of the search routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const SearchItem = z.object({
  parent: z
    .string()
    .openapi({ description: "The folder holding it, in the caller's view (relative to its base path)" }),
  name: z.string(),
  is_dir: z.boolean(),
  size: z.number().check(z.int()),
  type: z.number().check(z.int()).openapi({ description: "0 unknown, 1 folder, 2 video, 3 audio, 4 text, 5 image" }),
});
const ScanProgress = z.object({
  obj_count: z.number().check(z.int()).openapi({ description: "Entries listed by the last or running scan" }),
  is_done: z.boolean().openapi({ description: "No scan runs (also when none ever ran)" }),
});

/** The index routes' documentation (indexRoute in routes.ts). */
function indexDocs(name: string, summary: string) {
  return {
    tags: ["index"],
    summary,
    responses: envelopeResponse(
      name === "progress"
        ? z.object({
            obj_count: z.number().check(z.int()),
            is_done: z.boolean(),
            last_done_time: z.nullable(z.string()),
            error: z.string(),
          })
        : z.null(),
      "Done",
    ),
  };
}

export const routeDocs: RouteDocs = {
  "post /api/admin/index/build": indexDocs(
    "build",
    "Empty the index and walk every storage to max_index_depth in the background (resumable steps); the body is ignored",
  ),
  "post /api/admin/index/stop": indexDocs("stop", "Stop the running build or update"),
  "post /api/admin/index/clear": indexDocs("clear", "Empty the index"),
  "get /api/admin/index/progress": indexDocs("progress", "The build's progress (AList's object)"),
  "post /api/fs/search": {
    tags: ["fs"],
    summary:
      "Names containing every keyword below a folder, from the index; only what the caller may see, counted exactly",
    responses: envelopeResponse(
      z.object({ content: z.array(SearchItem), total: z.number().check(z.int()) }),
      "One page of the matches and how many there are",
    ),
  },
  "post /api/admin/index/update": {
    tags: ["index"],
    summary: "Re-read these paths from their storages into the index, in the background",
    responses: envelopeResponse(z.null(), "Started"),
  },
  "post /api/admin/scan/start": {
    tags: ["index"],
    summary: "Re-list a folder's whole tree from its storages into the index now, in the background",
    description:
      "OpenList's manual scan, on the index build's steps: the index below `path` is emptied and listed again without a depth limit. `limit` (OpenList's lists per second) is accepted and not applied: steps are already bounded.",
    responses: envelopeResponse(z.null(), "Started"),
  },
  "post /api/admin/scan/stop": {
    tags: ["index"],
    summary: "Stop the running manual scan (what it listed stays in the index)",
    responses: envelopeResponse(z.null(), "Stopped"),
  },
  "get /api/admin/scan/progress": {
    tags: ["index"],
    summary: "The manual scan's progress; answered whether or not a scan ever ran, with or without a search engine",
    responses: envelopeResponse(ScanProgress, "Progress"),
  },
};
