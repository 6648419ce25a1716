// For the drivers that point into other storages (Alias, Crypt): a path must lie inside a
// mounted storage that is enabled and working.
import { cleanPath } from "../lib/path.ts";
import { CheckFailed, WORKING, type MountedStorage } from "./types.ts";

/** Throws unless `path` lies under an enabled storage whose status is `work` (the deepest mount wins, as in AList). */
export function requireWorkingStorage(path: string, storages: MountedStorage[], what: string): void {
  const target = cleanPath(path);
  const inside = storages
    .filter((s) => s.mountPath === "/" || target === s.mountPath || target.startsWith(`${s.mountPath}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  if (!inside) throw new CheckFailed(`${what} ${target} is not inside any mounted storage`);
  if (inside.disabled)
    throw new CheckFailed(`${what} ${target} is inside storage ${inside.mountPath}, which is disabled`);
  if (inside.status !== WORKING)
    throw new CheckFailed(
      `${what} ${target} is inside storage ${inside.mountPath}, which is not working: ${inside.status}`,
    );
}
