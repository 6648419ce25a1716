// Archives inside a share (OpenList server/handles/sharing.go:107-189, 252-318): archive/meta and
// archive/list for a path under `/@s/<id>/`, and one entry of a shared ZIP at `/sad/<id>/<path>`,
// or at `/ae/<id>/<path>`, the link OpenList 4.2.6's web UI builds. Every request passes the
// share's own guards first (use.ts openShare: usable, code or sign; the creator may read the ZIP
// now), then the setting `share_archive_preview` and the creator's read-archives bit at the ZIP;
// the bytes come from the archive feature's own reader. An entry's GET is a download of the share
// and counts towards `max_accessed`; browsing the tree does not (docs/decisions.md D14.8).
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { FileError } from "../../http/errors.ts";
import { archivePage, readTree, streamEntry, wireObject, wireTree } from "../archive/read.ts";
import { requireZipName } from "../archive/rules.ts";
import { baseName, decodeDownloadPath, escapePath } from "../fs/path.ts";
import { can, Permission } from "../fs/rules.ts";
import { apiUrl } from "../../http/origin.ts";
import {
  ARCHIVE_NOT_READABLE,
  ARCHIVE_PREVIEW_OFF,
  FOLDER_LINK,
  INVALID_SHARE_ID,
  ROOT_LINK,
  SHARE_GONE,
  SHARE_INVALID,
} from "./messages.ts";
import { notFound, shareSign, ShareError, sharePathOf, targetOf } from "./rules.ts";
import { countDownload, uncountDownload } from "./store.ts";
import { integer, objectAt, openShare, pathInside, quietly, refusal, text, type OpenShare } from "./use.ts";

/**
 * The shared ZIP that `rest` names, once the share has let the visitor in: the setting is on, the
 * path is a file the creator may read now, named .zip, under its read-archives bit.
 */
async function sharedZip(open: OpenShare, rest: string) {
  if (!open.state.settings.shareArchivePreview) throw new ShareError(403, ARCHIVE_PREVIEW_OFF, 403);
  const target = targetOf(open.share, rest);
  if (target.root) throw new ShareError(400, ROOT_LINK, 400);
  const object = await objectAt(open, target);
  if (object.isDir) throw new ShareError(400, FOLDER_LINK, 400);
  if (!can(open.viewer.grants, target.path, Permission.READ_ARCHIVES))
    throw new ShareError(403, ARCHIVE_NOT_READABLE, 403);
  plainly(() => requireZipName(baseName(target.path)));
  return { path: target.path, rest: pathInside(open.share, target) };
}

/** An archive's own refusal (not a ZIP, a wrong password, a bomb) names only names inside the share: it passes. */
function passed(error: unknown): never {
  if (error instanceof FileError && error.kind === "refused") throw new ShareError(error.code, error.message, 400);
  if (error instanceof FileError && error.kind === "not_found") throw notFound();
  throw error;
}

/** Reads the archive; its own refusals pass, anything else is reworded (use.ts quietly). */
async function archiveStep<T>(step: () => Promise<T>): Promise<T> {
  return quietly(() => step().catch(passed));
}

/** A synchronous archive step, its refusals passed as archiveStep passes them. */
function plainly<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    return passed(error);
  }
}

/**
 * Route middleware of /api/fs/archive/meta and /list, before their guard: a path under `/@s/` is a
 * share's, answered here without an account; any other path goes on to the file side.
 */
export function sharedArchives(kind: "meta" | "list"): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const body = c.req.header("Content-Type")?.includes("json") ? await c.req.json().catch(() => null) : null;
    const shared = body && typeof body === "object" ? sharePathOf(text(body.path)) : null;
    if (!shared) return next();
    const open = await openShare(c, shared.id, text(body.password));
    const zip = await sharedZip(open, shared.rest);
    const { directory, root } = await archiveStep(() => readTree(open.tree, zip.path, c.req.raw.signal));
    const state = open.state;
    if (kind === "list") {
      const { all, page } = plainly(() =>
        archivePage(root, text(body.inner_path) || "/", integer(body.page, 1), integer(body.per_page, 0)),
      );
      return ok(c, { content: page.map((node) => wireObject(node, state)), total: all.length });
    }
    const sign = open.share.codeHash === "" ? "" : `?sign=${await shareSign(state, open.share, zip.rest)}`;
    return ok(c, {
      comment: directory.comment,
      encrypted: directory.entries.some((entry) => entry.encrypted),
      content: root.children.map((child) => wireTree(child, state)),
      sort: {
        order_by: open.share.orderBy,
        order_direction: open.share.orderDirection,
        extract_folder: open.share.extractFolder,
      },
      // No code in it (D14.3): the share's sign of the ZIP, as fs/get's raw_url carries.
      raw_url: `${apiUrl(c, state.settings.siteUrl)}/sad/${encodeURIComponent(open.share.id)}${escapePath(zip.rest)}${sign}`,
      sign: "",
    });
  };
}

/** `GET|HEAD /sad/<id>/<path>?inner=&pass=&pwd=|sign=`: one entry of a shared ZIP; refusals in plain text. */
export async function shareArchiveDownload(c: Context<AppEnv>): Promise<Response> {
  const raw = new URL(c.req.url).pathname.slice("/sad".length);
  try {
    return await deliverEntry(c, raw);
  } catch (error) {
    if (error instanceof ShareError) return refusal(error.status, error.message);
    throw error;
  }
}

/**
 * `/ae/<id>/<path>` that no storage serves (archive/download.ts): the web UI's link to an entry of
 * a shared ZIP. Null when `<id>` names no share, so the path stays the file side's.
 */
export async function uiShareEntry(c: Context<AppEnv>, raw: string): Promise<Response | null> {
  try {
    return await deliverEntry(c, raw);
  } catch (error) {
    if (error instanceof ShareError && (error.message === SHARE_GONE || error.message === INVALID_SHARE_ID))
      return null;
    if (error instanceof ShareError) return refusal(error.status, error.message);
    throw error;
  }
}

/** `raw` is `/<id>/<path>`, percent-encoded as the link carries it. */
async function deliverEntry(c: Context<AppEnv>, raw: string): Promise<Response> {
  const url = new URL(c.req.url);
  const trimmed = raw.slice(1);
  const cut = trimmed.indexOf("/");
  const id = decodeDownloadPath(cut < 0 ? trimmed : trimmed.slice(0, cut)).slice(1);
  const rest = cut < 0 ? "/" : decodeDownloadPath(trimmed.slice(cut));
  const open = await openShare(c, id, url.searchParams.get("pwd") ?? "", {
    rest,
    value: url.searchParams.get("sign") ?? "",
  });
  const zip = await sharedZip(open, rest);
  const entry = () =>
    archiveStep(() =>
      streamEntry(
        c.req.raw,
        open.tree,
        zip.path,
        url.searchParams.get("inner") ?? "/",
        url.searchParams.get("pass") ?? "",
      ),
    );
  if (c.req.method === "HEAD") return entry();
  // An entry is a download of the share: counted before the upstream is asked, given back when it fails (D14.5).
  if (!(await countDownload(c.var.db, open.share.id))) throw new ShareError(500, SHARE_INVALID, 410);
  try {
    const response = await entry();
    if (response.status >= 400) await uncountDownload(c.var.db, open.share.id);
    return response;
  } catch (error) {
    await uncountDownload(c.var.db, open.share.id);
    throw error;
  }
}
