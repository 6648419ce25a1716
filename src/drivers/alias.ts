// Alias: one folder showing paths of other storages. Each line of `paths` (`/path` or
// `name:/path`) must point into a mounted, enabled, working storage.
import { driverConfig, items } from "./items.ts";
import { requireWorkingStorage } from "./mounts.ts";
import {
  CheckFailed,
  FileError,
  objectNotFound,
  type Addition,
  type Driver,
  type FileBackend,
  type FileObject,
  type StorageHandle,
} from "./types.ts";

export const alias: Driver = {
  config: driverConfig({ name: "Alias", local_sort: true, no_cache: true, default_root: "/" }),
  proxyRangeOption: true,
  additional: items([
    { name: "paths", type: "text", required: true },
    {
      name: "protect_same_name",
      type: "bool",
      default: "true",
      help: "Protects same-name files from Delete or Rename",
    },
    { name: "download_concurrency", type: "number", default: "0", help: "Need to enable proxy" },
    { name: "download_part_size", type: "number", default: "0", help: "Need to enable proxy. Unit: KB" },
    { name: "writable", type: "bool", default: "false" },
  ]),
  pointsInto: aliasedPaths,
  files: (storage) => aliasFiles(storage),
  async check(addition, context) {
    const paths = aliasedPaths(addition);
    if (paths.length === 0) throw new CheckFailed("paths is required");
    for (const path of paths) requireWorkingStorage(path, context.storages, "path");
  },
};

/** Each non-empty line of `paths`: `/path`, or `name:/path` naming the entry. */
function aliasedPaths(addition: Addition): string[] {
  return aliasEntries(addition).map((entry) => entry.target);
}

/** The lines of `paths` as names and the full paths they show; a bare path is named by its last segment. */
function aliasEntries(addition: Addition): { name: string; target: string }[] {
  return addition
    .text("paths")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => {
      const target =
        (line.startsWith("/") ? line : line.slice(line.indexOf(":") + 1).trim()).replace(/\/+$/, "") || "/";
      const name = line.startsWith("/")
        ? target.slice(target.lastIndexOf("/") + 1) || "root"
        : line.slice(0, line.indexOf(":")).trim();
      return { name, target };
    });
}

/**
 * The file side (AList v3.58.0 drivers/alias/driver.go:62-128, util.go:20): with one name, the
 * alias root shows that name's targets directly; with several, one folder per name. A folder lists
 * every target of its name (first name wins in the merge); get, link and reads go to the first
 * target where the object exists. Read-only at the edge: writes answer AList's `permission denied`
 * unless `writable`, and writing through an alias is not built yet.
 */
function aliasFiles(storage: StorageHandle): FileBackend {
  const groups = new Map<string, string[]>();
  for (const { name, target } of aliasEntries(storage.addition))
    groups.set(name, [...(groups.get(name) ?? []), target]);
  const flat = groups.size === 1;

  /** The full paths an alias path stands for, in the order of `paths`; [] for the alias root with several names. */
  function targetsOf(path: string): string[] {
    const segments = path.split("/").filter(Boolean);
    const [name, rest] = flat ? [[...groups.keys()][0]!, segments] : [segments[0], segments.slice(1)];
    if (name === undefined) return [];
    const roots = groups.get(name);
    if (!roots) throw objectNotFound();
    return roots.map((root) => (rest.length === 0 ? root : `${root === "/" ? "" : root}/${rest.join("/")}`));
  }

  async function firstThat<T>(path: string, action: (target: string) => Promise<T>): Promise<T> {
    let last: unknown = objectNotFound();
    for (const target of targetsOf(path)) {
      try {
        return await action(target);
      } catch (error) {
        last = error;
      }
    }
    throw last;
  }

  return {
    async list(dir) {
      if (!flat && dir === "/")
        return [...groups.keys()].map((name) => ({
          name,
          size: 0,
          isDir: true,
          modified: storage.modified,
          path: `/${name}`,
        }));
      const lists = await Promise.allSettled(targetsOf(dir).map((target) => storage.fs.list(target)));
      const found = lists.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
      if (found.length === 0)
        throw (
          (lists.find((r) => r.status === "rejected") as PromiseRejectedResult | undefined)?.reason ?? objectNotFound()
        );
      const seen = new Set<string>();
      const merged: FileObject[] = [];
      for (const entry of found.flat()) {
        if (seen.has(entry.name)) continue;
        seen.add(entry.name);
        merged.push({ ...entry, path: dir === "/" ? `/${entry.name}` : `${dir}/${entry.name}` });
      }
      return merged;
    },
    async get(path) {
      if (path === "/" || (!flat && path.split("/").filter(Boolean).length === 1 && groups.has(path.slice(1)))) {
        return { name: path === "/" ? "root" : path.slice(1), size: 0, isDir: true, modified: storage.modified, path };
      }
      return firstThat(path, async (target) => ({ ...(await storage.fs.get(target)), path }));
    },
    async link(path, options) {
      return firstThat(path, async (target) => {
        const object = await storage.fs.get(target);
        if (object.isDir) throw new FileError("not_a_file", "not a file");
        return storage.fs.link(target, options);
      });
    },
  };
}
