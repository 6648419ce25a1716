// Search (AList v3.58.0 server/handles/search.go), the index admin routes (server/handles/index.go)
// and OpenList's manual scan (server/handles/scan.go), on their wire, with the fixes of
// docs/decisions.md D11: what a caller may not see is left out in the query, so `total` and the
// pages are exact; the build's and the scan's state is in the database (D18.1).
import * as z from "zod/mini";
import type { Context } from "hono";
import { adminOnly, planned, reading, type RoutePlan, signedIn } from "../../auth/guard.ts";
import { runBatch } from "../../db/plan.ts";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { plan } from "../../db/plan.ts";
import { baseName, parentOf } from "../fs/path.ts";
import { fullPathOf, requireAccess, viewerOf } from "../fs/rules.ts";
import { stateWithoutGuess } from "../fs/store.ts";
import { FileType, typeByName } from "../fs/wire.ts";
import { runBuild } from "./build.ts";
import {
  INDEX_NOT_RUNNING,
  INDEX_RUNNING,
  KEYWORDS_NOT_TEXT,
  SCAN_NOT_RUNNING,
  SCAN_RUNNING,
  SEARCH_UNAVAILABLE,
} from "./messages.ts";
import { ENGINE, isKeywordText, keywordsOf, progressOf, scanProgressOf, viewParent, visibilityOf } from "./rules.ts";
import { clearIndex, indexStateReads, searchPage, startBuild, startScan, startUpdate, stopBuild } from "./store.ts";

/** How long a kicked build runs in the background of the request that started it. */
const KICK_BUDGET_MS = 20_000;
/** How long a progress poll moves a running build on. */
const POLL_BUDGET_MS = 5_000;

const SearchBody = z.object({
  parent: z
    ._default(z.string().check(z.maxLength(4096)), "/")
    .openapi({ description: "The folder to search below, in the caller's view" }),
  keywords: z
    ._default(z.string().check(z.maxLength(1024)), "")
    .openapi({ description: "Whitespace-separated; all must occur in the name (substring, case folded, literal)" }),
  scope: z
    ._default(z.number().check(z.int(), z.gte(0), z.lte(2)), 0)
    .openapi({ description: "0 all, 1 folders, 2 files" }),
  page: z._default(z.number().check(z.int(), z.gte(1), z.lte(1_000_000_000)), 1),
  per_page: z._default(z.number().check(z.int(), z.gte(1), z.lte(1000)), 100),
  password: z
    ._default(z.string().check(z.maxLength(1024)), "")
    .openapi({ description: "The meta password of protected folders below `parent`" }),
});

const search = createRoute({
  method: "post",
  path: "/api/fs/search",
  ...reading(signedIn, stateWithoutGuess),
  request: { body: jsonBody(SearchBody) },
});

/** The index settings and whether a build runs, read in the guard's batch. */
const indexPlan: RoutePlan<{ values: Map<string, string>; running: boolean }> = (c) =>
  plan(indexStateReads(c.var.db), ([rows, queued]) => ({
    values: new Map(rows.map((row) => [row.key, row.value])),
    running: queued.length > 0,
  }));

/** The index routes' state, after the admin check: 500 `search not available` without an engine (AList's order). */
async function indexState(c: Context<AppEnv>) {
  const state = await planned(c, indexPlan);
  if (state.values.get("search_index") !== ENGINE) throw new ApiError(500, SEARCH_UNAVAILABLE);
  const depth = Number.parseInt(state.values.get("max_index_depth") ?? "", 10);
  return { ...state, maxDepth: Number.isNaN(depth) ? 20 : depth, progress: state.values.get("index_progress") ?? "{}" };
}

const UpdateBody = z.object({
  paths: z._default(z.array(z.string().check(z.maxLength(4096))).check(z.maxLength(100)), ["/"]),
  max_depth: z
    ._default(z.number().check(z.int(), z.gte(-1), z.lte(1000)), -1)
    .openapi({ description: "Levels to list below each path; -1 without limit" }),
});

function indexRoute(method: "get" | "post", name: string) {
  return createRoute({ method, path: `/api/admin/index/${name}`, ...reading(adminOnly, indexPlan) });
}

const build = indexRoute("post", "build");
const update = createRoute({
  method: "post",
  path: "/api/admin/index/update",
  ...reading(adminOnly, indexPlan),
  request: { body: jsonBody(UpdateBody) },
});
const stop = indexRoute("post", "stop");
const clear = indexRoute("post", "clear");
const progress = indexRoute("get", "progress");

const scanStart = createRoute({
  method: "post",
  path: "/api/admin/scan/start",
  ...reading(adminOnly, indexPlan),
  request: {
    body: jsonBody(
      z.object({
        path: z._default(z.string().check(z.maxLength(4096)), "/"),
        limit: z._default(z.number().check(z.gte(0)), 0),
      }),
    ),
  },
});
const scanStop = createRoute({
  method: "post",
  path: "/api/admin/scan/stop",
  ...reading(adminOnly, indexPlan),
});
const scanProgress = createRoute({
  method: "get",
  path: "/api/admin/scan/progress",
  ...reading(adminOnly, indexPlan),
});

/** Is a manual scan running: started, and its folders still queued. */
const scanRunning = (state: { values: Map<string, string>; running: boolean }) =>
  !scanProgressOf(state.values.get("scan_progress") ?? "{}", state.running).is_done;

/** Runs build steps after the reply, so a build starts at once; the cron continues what is left. */
function kick(c: Context<AppEnv>, budgetMs = KICK_BUDGET_MS) {
  c.executionCtx.waitUntil(
    runBuild(c.var.db, budgetMs).catch((error: unknown) =>
      console.error(JSON.stringify({ index: "build step failed", error: String(error) })),
    ),
  );
}

export function registerSearchRoutes(app: Router) {
  app.openapi(search, async (c) => {
    const state = await planned(c, stateWithoutGuess);
    if (state.settings.searchIndex !== ENGINE) throw new ApiError(500, SEARCH_UNAVAILABLE);
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    let under: string;
    try {
      under = fullPathOf(viewer, body.parent);
    } catch (error) {
      // AList answers a bad parent with 400 (AList v3.58.0 server/handles/search.go:33-37).
      throw error instanceof ApiError ? new ApiError(400, error.message) : error;
    }
    if (!isKeywordText(body.keywords)) throw new ApiError(400, KEYWORDS_NOT_TEXT);
    requireAccess(viewer, state, under, body.password);
    const found = await searchPage(c.var.db, {
      seen: visibilityOf(viewer, state.metas, under, body.password),
      keywords: keywordsOf(body.keywords),
      scope: body.scope,
      page: body.page,
      perPage: body.per_page,
    });
    return ok(c, {
      content: found.nodes.map((node) => ({
        parent: viewParent(viewer.basePath, parentOf(node.path)),
        name: node.name,
        is_dir: node.isDir,
        size: node.size,
        type: node.isDir ? FileType.FOLDER : typeByName(baseName(node.path), state.settings),
      })),
      total: found.total,
    });
  });

  app.openapi(build, async (c) => {
    const state = await indexState(c);
    if (state.running) throw new ApiError(400, INDEX_RUNNING);
    await runBatch(c.var.db, startBuild(c.var.db, state.maxDepth));
    kick(c);
    return ok(c, null);
  });

  app.openapi(update, async (c) => {
    const state = await indexState(c);
    if (state.running) throw new ApiError(400, INDEX_RUNNING);
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const paths = [...new Set(body.paths.map((raw) => fullPathOf(viewer, raw)))];
    await runBatch(c.var.db, startUpdate(c.var.db, paths, body.max_depth === 0 ? 1 : body.max_depth));
    kick(c);
    return ok(c, null);
  });

  app.openapi(stop, async (c) => {
    const state = await indexState(c);
    if (!state.running) throw new ApiError(400, INDEX_NOT_RUNNING);
    await runBatch(c.var.db, stopBuild(c.var.db));
    return ok(c, null);
  });

  app.openapi(clear, async (c) => {
    const state = await indexState(c);
    if (state.running) throw new ApiError(400, INDEX_RUNNING);
    await runBatch(c.var.db, clearIndex(c.var.db));
    return ok(c, null);
  });

  app.openapi(scanStart, async (c) => {
    const state = await indexState(c);
    if (state.running) throw new ApiError(400, scanRunning(state) ? SCAN_RUNNING : INDEX_RUNNING);
    const full = fullPathOf(viewerOf(c.var.caller), c.req.valid("json").path);
    await runBatch(c.var.db, startScan(c.var.db, full));
    kick(c);
    return ok(c, null);
  });

  app.openapi(scanStop, async (c) => {
    const state = await planned(c, indexPlan);
    if (!scanRunning(state)) throw new ApiError(400, SCAN_NOT_RUNNING);
    await runBatch(c.var.db, stopBuild(c.var.db));
    return ok(c, null);
  });

  app.openapi(scanProgress, async (c) => {
    const state = await planned(c, indexPlan);
    // Polled on the Indexes page's load and every 5 s after while a scan runs: each poll moves it on.
    if (scanRunning(state)) kick(c, POLL_BUDGET_MS);
    return ok(c, scanProgressOf(state.values.get("scan_progress") ?? "{}", state.running));
  });

  app.openapi(progress, async (c) => {
    const state = await indexState(c);
    // The web UI polls this every 5 s while a build runs: each poll moves it on (leases keep steps apart).
    if (state.running) kick(c, POLL_BUDGET_MS);
    return ok(c, progressOf(state.progress));
  });
}
