// `/ae/*path` (and `/ad`, `/ap`): one entry of a ZIP, streamed (AList v3.58.0
// server/handles/archive.go:323-427). The gate is /d's: a sign whenever /d of the archive would need
// one (sign_all, the storage's enable_sign, a meta password, a hidden name on the way), here the
// archive sign. No storage here extracts by itself, so `/ad` and `/ap` extract as `/ae` does
// (docs/decisions.md D13.3). Range is served by inflating from the entry's start and dropping the
// bytes before the range (a stored entry is read at the range itself).
import type { Context } from "hono";
import type { AppEnv } from "../../http/context.ts";
import { ApiError } from "../../http/errors.ts";
import type { Router } from "../../http/router.ts";
import { MountTree } from "../fs/mounts.ts";
import { decodeDownloadPath } from "../fs/path.ts";
import { signRequired, targetNeedsSign } from "../fs/rules.ts";
import { signProblem } from "../fs/sign.ts";
import type { FsState } from "../fs/state.ts";
import { readState } from "../fs/store.ts";
import { streamEntry } from "./read.ts";

const KINDS = ["ae", "ad", "ap"] as const;

/**
 * The web UI's link to an entry of a shared ZIP, `/ae/<share id>/<path>` (shares/archive.ts
 * `uiShareEntry`, passed in by src/app.ts: shares sit above archives): its answer, or null when
 * the id names no share.
 */
export type SharedEntry = (c: Context<AppEnv>, raw: string) => Promise<Response | null>;

export function registerArchiveDownloadRoutes(app: Router, sharedEntry: SharedEntry) {
  for (const kind of KINDS) {
    // HEAD is answered by the GET route (Hono), without a body.
    app.get(`/${kind}/:path{.+}`, (c) => extractEntry(c, kind.length + 1, sharedEntry));
    app.openAPIRegistry.registerPath({ method: "get", path: `/${kind}/{path}` });
  }
}

/** `/<first>/…` where `<first>` is neither a storage's mount point nor a folder above one. */
async function shareShaped(tree: MountTree, path: string, top: string): Promise<boolean> {
  return top !== "/" && top !== path && (await tree.mountsAt(top)) === null;
}

async function requireSign(state: FsState, path: string, sign: string) {
  const problem = await signProblem(`${state.settings.token}-archive`, path, sign);
  if (problem) throw new ApiError(401, problem);
}

async function extractEntry(c: Context<AppEnv>, prefixLength: number, sharedEntry: SharedEntry): Promise<Response> {
  const url = new URL(c.req.url);
  const path = decodeDownloadPath(url.pathname.slice(prefixLength));
  // The archive's own mount-point lookup (tree.get) travels in the same batch: one round trip; its
  // first folder's too, which tells a share's link from a storage's path (below).
  const top = `/${path.split("/")[1] ?? ""}`;
  const state = await readState(c.var.db, { paths: [path], folders: [], points: top === path ? [path] : [path, top] });
  const tree = new MountTree(state.tree, c.var.db, c.req.raw.signal);
  const storage = await tree.storageAt(path);
  const sign = url.searchParams.get("sign") ?? "";
  // The web UI builds a share's entry links as /ae/<share id>/<path in the share>, never with a
  // sign (OpenList's server answers them at /sad): an unsigned path whose first folder is no
  // storage's mount point (nor above one) is a share's when that name is a share, even under a
  // storage mounted at / (docs/decisions.md D14.8).
  if (sign === "" && (await shareShaped(tree, path, top))) {
    const shared = await sharedEntry(c, url.pathname.slice(prefixLength));
    if (shared) return shared;
  }
  const checked = signRequired(state, path, storage);
  if (checked) await requireSign(state, path, sign);
  // Through an alias, a target a meta password guards or a hide rule hides needs the sign as it would named directly.
  tree.guardedBy({
    async enter(target) {
      if (!checked && targetNeedsSign(state, [target])) await requireSign(state, path, sign);
    },
    entries: (_target, entries) => entries,
  });
  return streamEntry(c.req.raw, tree, path, url.searchParams.get("inner") ?? "/", url.searchParams.get("pass") ?? "");
}
