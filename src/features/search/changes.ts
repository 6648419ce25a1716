// The index's side of Gatehouse's own writes (docs/decisions.md D11.4): a write route notes each
// change once its upstream call succeeded, and the changes go to the database in one batch at the
// end of the request, only when `auto_update_index` is on and an index exists. The settings and
// the storages come from the request's one read (features/fs/store.ts).
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../db/client.ts";
import { runBatch } from "../../db/plan.ts";
import { parentOf } from "../fs/path.ts";
import type { FsState } from "../fs/state.ts";
import { resolveStorage, type StorageRow } from "../fs/tree.ts";
import { ENGINE, ignoredPaths, indexExists, isIgnored } from "./rules.ts";
import { copySubtree, deleteSubtree, ensureFolders, moveSubtree, upsertEntries } from "./store.ts";

export class IndexChanges {
  private readonly statements: BatchItem<"sqlite">[] = [];
  private readonly enabled: boolean;
  private readonly ignored: string[];

  constructor(
    private readonly db: Database,
    private readonly state: FsState,
  ) {
    const { settings } = state;
    this.enabled = settings.searchIndex === ENGINE && settings.autoUpdateIndex && indexExists(settings.indexProgress);
    this.ignored = ignoredPaths(settings.ignorePaths);
  }

  /** A path the index leaves out: an `ignore_paths` rule, or a storage with `disable_index`. */
  private skipped(path: string): boolean {
    return isIgnored(this.ignored, path) || !!resolveStorage(this.state.tree.storages, path)?.storage.disableIndex;
  }

  private note(...statements: BatchItem<"sqlite">[]) {
    if (this.enabled) this.statements.push(...statements);
  }

  /** A file uploaded or a folder made (with the folders above it). */
  added(path: string, isDir: boolean, size: number) {
    if (this.skipped(path)) return;
    this.note(...ensureFolders(this.db, parentOf(path)), ...upsertEntries(this.db, [{ path, isDir, size }]));
  }

  removed(path: string) {
    this.note(deleteSubtree(this.db, path));
  }

  /** A rename or move: the subtree follows (or leaves the index when it lands where the index skips). */
  moved(from: string, to: string) {
    if (this.skipped(to)) this.removed(from);
    else this.note(...ensureFolders(this.db, parentOf(to)), ...moveSubtree(this.db, from, to));
  }

  copied(from: string, to: string) {
    if (!this.skipped(to)) this.note(...ensureFolders(this.db, parentOf(to)), ...copySubtree(this.db, from, to));
  }

  /**
   * What a background copy or move needs to keep the index as this request would have (null when
   * the request would not have touched it): it rides in the task's payload to every unit.
   */
  forTask(): TaskIndexing | null {
    return this.enabled ? { ignore: this.ignored } : null;
  }

  /** What was noted, to travel in a batch the request writes anyway; nothing is left to flush. */
  take(): BatchItem<"sqlite">[] {
    return this.statements.splice(0);
  }

  /** Writes what was noted, in one batch; the upstream change stands even if this fails (logged). */
  async flush(): Promise<void> {
    const statements = this.take();
    if (statements.length === 0) return;
    try {
      await runBatch(this.db, statements);
    } catch (error) {
      console.error(JSON.stringify({ index: "auto update failed", error: String(error) }));
    }
  }
}

/** A task's share of auto update: the `ignore_paths` rules of the request that started it. */
export interface TaskIndexing {
  ignore: string[];
}

/** What a task unit wrote at `path` (in `storage`), as statements for the batch that settles it. */
export function taskWrote(
  db: Database,
  indexing: TaskIndexing | null | undefined,
  storage: StorageRow,
  path: string,
  isDir: boolean,
  size: number,
): BatchItem<"sqlite">[] {
  if (!indexing || storage.disableIndex || isIgnored(indexing.ignore, path)) return [];
  return [...ensureFolders(db, parentOf(path)), ...upsertEntries(db, [{ path, isDir, size }])];
}

/** What a task unit removed at `path` (a move's source, once all of it arrived). */
export const taskRemoved = (db: Database, indexing: TaskIndexing | null | undefined, path: string) =>
  indexing ? [deleteSubtree(db, path)] : [];
