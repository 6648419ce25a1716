// The index build in resumable steps (docs/decisions.md D11.2). Its whole state is in the
// database: the folders still to list (`search_queue`) and AList's progress (`index_progress`), so
// any isolate continues it, a restart loses nothing, and a tree of any size is walked a few
// folders at a time. A step: claim a few folders (a lease), read the tree they need (one round
// trip), list them upstream, write their entries and queue their subfolders (one batch). The cron
// runs steps (src/index.ts), and `build` and `update` kick them at once with waitUntil.
import { eq, or } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { runBatch } from "../../db/plan.ts";
import { storages } from "../../db/schema.ts";
import { MountTree } from "../fs/mounts.ts";
import { isWithin, joinName } from "../fs/path.ts";
import { readState } from "../fs/store.ts";
import { failedListing } from "./messages.ts";
import { ignoredPaths, isIgnored } from "./rules.ts";
import { claimFolders, finishStep, type IndexEntry, indexStateReads } from "./store.ts";

/** Folders listed per step: bounded upstream calls and one write batch of bounded size. */
const FOLDERS_PER_STEP = 8;
/** How long a step holds its folders; a step that died frees them after this. */
const LEASE_MS = 60_000;

interface StepReport {
  /** Folders listed by this step. */
  listed: number;
  /** Entries written. */
  entries: number;
  /** No folder was left to claim. */
  idle: boolean;
}

/** One step of a running build or update; `idle` when nothing was left for it. */
async function buildStep(db: Database, now = Date.now()): Promise<StepReport> {
  const lease = now + LEASE_MS + Math.floor(Math.random() * 1000);
  // One round trip: the claim, the settings, the storages the index skips.
  const [folders, settingRows, skippedStorages] = await db.batch([
    claimFolders(db, now, lease, FOLDERS_PER_STEP),
    indexStateReads(db)[0],
    db
      .select({ mountPath: storages.mountPath })
      .from(storages)
      .where(or(eq(storages.disableIndex, true), eq(storages.disabled, true))),
  ]);
  if (folders.length === 0) return { listed: 0, entries: 0, idle: true };
  const ignored = ignoredPaths(settingRows.find((row) => row.key === "ignore_paths")?.value ?? "");
  const skipped = (full: string) =>
    isIgnored(ignored, full) || skippedStorages.some((storage) => isWithin(full, storage.mountPath) && full !== "/");

  const paths = folders.map((folder) => folder.path);
  const state = await readState(db, { paths, folders: paths });
  const tree = new MountTree(state.tree, db);
  let failure = "";
  const listed = await Promise.all(
    folders.map(async (folder) => {
      let entries: IndexEntry[] = [];
      try {
        entries = (await tree.list(folder.path))
          .map((entry) => ({ path: joinName(folder.path, entry.name), isDir: entry.isDir, size: entry.size }))
          .filter((entry) => !skipped(entry.path));
      } catch (error) {
        // Recorded in the progress (AList skipped such folders silently), and the walk goes on.
        failure ||= failedListing(folder.path, error instanceof Error ? error.message : String(error));
      }
      const nextDepth = folder.depth - 1;
      const next =
        nextDepth === 0
          ? []
          : entries.filter((entry) => entry.isDir).map((entry) => ({ path: entry.path, depth: nextDepth }));
      return { folder: folder.path, entries, next };
    }),
  );
  await runBatch(db, finishStep(db, lease, listed, failure));
  return { listed: folders.length, entries: listed.reduce((sum, l) => sum + l.entries.length, 0), idle: false };
}

/** Steps until the queue is empty or `budgetMs` is spent: what the cron and a kick run. */
export async function runBuild(db: Database, budgetMs: number): Promise<{ steps: number; entries: number }> {
  const started = Date.now();
  let steps = 0;
  let entries = 0;
  while (Date.now() - started < budgetMs) {
    const report = await buildStep(db);
    if (report.idle) break;
    steps++;
    entries += report.entries;
  }
  return { steps, entries };
}
