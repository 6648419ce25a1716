// The mount tree at work (AList v3.58.0 internal/op/path.go:15, internal/op/storage.go:356-418): a
// full path resolves to the storage with the longest mount path and the path inside it; listings
// merge the storage's entries with the virtual folders that deeper mount paths make. Built per
// request from the rows the request's batch read; a path that batch did not cover (an Alias target,
// a guess that missed) is read with one more round trip. Nothing is cached across requests: changes
// apply on the next one.
import { readAddition } from "../../drivers/addition.ts";
import { findDriver } from "../../drivers/index.ts";
import {
  FileError,
  WORKING,
  type Driver,
  type FileBackend,
  type FileObject,
  type Link,
  type LinkOptions,
  type StorageFs,
} from "../../drivers/types.ts";
import { ApiError } from "../../http/errors.ts";
import {
  driverNotAtEdge,
  driverNotFound,
  LINK_FAILED_PREFIX,
  LIST_FAILED_PREFIX,
  LIST_NOT_FOUND,
  NO_STORAGE_AT_ROOT,
  noStorageAt,
  NOT_A_FILE,
  OBJECT_NOT_FOUND,
  storageNotInit,
  tooManyAliases,
} from "./messages.ts";
import { baseName, parentOf } from "./path.ts";
import type { Database } from "../../db/client.ts";
import type { MountsAt, TreeRows } from "./state.ts";
import { extendTree } from "./store.ts";
import { resolveStorage, type StorageRow, type VirtualFolder } from "./tree.ts";

/** The zero time AList shows for objects without one (Go's time.Time{}). */
export const ZERO_TIME = new Date("0001-01-01T00:00:00Z");

export interface Mounted {
  storage: StorageRow;
  driver: Driver;
  backend: FileBackend;
  /** The path inside the storage. */
  actualPath: string;
}

const MAX_ALIAS_DEPTH = 8;

/** Folders of this prefix hold the parts of uploads in progress (staged-parts.ts): listings never show them. */
export const STAGING_PREFIX = ".gatehouse-upload-";

/**
 * What the caller may reach through an Alias (rules.ts throughAlias, download.ts): every path an
 * alias asks of the tree is entered first (it throws when refused), and a folder's entries are
 * filtered as that path's metas say.
 */
export interface AliasGuard {
  enter(target: string): void | Promise<void>;
  entries(target: string, entries: FileObject[]): FileObject[];
}

const naturalOrder = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

const chainCovered = (chains: Set<string>, path: string) => {
  if (!chains.has("/")) return false;
  let prefix = "";
  for (const segment of path.split("/").filter(Boolean)) {
    prefix += `/${segment}`;
    if (!chains.has(prefix)) return false;
  }
  return true;
};

export class MountTree implements StorageFs {
  constructor(
    private readonly tree: TreeRows,
    private readonly db: Database,
    private readonly signal?: AbortSignal,
    /** How many Alias hops led here: an alias that shows itself would never end. */
    private readonly depth = 0,
    /** Held to every Alias hop: each call on a tree with depth > 0 is an alias asking for a target path. */
    private guard?: AliasGuard,
  ) {}

  /** The tree with `guard` on its Alias hops (the routes' caller checks on the targets' metas). */
  guardedBy(guard: AliasGuard): this {
    this.guard = guard;
    return this;
  }

  /** On an Alias hop: the guard's refusal, before anything is asked of the target. */
  private async enter(path: string): Promise<void> {
    if (this.depth > 0 && this.guard) await this.guard.enter(path);
  }

  /**
   * Makes sure the storages of `paths`, the virtual folders of `folders` and the mount-point
   * status of `points` are read: what is missing, in one round trip.
   */
  private async cover(paths: string[], folders: string[] = [], points: string[] = []): Promise<void> {
    const needs = {
      paths: paths.filter((path) => !chainCovered(this.tree.chains, path)),
      folders: folders.filter((folder) => !this.tree.virtual.has(folder)),
      points: points.filter((path) => !this.tree.points.has(path) && !this.tree.virtual.has(parentOf(path))),
    };
    if (needs.paths.length > 0 || needs.folders.length > 0 || needs.points.length > 0)
      await extendTree(this.db, this.tree, needs);
  }

  /** The virtual folder `path` is (a mount point, or a folder above one), or null: from its parent's listing when read, else on its own. */
  private mountPoint(path: string): VirtualFolder | null {
    const siblings = this.tree.virtual.get(parentOf(path));
    if (siblings) return siblings.find((v) => v.name === baseName(path)) ?? null;
    return this.tree.points.get(path) ?? null;
  }

  /** The storage serving `path` and its backend; AList's refusals when there is none or it cannot serve. */
  async mount(path: string): Promise<Mounted> {
    await this.cover([path]);
    const resolved = resolveStorage(this.tree.storages, path);
    if (!resolved) throw new FileError("no_storage", path === "/" ? NO_STORAGE_AT_ROOT : noStorageAt(path), true);
    const { storage, actualPath } = resolved;
    const driver = findDriver(storage.driver);
    if (!driver) throw new FileError("unavailable", driverNotFound(storage.driver), true);
    if (!driver.files) throw new FileError("unavailable", driverNotAtEdge(storage.driver), true);
    // A failed check refuses; a storage never checked yet (an import's, status "") is tried.
    if (storage.status !== WORKING && storage.status !== "")
      throw new FileError("unavailable", storageNotInit(storage.status), true);
    if (this.depth > MAX_ALIAS_DEPTH) throw new FileError("unavailable", tooManyAliases(MAX_ALIAS_DEPTH), true);
    const backend = driver.files({
      id: storage.id,
      mountPath: storage.mountPath,
      modified: new Date(storage.modifiedAtMs),
      addition: readAddition(driver, storage.addition),
      fs: new MountTree(this.tree, this.db, this.signal, this.depth + 1, this.guard),
      signal: this.signal,
    });
    return { storage, driver, backend, actualPath };
  }

  /**
   * Whether `path` is a storage's mount point or a folder above one (what may not be renamed, moved
   * or removed): from the rows read already (the chain of `path`, its parent's virtual folders or
   * its own point), else one round trip.
   */
  async mountsAt(path: string): Promise<MountsAt> {
    await this.cover([path], [], path === "/" ? [] : [path]);
    if (this.tree.storages.some((row) => !row.disabled && row.mountPath === path)) return "mount point";
    return path === "/" || this.mountPoint(path) ? "above a mount point" : null;
  }

  /** The storage serving `path`, or null (a purely virtual folder). */
  async storageAt(path: string): Promise<StorageRow | null> {
    await this.cover([path]);
    return resolveStorage(this.tree.storages, path)?.storage ?? null;
  }

  /** A folder's entries: the storage's, sorted as the storage asks, then the virtual folders; first name wins. */
  async list(path: string): Promise<FileObject[]> {
    await this.enter(path);
    await this.cover([path], [path]);
    const virtual = this.tree.virtual.get(path)!;
    let entries: FileObject[] = [];
    if (resolveStorage(this.tree.storages, path) || virtual.length === 0) {
      try {
        const mounted = await this.mount(path);
        const listed = await mounted.backend.list(mounted.actualPath);
        entries = sortEntries(
          listed.filter((entry) => !entry.name.startsWith(STAGING_PREFIX)),
          mounted.storage,
        );
      } catch (error) {
        // A failing storage under virtual folders still shows them (as AList).
        if (virtual.length === 0) throw listFailure(error);
      }
    }
    const seen = new Set<string>();
    const merged: FileObject[] = [];
    for (const entry of [
      ...entries,
      ...virtual.map((v) => ({ name: v.name, size: 0, isDir: true, modified: v.modified, path: "" })),
    ]) {
      if (seen.has(entry.name)) continue;
      seen.add(entry.name);
      merged.push(entry);
    }
    return this.depth > 0 && this.guard ? this.guard.entries(path, merged) : merged;
  }

  /** One object. A mount point is the virtual folder, not the storage's root (as AList). */
  async get(path: string): Promise<FileObject> {
    await this.enter(path);
    // Whether it is a mount point: asked on its own, unless a round trip is due anyway (an Alias
    // target): then the parent's virtual folders come along, and a listing of the parent is free.
    if (path !== "/" && !chainCovered(this.tree.chains, path)) await this.cover([path], [parentOf(path)]);
    else await this.cover([path], [], path === "/" ? [] : [path]);
    if (path !== "/") {
      const virtual = this.mountPoint(path);
      if (virtual) return { name: baseName(path), size: 0, isDir: true, modified: virtual.modified, path: "" };
    }
    if (path === "/" && !resolveStorage(this.tree.storages, "/"))
      return { name: "root", size: 0, isDir: true, modified: ZERO_TIME, path: "" };
    const mounted = await this.mount(path);
    try {
      return await getObject(mounted);
    } catch (error) {
      throw fileFailure(error, "");
    }
  }

  async link(path: string, options: LinkOptions): Promise<Link> {
    await this.enter(path);
    const mounted = await this.mount(path);
    try {
      if (!(options.redirect && mounted.backend.linksWithoutLookup)) {
        const object = await getObject(mounted);
        if (object.isDir) throw new FileError("not_a_file", NOT_A_FILE);
      }
      return await mounted.backend.link(mounted.actualPath, options);
    } catch (error) {
      throw fileFailure(error, LINK_FAILED_PREFIX);
    }
  }
}

/** One object of a storage: the backend's own lookup, else the entry in its parent's listing. */
export async function getObject({ backend, actualPath, storage }: Mounted): Promise<FileObject> {
  if (backend.get) return backend.get(actualPath);
  if (actualPath === "/")
    return { name: "root", size: 0, isDir: true, modified: new Date(storage.modifiedAtMs), path: "/" };
  const name = baseName(actualPath);
  const found = (await backend.list(parentOf(actualPath))).find((entry) => entry.name === name);
  if (!found) throw new FileError("not_found", OBJECT_NOT_FOUND);
  return found;
}

/**
 * The storage's `order_by`, `order_direction` and `extract_folder` (AList v3.58.0
 * internal/op/fs.go:152-154).
 */
function sortEntries(entries: FileObject[], storage: StorageRow): FileObject[] {
  const sorted = [...entries];
  const direction = storage.orderDirection === "desc" ? -1 : 1;
  const compare: Record<string, (a: FileObject, b: FileObject) => number> = {
    name: (a, b) => naturalOrder.compare(a.name, b.name),
    size: (a, b) => a.size - b.size,
    modified: (a, b) => a.modified.getTime() - b.modified.getTime(),
  };
  const byField = compare[storage.orderBy];
  if (byField) sorted.sort((a, b) => direction * byField(a, b));
  if (storage.extractFolder === "front") sorted.sort((a, b) => Number(b.isDir) - Number(a.isDir));
  if (storage.extractFolder === "back") sorted.sort((a, b) => Number(a.isDir) - Number(b.isDir));
  return sorted;
}

function listFailure(error: unknown): unknown {
  if (error instanceof FileError && !error.worded && error.kind === "not_found")
    return new FileError("not_found", LIST_NOT_FOUND, true);
  return fileFailure(error, LIST_FAILED_PREFIX);
}

/**
 * A backend's failure in AList's words: a driver's FileError with `prefix` put before its text, any
 * other failure as an upstream one. A failure already worded (the mount tree's own refusals, an
 * Alias target's failure), any other ApiError and an abort pass as they are.
 */
export function fileFailure(error: unknown, prefix: string): unknown {
  if (error instanceof FileError) return error.worded ? error : new FileError(error.kind, prefix + error.message, true);
  if (error instanceof ApiError) return error;
  if (error instanceof Error && error.name === "AbortError") return error;
  return new FileError("upstream", prefix + (error instanceof Error ? error.message : String(error)), true);
}
