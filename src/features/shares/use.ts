// Using a share without an account: browsing under `/@s/<id>/…` through /api/fs/list and
// /api/fs/get (OpenList server/handles/sharing.go:24-105), and downloads at `/sd/<id>/<path>`
// (OpenList server/handles/sharing.go:191-250). Every request re-reads the share and its creator
// and holds the shared items to what the creator may read now (role scopes, base path, hide rules,
// meta passwords: the file side's own guards, with the creator as the viewer and no meta password).
// Nothing here names a real storage path to the visitor: the file side's failures are reworded.
import type { Context, MiddlewareHandler } from "hono";
import { clientIp } from "../../auth/client.ts";
import type { FileObject } from "../../drivers/types.ts";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError, FileError } from "../../http/errors.ts";
import { MountTree, sortEntries, ZERO_TIME } from "../fs/mounts.ts";
import { baseName, decodeDownloadPath, escapePath, joinName } from "../fs/path.ts";
import { listingPage, nearestMeta, requireAccess, throughAlias, visibleEntries, type Viewer } from "../fs/rules.ts";
import { apiUrl } from "../../http/origin.ts";
import { serveLink } from "../fs/serve.ts";
import type { FsState } from "../fs/state.ts";
import { getObjectFields, listItem } from "../fs/wire.ts";
import { FOLDER_LINK, ROOT_LINK, SHARE_INVALID, STORAGE_FAILED } from "./messages.ts";
import {
  checkCode,
  notFound,
  requireShareId,
  requireUsable,
  shareSign,
  ShareError,
  sharePathOf,
  targetOf,
  type ShareTarget,
} from "./rules.ts";
import { countDownload, countWrongCode, readShareInUse, uncountDownload, type ShareRow } from "./store.ts";

export interface OpenShare {
  share: ShareRow;
  viewer: Viewer;
  state: FsState;
  tree: MountTree;
}

/**
 * Reads the share (one round trip) and lets the request in: usable, and the code given (or a sign
 * of the file). A wrong code is counted against the address and the share before the refusal.
 */
export async function openShare(
  c: Context<AppEnv>,
  id: string,
  code: string,
  sign?: { rest: string; value: string },
): Promise<OpenShare> {
  requireShareId(id);
  const ip = clientIp(c);
  const use = await readShareInUse(c.var.db, id, ip);
  const { share, viewer } = requireUsable(use);
  try {
    await checkCode(use, share, code, sign);
  } catch (error) {
    if (error instanceof ShareError && error.status === 403 && code !== "") await countWrongCode(c.var.db, id, ip);
    throw error;
  }
  return { share, viewer, state: use.state, tree: new MountTree(use.state.tree, c.var.db, c.req.raw.signal) };
}

/**
 * The creator may read `path` now, as if it asked itself (hide rules, meta passwords without a
 * password, Alias targets' metas): else the path is not in the share, as far as a visitor knows.
 */
function requireCreatorReads(open: OpenShare, path: string) {
  try {
    requireAccess(open.viewer, open.state, path, "");
  } catch {
    throw notFound();
  }
  open.tree.guardedBy(throughAlias(open.viewer, open.state, path, ""));
}

/** Runs a file-side step; its failures reworded without the storage's paths or texts. */
export async function quietly<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof ShareError) throw error;
    if (error instanceof FileError && (error.kind === "not_found" || error.kind === "not_a_folder")) throw notFound();
    if (error instanceof ApiError && error.code === 403) throw notFound();
    throw new ShareError(500, STORAGE_FAILED, 502);
  }
}

/** The object a target names: the virtual root of a multi-item share is a folder named after the share. */
export async function objectAt(open: OpenShare, target: ShareTarget): Promise<FileObject> {
  if (target.root) return { name: open.share.id, size: 0, isDir: true, modified: ZERO_TIME, path: "" };
  requireCreatorReads(open, target.path);
  return quietly(() => open.tree.get(target.path));
}

/** A folder's entries inside the share: a multi-item root lists the items the creator may still read. */
async function entriesAt(open: OpenShare, target: ShareTarget): Promise<FileObject[]> {
  if (target.root) {
    const found = await Promise.all(
      open.share.files.map((path) =>
        objectAt(open, { root: false, path, item: path }).then(
          (object) => ({ ...object, name: baseName(path) }),
          () => null,
        ),
      ),
    );
    return found.filter((entry) => entry !== null);
  }
  requireCreatorReads(open, target.path);
  const entries = await quietly(() => open.tree.list(target.path));
  return visibleEntries(open.viewer, nearestMeta(open.state.metas, target.path), target.path, entries);
}

/** No driver path on the wire: a visitor learns names, not where they are stored. */
const withoutPath = <T extends { path: string }>(item: T): T => ({ ...item, path: "" });

async function shareList(c: Context<AppEnv>, id: string, rest: string, body: ListRequest) {
  const open = await openShare(c, id, body.password);
  const target = targetOf(open.share, rest);
  // A file listed as a folder is the storage's "not a folder", reworded as not found.
  const entries = sortEntries(await entriesAt(open, target), open.share);
  const { page, perPage } = listingPage(body.page, body.per_page);
  const slice = entries.slice((page - 1) * perPage, page * perPage);
  return ok(c, {
    content: slice.map((entry) => withoutPath(listItem(entry, "", open.state.settings))),
    total: entries.length,
    filtered_total: entries.length,
    page,
    per_page: perPage,
    has_more: page * perPage < entries.length,
    pages_total: Math.ceil(entries.length / perPage),
    readme: open.share.readme,
    header: open.share.header,
    write: false,
    write_content_bypass: false,
    provider: "unknown",
  });
}

async function shareGet(c: Context<AppEnv>, id: string, rest: string, password: string) {
  const open = await openShare(c, id, password);
  const target = targetOf(open.share, rest);
  const object = await objectAt(open, target);
  const cleanRest = target.root ? "/" : pathInside(open.share, target);
  let rawUrl = "";
  if (!object.isDir) {
    const sign = open.share.codeHash === "" ? "" : `?sign=${await shareSign(open.state, open.share, cleanRest)}`;
    rawUrl = `${apiUrl(c, open.state.settings.siteUrl)}/sd/${encodeURIComponent(open.share.id)}${escapePath(cleanRest)}${sign}`;
  }
  return ok(c, {
    ...withoutPath(getObjectFields(object, "", open.state.settings)),
    raw_url: rawUrl,
    readme: open.share.readme,
    header: open.share.header,
    provider: "unknown",
    related: null,
  });
}

/** The path inside the share of a target, cleaned: what /sd links and signs name. */
export function pathInside(share: ShareRow, target: Exclude<ShareTarget, { root: true }>): string {
  const below = target.path.slice(target.item === "/" ? 0 : target.item.length) || "/";
  if (share.files.length === 1) return below;
  return below === "/" ? `/${baseName(target.item)}` : joinName(`/${baseName(target.item)}`, below.slice(1));
}

interface ListRequest {
  password: string;
  page: number;
  per_page: number;
}

export const text = (value: unknown) => (typeof value === "string" ? value : "");
export const integer = (value: unknown, fallback: number) =>
  typeof value === "number" && Number.isInteger(value) ? value : fallback;

/**
 * Route middleware of /api/fs/list and /api/fs/get, before their guard (routes.ts
 * `registerShareBrowsing`): a path under `/@s/` is a share's, answered here without an account (a
 * login token, even a stale one, is not looked at); any other path goes on to the file side.
 */
export function shareBrowsing(kind: "list" | "get"): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const body = c.req.header("Content-Type")?.includes("json") ? await c.req.json().catch(() => null) : null;
    const shared = body && typeof body === "object" ? sharePathOf(text(body.path)) : null;
    if (!shared) return next();
    const password = text(body.password);
    if (kind === "get") return shareGet(c, shared.id, shared.rest, password);
    return shareList(c, shared.id, shared.rest, {
      password,
      page: integer(body.page, 1),
      per_page: integer(body.per_page, 0),
    });
  };
}

/**
 * `GET|HEAD /sd/<id>/<path>`: the file's bytes, always through this server, so that nothing handed
 * out outlives the share (docs/decisions.md D14.4). A delivered GET counts one access, atomically;
 * refusals are plain text with a real HTTP status.
 */
export async function shareDownload(c: Context<AppEnv>): Promise<Response> {
  try {
    return await deliver(c);
  } catch (error) {
    if (error instanceof ShareError) return refusal(error.status, error.message);
    throw error;
  }
}

export const refusal = (status: number, message: string) =>
  new Response(`${message}\n`, { status, headers: { "Content-Type": "text/plain; charset=utf-8" } });

async function deliver(c: Context<AppEnv>): Promise<Response> {
  const url = new URL(c.req.url);
  const raw = url.pathname.slice("/sd/".length);
  const cut = raw.indexOf("/");
  const id = decodeDownloadPath(cut < 0 ? raw : raw.slice(0, cut)).slice(1);
  const rest = cut < 0 ? "/" : decodeDownloadPath(raw.slice(cut));
  const open = await openShare(c, id, url.searchParams.get("pwd") ?? "", {
    rest,
    value: url.searchParams.get("sign") ?? "",
  });
  const target = targetOf(open.share, rest);
  if (target.root) throw new ShareError(400, ROOT_LINK, 400);
  const object = await objectAt(open, target);
  if (object.isDir) throw new ShareError(400, FOLDER_LINK, 400);
  if (c.req.method === "HEAD") return quietly(() => serveFile(c, open, target.path, object.name));
  // Counted before the upstream is asked, so a used-up share costs no upstream call; a download
  // that then fails gives its count back.
  if (!(await countDownload(c.var.db, open.share.id))) throw new ShareError(500, SHARE_INVALID, 410);
  try {
    const response = await quietly(() => serveFile(c, open, target.path, object.name));
    if (response.status >= 400) await uncountDownload(c.var.db, open.share.id);
    return response;
  } catch (error) {
    await uncountDownload(c.var.db, open.share.id);
    throw error;
  }
}

async function serveFile(c: Context<AppEnv>, open: OpenShare, path: string, name: string): Promise<Response> {
  const link = await open.tree.link(path, { redirect: false, headers: c.req.raw.headers });
  return serveLink(c.req.raw, link, name);
}
