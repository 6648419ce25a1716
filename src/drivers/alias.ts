// Alias: one folder showing paths of other storages. Each line of `paths` (`/path` or
// `name:/path`) must point into a mounted, enabled, working storage.
import { driverConfig, items } from "./items.ts";
import { requireWorkingStorage } from "./mounts.ts";
import { CheckFailed, type Addition, type Driver } from "./types.ts";

export const alias: Driver = {
  config: driverConfig({ name: "Alias", local_sort: true, no_cache: true, default_root: "/" }),
  proxyRangeOption: true,
  additional: items([
    { name: "paths", type: "text", required: true },
    { name: "protect_same_name", type: "bool", default: "true", help: "Protects same-name files from Delete or Rename" },
    { name: "download_concurrency", type: "number", default: "0", help: "Need to enable proxy" },
    { name: "download_part_size", type: "number", default: "0", help: "Need to enable proxy. Unit: KB" },
    { name: "writable", type: "bool", default: "false" },
  ]),
  pointsInto: aliasedPaths,
  async check(addition, context) {
    const paths = aliasedPaths(addition);
    if (paths.length === 0) throw new CheckFailed("paths is required");
    for (const path of paths) requireWorkingStorage(path, context.storages, "path");
  },
};

/** Each non-empty line of `paths`: `/path`, or `name:/path` naming the entry. */
function aliasedPaths(addition: Addition): string[] {
  return addition
    .text("paths")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => (line.startsWith("/") ? line : line.slice(line.indexOf(":") + 1).trim()));
}
