// Archives, AList-exact on the wire (AList v3.58.0 server/handles/archive.go): archive/meta (the
// tree of a ZIP), archive/list (one folder of it), archive/decompress (into a folder of a storage),
// read from the storage with range reads, never downloaded whole (docs/decisions.md D13). Access
// is that of reading the archive file itself, plus AList's read-archives bit; decompress also
// needs what fs/put needs at every path it writes, which AList did not check (D13.6).
import * as z from "zod/mini";
import type { Context } from "hono";
import { planned, reading, signedIn } from "../../auth/guard.ts";
import type { AppEnv } from "../../http/context.ts";
import { fromJson } from "../../http/params.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { PERMISSION_DENIED } from "../fs/messages.ts";
import { MountTree } from "../fs/mounts.ts";
import { baseName, escapePath, joinBasePath, joinName, parentOf } from "../fs/path.ts";
import { apiUrl } from "../../http/origin.ts";
import {
  can,
  fullPathOf,
  Permission,
  requireAccess,
  requireName,
  requireWritable,
  signRequired,
  throughAlias,
  viewerOf,
  type Viewer,
} from "../fs/rules.ts";
import { signPath } from "../fs/sign.ts";
import type { FsState, TreeNeeds } from "../fs/state.ts";
import { statePlan } from "../fs/store.ts";
import { extractSteps, planExtractions } from "./extract.ts";
import { decompressTaskName } from "./messages.ts";
import { archivePage, readTree, wireObject, wireTree } from "./read.ts";
import { requireExtractable, requireZipName } from "./rules.ts";

const PathField = z
  ._default(z.string().check(z.maxLength(4096)), "")
  .openapi({ description: "The archive's path in the caller's view (joined to its base path)" });
const PasswordField = z
  ._default(z.string().check(z.maxLength(1024)), "")
  .openapi({ description: "The meta password of the archive's folder, if it has one" });
const ArchivePassField = z
  ._default(z.string().check(z.maxLength(1024)), "")
  .openapi({ description: "The archive's own password (ZipCrypto)" });

const MetaBody = z.object({
  path: PathField,
  password: PasswordField,
  refresh: z._default(z.boolean(), false).openapi({ description: "Accepted; Gatehouse keeps no cache" }),
  archive_pass: ArchivePassField,
});

const ListBody = z.object({
  ...MetaBody.shape,
  inner_path: z
    ._default(z.string().check(z.maxLength(4096)), "/")
    .openapi({ description: "A folder inside the archive; / is its root" }),
  page: z._default(z.number().check(z.int(), z.gte(-1_000_000_000), z.lte(1_000_000_000)), 1),
  per_page: z
    ._default(z.number().check(z.int(), z.gte(-1_000_000_000), z.lte(1_000_000_000)), 0)
    .openapi({ description: "Below 1: everything" }),
});

const DecompressBody = z.object({
  src_dir: PathField,
  dst_dir: PathField,
  password: z._default(z.string().check(z.maxLength(1024)), "").openapi({
    description:
      "The meta password of the archives' folders and of every folder the extraction writes into, if they have one (Gatehouse's; AList's body has none)",
  }),
  name: z
    .union([z.string().check(z.maxLength(1024)), z.array(z.string().check(z.maxLength(1024))).check(z.maxLength(100))])
    .openapi({ description: "The archive's name in src_dir, or several" }),
  archive_pass: ArchivePassField,
  inner_path: z
    ._default(z.string().check(z.maxLength(4096)), "/")
    .openapi({ description: "What to extract: / for everything, else a folder or file inside" }),
  cache_full: z._default(z.boolean(), false).openapi({ description: "Accepted; nothing is staged" }),
  put_into_new_dir: z
    ._default(z.boolean(), false)
    .openapi({ description: "Extract into a new folder named after the archive (without .zip)" }),
  overwrite: z._default(z.boolean(), true).openapi({ description: "Accepted; files are replaced, as in AList v3.58" }),
});

/** The full path a raw request path names for a caller whose base path is `/`, and its parent's virtual folders. */
function archiveNeeds(raw: unknown, names: unknown = undefined): TreeNeeds {
  if (typeof raw !== "string") return { paths: [], folders: [] };
  const path = joinBasePath("/", raw);
  if (path === null) return { paths: [], folders: [] };
  if (names === undefined) return { paths: [path], folders: path === "/" ? [] : [parentOf(path)] };
  const list = (Array.isArray(names) ? names : [names]).filter((name): name is string => typeof name === "string");
  return { paths: [path, ...list.map((name) => joinName(path, name))], folders: [path] };
}

// Each route's file-side state, read in the guard's batch (one round trip). A path under `/@s/` is
// a share's ZIP, answered before the guard by share browsing (features/shares/routes.ts).
const metaState = fromJson(MetaBody, (db, body) => statePlan(db, archiveNeeds(body.path)));
const listState = fromJson(ListBody, (db, body) => statePlan(db, archiveNeeds(body.path)));
const decompressState = fromJson(DecompressBody, (db, body) => {
  const source = archiveNeeds(body.src_dir, body.name);
  const target = archiveNeeds(body.dst_dir);
  return statePlan(db, {
    paths: [...source.paths, ...target.paths],
    folders: [...source.folders, ...target.folders],
  });
});

const meta = createRoute({
  method: "post",
  path: "/api/fs/archive/meta",
  ...reading(signedIn, metaState),
  request: { body: jsonBody(MetaBody) },
});

const list = createRoute({
  method: "post",
  path: "/api/fs/archive/list",
  ...reading(signedIn, listState),
  request: { body: jsonBody(ListBody) },
});

const decompress = createRoute({
  method: "post",
  path: "/api/fs/archive/decompress",
  ...reading(signedIn, decompressState),
  request: { body: jsonBody(DecompressBody) },
});

/** The archive sign: the download sign's format, keyed with `<token>-archive` (AList v3.58.0 internal/sign/archive.go:15-41). */
const archiveSign = (state: FsState, path: string) =>
  signPath(`${state.settings.token}-archive`, path, state.settings.linkExpirationHours);

/** Read access to the archive at `raw`: the fs read rules, then the read-archives bit. Its full path and tree. */
function readable(c: Context<AppEnv>, state: FsState, viewer: Viewer, raw: string, password: string) {
  const path = fullPathOf(viewer, raw);
  if (!can(viewer.grants, path, Permission.READ_ARCHIVES)) throw new ApiError(403, PERMISSION_DENIED);
  requireAccess(viewer, state, path, password);
  requireZipName(baseName(path));
  const tree = new MountTree(state.tree, c.var.db, c.req.raw.signal).guardedBy(
    throughAlias(viewer, state, path, password),
  );
  return { path, tree };
}

export function registerArchiveRoutes(app: Router) {
  app.openapi(meta, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, metaState);
    const { path, tree } = readable(c, state, viewerOf(c.var.caller), body.path, body.password);
    const { directory, root } = await readTree(tree, path, c.req.raw.signal);
    const storage = await tree.storageAt(path);
    return ok(c, {
      comment: directory.comment,
      encrypted: directory.entries.some((entry) => entry.encrypted),
      content: root.children.map((child) => wireTree(child, state)),
      sort: {
        order_by: storage?.orderBy ?? "",
        order_direction: storage?.orderDirection ?? "",
        extract_folder: storage?.extractFolder ?? "",
      },
      raw_url: `${apiUrl(c, state.settings.siteUrl)}/ae${escapePath(path)}`,
      sign: signRequired(state, path, storage) ? await archiveSign(state, path) : "",
    });
  });

  app.openapi(list, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, listState);
    const { path, tree } = readable(c, state, viewerOf(c.var.caller), body.path, body.password);
    const { root } = await readTree(tree, path, c.req.raw.signal);
    const { all, page } = archivePage(root, body.inner_path, body.page, body.per_page);
    return ok(c, { content: page.map((node) => wireObject(node, state)), total: all.length });
  });

  app.openapi(decompress, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const state = await planned(c, decompressState);
    const srcDir = fullPathOf(viewer, body.src_dir);
    const dstDir = fullPathOf(viewer, body.dst_dir);
    const names = Array.isArray(body.name) ? body.name : [body.name];
    for (const name of names) requireName(name);
    const sources = names.map((name) => joinName(srcDir, name));
    for (const source of sources) {
      if (!can(viewer.grants, source, Permission.DECOMPRESS)) throw new ApiError(403, PERMISSION_DENIED);
      requireAccess(viewer, state, source, body.password);
      requireZipName(baseName(source));
    }
    // The destination itself first, before any archive is read; every path below it after planning.
    requireWritable(viewer, state, dstDir, dstDir, Permission.WRITE, body.password, true);
    const treeAt = (dir: string) =>
      new MountTree(state.tree, c.var.db, c.req.raw.signal).guardedBy(throughAlias(viewer, state, dir, body.password));
    const [sourceTree, targetTree] = [treeAt(srcDir), treeAt(dstDir)];
    let started = new Date().toISOString();
    const plans = await planExtractions(
      sourceTree,
      sources.map((archive) => ({
        archive,
        innerPath: body.inner_path,
        destDir: dstDir,
        password: body.archive_pass,
        intoNewFolder: body.put_into_new_dir,
      })),
    );
    // Every path of every archive is checked as fs/put checks it before the first write (D13.6).
    requireExtractable(viewer, state, plans, body.password);
    const tasks = [];
    for (const [i, plan] of plans.entries()) {
      await extractSteps(targetTree, plan, body.archive_pass);
      const ended = new Date().toISOString();
      tasks.push({
        id: crypto.randomUUID(),
        name: decompressTaskName(sources[i]!, body.inner_path, dstDir),
        creator: c.var.caller.user.username,
        creator_role: c.var.caller.user.roleIds,
        state: 2,
        status: "",
        progress: 100,
        start_time: started,
        end_time: ended,
        total_bytes: plan.bytes,
        error: "",
      });
      started = ended;
    }
    return ok(c, { task: tasks });
  });
}
