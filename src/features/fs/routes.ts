// The read side of the file API, AList-exact on the wire (AList v3.58.0 server/handles/fsread.go,
// src/features/search/ serves search): list, get, dirs, other. The layout of src/features/fs/ is in
// its README.md: the decisions are rules.ts, the texts messages.ts, the queries store.ts. Each
// request is one database round trip (the caller, the tree, the metas and the settings, read by
// the guard with the route's plan, `statePlan`), then the upstream calls of the storage it lands on.
import * as z from "zod/mini";
import { redirectable } from "../../drivers/types.ts";
import { createRoute } from "../../http/openapi.ts";
import type { Context } from "hono";
import { isAdmin, planned, reading, signedIn } from "../../auth/guard.ts";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { apiUrl } from "../../http/origin.ts";
import { ApiError, FileError } from "../../http/errors.ts";
import { fromJson } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { FORCE_ROOT_REFUSED, NOT_IMPLEMENTED } from "./messages.ts";
import { fileFailure, MountTree } from "./mounts.ts";
import { baseName, escapePath, joinBasePath, joinName, parentOf } from "./path.ts";
import {
  fullPathOf,
  fullPathOfAdmin,
  hidePatterns,
  isHidden,
  listingPage,
  mayWrite,
  readmeThrough,
  requireAccess,
  requireRefreshAllowed,
  signFor,
  signRequired,
  targetNeedsSign,
  throughAlias,
  viewerOf,
  visibleEntries,
  type MetaRow,
} from "./rules.ts";
import type { FsState, TreeNeeds } from "./state.ts";
import { statePlan } from "./store.ts";
import { getObjectFields, listItem, rfc3339 } from "./wire.ts";

const PathField = z
  ._default(z.string().check(z.maxLength(4096)), "")
  .openapi({ description: "A path in the caller's view (joined to its base path)", example: "/" });
const PasswordField = z
  ._default(z.string().check(z.maxLength(1024)), "")
  .openapi({ description: "The meta password of the folder, if it has one" });

const ListBody = z.object({
  path: PathField,
  password: PasswordField,
  page: z._default(z.number().check(z.int(), z.gte(0), z.lte(1_000_000_000)), 1),
  per_page: z
    ._default(z.number().check(z.int(), z.gte(-1_000_000_000), z.lte(1_000_000_000)), 0)
    .openapi({ description: "0 or below: 200; at most 500 (AList v3.58)" }),
  refresh: z
    ._default(z.boolean(), false)
    .openapi({ description: "Gatehouse keeps no listing cache; needs write permission as in AList" }),
});

/** Whether the storage under `path` offers HTTP Direct (its option on); false where nothing is mounted. */
async function directUploadAt(tree: MountTree, path: string): Promise<boolean> {
  try {
    return (await tree.mount(path)).backend.directUpload !== undefined;
  } catch {
    return false;
  }
}

const GetBody = z.object({ path: PathField, password: PasswordField });
const DirsBody = z.object({
  path: PathField,
  password: PasswordField,
  force_root: z
    ._default(z.boolean(), false)
    .openapi({ description: "Admins only: the path is a full path, not joined to the base path" }),
});
const OtherBody = z.object({
  path: PathField,
  password: PasswordField,
  method: z._default(z.string().check(z.maxLength(256)), ""),
  data: z.optional(z.unknown()),
});

// Each route's file-side state, read in the guard's batch (one round trip): the paths it resolves.
const listState = fromJson(ListBody, (db, body) => statePlan(db, folderNeeds(body.path)));
const getState = fromJson(GetBody, (db, body) => statePlan(db, objectNeeds(body.path)));
const dirsState = fromJson(DirsBody, (db, body) => statePlan(db, folderNeeds(body.path)));
const otherState = fromJson(OtherBody, (db, body) => statePlan(db, { paths: guessedPaths(body.path), folders: [] }));

const list = createRoute({
  method: "post",
  path: "/api/fs/list",
  ...reading(signedIn, listState),
  request: { body: jsonBody(ListBody) },
});

const get = createRoute({
  method: "post",
  path: "/api/fs/get",
  ...reading(signedIn, getState),
  request: { body: jsonBody(GetBody) },
});

const dirs = createRoute({
  method: "post",
  path: "/api/fs/dirs",
  ...reading(signedIn, dirsState),
  request: { body: jsonBody(DirsBody) },
});

const other = createRoute({
  method: "post",
  path: "/api/fs/other",
  ...reading(signedIn, otherState),
  request: { body: jsonBody(OtherBody) },
});

/** The full path a raw request path names for a caller whose base path is `/`; none when it climbs. */
function guessedPaths(raw: unknown): string[] {
  if (typeof raw !== "string") return ["/"];
  const path = joinBasePath("/", raw);
  return path === null ? [] : [path];
}

/** A listing: the folder's storage and its virtual folders. */
const folderNeeds = (raw: unknown): TreeNeeds => ({ paths: guessedPaths(raw), folders: guessedPaths(raw) });

/** One object: its storage, and the virtual folders of its parent (a mount point is one of them); files list the parent too. */
const objectNeeds = (raw: unknown): TreeNeeds => {
  const paths = guessedPaths(raw);
  return { paths, folders: paths.filter((path) => path !== "/").map(parentOf) };
};

/**
 * `raw_url` of a file (AList v3.58.0 server/handles/fsread.go:375-416): the down proxy, this
 * server's /p, or the upstream's own URL; `required`: its sign is needed.
 */
async function rawUrl(
  c: Context<AppEnv>,
  state: FsState,
  tree: MountTree,
  path: string,
  required: boolean,
): Promise<string> {
  const mounted = await tree.mount(path);
  const { storage, driver } = mounted;
  const proxied = driver.config.only_proxy || driver.config.only_local || storage.webProxy;
  if (proxied && storage.downProxyUrl !== "") {
    const base = storage.downProxyUrl.split("\n")[0]!.trim().replace(/\/+$/, "");
    return `${base}${escapePath(path)}${storage.downProxySign ? `?sign=${await signFor(state, path, storage, true)}` : ""}`;
  }
  const proxyUrl = async () => {
    const sign = await signFor(state, path, storage, required);
    return `${apiUrl(c, state.settings.siteUrl)}/p${escapePath(path)}${sign ? `?sign=${sign}` : ""}`;
  };
  if (proxied) return proxyUrl();
  const link = await tree.link(path, { redirect: true });
  return redirectable(link) ? link.url : proxyUrl();
}

export function registerFsReadRoutes(app: Router) {
  app.openapi(list, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const state = await planned(c, listState);
    const path = fullPathOf(viewer, body.path);
    const meta = requireAccess(viewer, state, path, body.password);
    const write = mayWrite(viewer, meta, path);
    requireRefreshAllowed(body.refresh, write);

    const alias = throughAlias(viewer, state, path, body.password);
    const tree = new MountTree(state.tree, c.var.db, c.req.raw.signal).guardedBy(alias);
    const entries = visibleEntries(viewer, meta, path, await tree.list(path));
    const { page, perPage } = listingPage(body.page, body.per_page);
    const storage = await tree.storageAt(path);
    const slice = entries.slice((page - 1) * perPage, page * perPage);
    const required = signRequired(state, path, storage);
    // A hidden name (shown to see-hides holders) is downloaded with a sign only (rules.ts, signRequired).
    const hides = hidePatterns(meta, path);
    const content = await Promise.all(
      slice.map(async (entry) => {
        // Through an alias, a file whose target a meta password guards needs a sign too.
        const signed =
          required ||
          isHidden(hides, entry.name) ||
          targetNeedsSign(
            state,
            alias.reached.map((target) => joinName(target, entry.name)),
          );
        return listItem(
          entry,
          entry.isDir ? "" : await signFor(state, joinName(path, entry.name), storage, signed),
          state.settings,
        );
      }),
    );
    return ok(c, {
      content: content.length > 0 ? content : null,
      total: entries.length,
      filtered_total: entries.length,
      page,
      per_page: perPage,
      has_more: page * perPage < entries.length,
      pages_total: Math.ceil(entries.length / perPage),
      ...readmeThrough(state, meta, path, alias.reached),
      write,
      provider: storage?.driver ?? "unknown",
      // HTTP Direct only where the caller could upload (OpenList server/handles/fsread.go:111-116),
      // into a storage: a virtual folder (the root, most often) has none, and asking mount would
      // build its refusal, an Error and its stack, on every listing.
      ...(write && storage && (await directUploadAt(tree, path)) ? { direct_upload_tools: ["HttpDirect"] } : {}),
    });
  });

  app.openapi(get, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const state = await planned(c, getState);
    const path = fullPathOf(viewer, body.path);
    const meta = requireAccess(viewer, state, path, body.password);
    const alias = throughAlias(viewer, state, path, body.password);
    const tree = new MountTree(state.tree, c.var.db, c.req.raw.signal).guardedBy(alias);
    const object = await tree.get(path);
    const storage = await tree.storageAt(path);
    const required = signRequired(state, path, storage) || targetNeedsSign(state, alias.reached);
    const texts = readmeThrough(state, meta, path, alias.reached);
    const sign = object.isDir ? "" : await signFor(state, path, storage, required);
    let raw = "";
    let related: ReturnType<typeof getObjectFields>[] | null = null;
    if (!object.isDir) {
      try {
        raw = await rawUrl(c, state, tree, path, required);
      } catch (error) {
        throw fileFailure(error, "");
      }
      related = await relatedFiles(state, tree, meta, path);
    }
    return ok(c, {
      ...getObjectFields(object, sign, state.settings),
      raw_url: raw,
      ...texts,
      provider: storage?.driver ?? "unknown",
      related,
    });
  });

  app.openapi(dirs, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const state = await planned(c, dirsState);
    if (body.force_root && !isAdmin(c.var.caller)) throw new ApiError(403, FORCE_ROOT_REFUSED);
    const path = body.force_root ? fullPathOfAdmin(body.path) : fullPathOf(viewer, body.path);
    const meta = requireAccess(viewer, state, path, body.password);
    const tree = new MountTree(state.tree, c.var.db, c.req.raw.signal).guardedBy(
      throughAlias(viewer, state, path, body.password),
    );
    const folders = visibleEntries(viewer, meta, path, await tree.list(path)).filter((entry) => entry.isDir);
    return ok(
      c,
      folders.length > 0 ? folders.map((entry) => ({ name: entry.name, modified: rfc3339(entry.modified) })) : null,
    );
  });

  app.openapi(other, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const state = await planned(c, otherState);
    const path = fullPathOf(viewer, body.path);
    requireAccess(viewer, state, path, body.password);
    const mounted = await new MountTree(state.tree, c.var.db, c.req.raw.signal).mount(path);
    if (!mounted.backend.other) throw new FileError("not_implemented", NOT_IMPLEMENTED);
    try {
      return ok(
        c,
        (await mounted.backend.other(mounted.actualPath, body.method, body.data)) as Record<string, unknown> | null,
      );
    } catch (error) {
      throw fileFailure(error, "");
    }
  });
}

/**
 * Files beside `path` whose names start with its name without the extension (subtitles of a
 * video): one listing of the parent; a failure there gives null, as in AList.
 */
async function relatedFiles(state: FsState, tree: MountTree, meta: MetaRow | undefined, path: string) {
  const name = baseName(path);
  const dot = name.lastIndexOf(".");
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const parent = parentOf(path);
  try {
    const hides = hidePatterns(meta, parent);
    const found = (await tree.list(parent)).filter(
      (entry) => entry.name !== name && entry.name.startsWith(stem) && !isHidden(hides, entry.name),
    );
    return found.length > 0 ? found.map((entry) => getObjectFields(entry, "", state.settings)) : null;
  } catch {
    return null;
  }
}
