// Offline download with the HTTP tool (AList v3.58.0 server/handles/offline_download.go:248-296,
// OpenList's checks: server/handles/offline_download.go:532-564): every check in the request, then
// one task per URL that streams it into the storage (docs/decisions.md D15.7). Nothing is fetched
// before the caller passed them all.
import * as z from "zod/mini";
import { planned, reading, signedIn } from "../../auth/guard.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError, FileError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import { fromJson } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { MountTree } from "../fs/mounts.ts";
import { lookup, need } from "../fs/operations.ts";
import { hasRelativeSegment, joinBasePath } from "../fs/path.ts";
import { fullPathOf, Permission, requireWritable, viewerOf } from "../fs/rules.ts";
import { statePlan } from "../fs/store.ts";
import { IndexChanges } from "../search/changes.ts";
import { NOT_INTO_ALIAS, privateAddress, toolNotFound, URL_NOT_HTTP } from "./messages.ts";
import { downloadTargetAllowed, downloadTaskName, privateHostsOptIn, type TaskInfo } from "./rules.ts";
import { startTask } from "./start.ts";

/** The one tool a Worker can run: a fetch streamed into the storage. */
export const HTTP_TOOL = "SimpleHttp";

const AddBody = z.object({
  urls: z.array(z.string().check(z.maxLength(8192))).check(z.maxLength(1000)),
  path: z.string().check(z.maxLength(4096)),
  tool: z.string().check(z.maxLength(64)),
  delete_policy: z
    ._default(z.string().check(z.maxLength(64)), "")
    .openapi({ description: "Accepted as the web UI sends it; the file is streamed, no temporary copy is kept" }),
});

/** The target folder's state, read in the guard's batch. */
const addState = fromJson(AddBody, (db, b) =>
  statePlan(db, { paths: hasRelativeSegment(b.path) ? [] : [joinBasePath("/", b.path) ?? "/"], folders: [] }),
);

const addOfflineDownload = createRoute({
  method: "post",
  path: "/api/fs/add_offline_download",
  ...reading(signedIn, addState),
  request: { body: jsonBody(AddBody) },
});

/**
 * The URLs to fetch: blank lines skipped, only http and https, and no loopback, private or
 * link-local host unless the deploy opts in (docs/decisions.md D15.9; the task checks every
 * redirect again).
 */
function downloadUrls(raw: string[], optInRaw?: string): string[] {
  const optIn = privateHostsOptIn(optInRaw);
  const urls = raw.map((url) => url.trim()).filter((url) => url !== "");
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ApiError(400, URL_NOT_HTTP);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new ApiError(400, URL_NOT_HTTP);
    if (!downloadTargetAllowed(parsed, optIn)) throw new ApiError(400, privateAddress(parsed.hostname));
  }
  return urls;
}

export function registerOfflineDownloadRoutes(app: Router) {
  app.openapi(addOfflineDownload, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, addState);
    const viewer = viewerOf(c.var.caller);
    const path = fullPathOf(viewer, body.path);
    requireWritable(viewer, state, path, path, Permission.OFFLINE_DOWNLOAD, "");
    requireWritable(viewer, state, path, path, Permission.WRITE, "", true);
    if (body.tool !== HTTP_TOOL) throw new ApiError(500, toolNotFound(body.tool));
    const urls = downloadUrls(body.urls, c.env.OFFLINE_DOWNLOAD_PRIVATE_HOSTS);
    const tree = new MountTree(state.tree, c.var.db, c.req.raw.signal);
    const target = await tree.mount(path);
    need(target, "put");
    if (target.storage.driver === "Alias") throw new FileError("refused", NOT_INTO_ALIAS, true);
    const existing = await lookup(tree, path);
    if (existing && !existing.isDir) throw new FileError("not_a_folder", "not a folder", true);
    const tasks: TaskInfo[] = [];
    const index = new IndexChanges(c.var.db, state).forTask();
    for (const url of urls)
      tasks.push(
        await startTask(c.var.db, c.env, c.var.caller, "offline_download", downloadTaskName(url, path), {
          unit: "fetch",
          url,
          toDir: path,
          index,
        }),
      );
    return ok(c, { tasks });
  });
}
