// The file API's changes in place (AList v3.58.0 server/handles/fsmanage.go): /api/fs/mkdir,
// /api/fs/rename, /api/fs/move, /api/fs/copy, /api/fs/remove and /api/fs/link, with
// docs/decisions.md D8's fixes: permissions are checked where the change happens (move and copy
// need write at the destination too), meta passwords guard writes as they guard reads, names are
// checked (D8.3), and a change that stops part-way says which names were done (D8.8). What changed
// goes to the FileWrites hook (hooks.ts), and so do the copies and moves between storages.
import type { Context } from "hono";
import * as z from "zod/mini";
import { isAdmin, planned } from "../../auth/guard.ts";
import { NOT_AN_ADMIN } from "../../auth/messages.ts";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import type { Router } from "../../http/router.ts";
import type { FileWrites } from "./hooks.ts";
import {
  EMPTY_NAMES,
  intoItself,
  nameExists,
  PERMISSION_DENIED,
  RELATIVE_PATH_REFUSED,
  STORAGE_ROOT_RENAME,
} from "./messages.ts";
import { fileFailure, MountTree } from "./mounts.ts";
import { acrossStorages, exists, makeDirs, need, removePath, transfer } from "./operations.ts";
import { baseName, joinBasePath, joinName, parentOf } from "./path.ts";
import {
  fullPathOf,
  Permission,
  requireMovable,
  requireName,
  requireNothingHidden,
  requireReach,
  requireRenamable,
  requireSubtree,
  requireWritable,
  viewerOf,
} from "./rules.ts";
import type { FsState } from "./state.ts";
import { eachName, guess, itemsGuess, NameList, PasswordField, PathField, treeFor, writeRoute } from "./writes.ts";

const mkdir = writeRoute("/api/fs/mkdir", z.object({ path: PathField, password: PasswordField }), (b) => guess(b.path));
const rename = writeRoute(
  "/api/fs/rename",
  z.object({
    path: PathField,
    name: z.string().check(z.maxLength(1024)),
    overwrite: z._default(z.boolean(), false),
    password: PasswordField,
  }),
  (b) => ({ ...guess(b.path), points: guess(b.path).paths.filter((path) => path !== "/") }),
);
const ItemsBody = z.object({
  src_dir: PathField,
  dst_dir: PathField,
  names: NameList,
  overwrite: z._default(z.boolean(), false),
  password: PasswordField,
});
const move = writeRoute("/api/fs/move", ItemsBody, (b) => itemsGuess(b.src_dir, b.names, true, b.dst_dir));
const copy = writeRoute("/api/fs/copy", ItemsBody, (b) => itemsGuess(b.src_dir, b.names, false, b.dst_dir));
const remove = writeRoute(
  "/api/fs/remove",
  z.object({ dir: PathField, names: NameList, password: PasswordField }),
  (b) => itemsGuess(b.dir, b.names, true),
);
const link = writeRoute("/api/fs/link", z.object({ path: PathField }), (b) => guess(b.path));

/**
 * Move or copy (AList v3.58.0 server/handles/fsmanage.go:84, :139): every check first, then name by
 * name, inside a storage at once and to another storage as a task; the tasks started.
 */
async function transferNames(
  c: Context<AppEnv>,
  writes: FileWrites,
  state: FsState,
  kind: "move" | "copy",
  body: z.output<typeof ItemsBody>,
): Promise<object[]> {
  if (body.names.length === 0) throw new ApiError(400, EMPTY_NAMES);
  body.names.forEach(requireName);
  const viewer = viewerOf(c.var.caller);
  const src = fullPathOf(viewer, body.src_dir);
  const dst = fullPathOf(viewer, body.dst_dir);
  requireWritable(viewer, state, src, src, kind === "move" ? Permission.MOVE : Permission.COPY, body.password);
  requireWritable(viewer, state, dst, dst, Permission.WRITE, body.password, true);
  for (const name of body.names) {
    const from = joinName(src, name);
    if (dst === from || dst.startsWith(`${from}/`)) throw new ApiError(400, intoItself(kind, name));
    requireSubtree(viewer, state, from, body.password);
    requireSubtree(viewer, state, joinName(dst, name), body.password);
    requireNothingHidden(viewer, state, from, joinName(dst, name));
  }
  const tree = treeFor(c, state, viewer, src, body.password);
  if (kind === "move")
    for (const name of body.names)
      requireMovable(viewer, joinName(src, name), await tree.mountsAt(joinName(src, name)), "move");
  if (!body.overwrite) {
    for (const name of body.names)
      if (await exists(tree, joinName(dst, name))) throw new ApiError(403, nameExists(name));
  }
  const started: object[] = [];
  const log = writes.log(c.var.db, state);
  // The names done before a failure are in the log too.
  await eachName(body.names, kind === "move" ? "moved" : "copied", async (name) => {
    const from = joinName(src, name);
    const across = await acrossStorages(tree, kind, from, dst);
    if (!across) {
      await transfer(tree, kind, from, dst);
      if (kind === "move") log.moved(from, joinName(dst, name));
      else log.copied(from, joinName(dst, name));
      return;
    }
    const request = { db: c.var.db, env: c.env, caller: c.var.caller, state };
    started.push(await writes.transfer(request, { kind, from, toDir: dst, name, ...across }));
  }).finally(() => log.flush());
  return started;
}

export function registerFsManageRoutes(app: Router, writes: FileWrites) {
  app.openapi(mkdir.route, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, mkdir.state);
    const viewer = viewerOf(c.var.caller);
    const path = fullPathOf(viewer, body.path);
    if (path === "/") throw new ApiError(403, PERMISSION_DENIED);
    requireWritable(viewer, state, parentOf(path), path, Permission.WRITE, body.password, true);
    await makeDirs(treeFor(c, state, viewer, path, body.password), path);
    const log = writes.log(c.var.db, state);
    log.added(path, true, 0);
    await log.flush();
    return ok(c, null);
  });

  app.openapi(rename.route, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, rename.state);
    const viewer = viewerOf(c.var.caller);
    const path = fullPathOf(viewer, body.path);
    requireName(body.name);
    requireRenamable(viewer, state, path, body.password);
    requireWritable(viewer, state, parentOf(path), path, Permission.RENAME, body.password);
    const target = joinName(parentOf(path), body.name);
    requireReach(viewer, state, target);
    if (target !== path) requireNothingHidden(viewer, state, path, target);
    const tree = treeFor(c, state, viewer, path, body.password);
    requireMovable(viewer, path, await tree.mountsAt(path), "rename");
    const mounted = await tree.mount(path);
    if (mounted.actualPath === "/") throw new ApiError(403, STORAGE_ROOT_RENAME);
    if (!body.overwrite && body.name !== baseName(path) && (await exists(tree, target)))
      throw new ApiError(403, nameExists(body.name));
    await need(mounted, "rename")(mounted.actualPath, body.name).catch((error: unknown) =>
      Promise.reject(fileFailure(error, "")),
    );
    const log = writes.log(c.var.db, state);
    log.moved(path, target);
    await log.flush();
    return ok(c, null);
  });

  app.openapi(move.route, async (c) => {
    const tasks = await transferNames(c, writes, await planned(c, move.state), "move", c.req.valid("json"));
    return ok(c, tasks.length > 0 ? { tasks } : null);
  });

  app.openapi(copy.route, async (c) => {
    const tasks = await transferNames(c, writes, await planned(c, copy.state), "copy", c.req.valid("json"));
    return ok(c, { tasks });
  });

  app.openapi(remove.route, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, remove.state);
    if (body.names.length === 0) throw new ApiError(400, EMPTY_NAMES);
    body.names.forEach(requireName);
    const viewer = viewerOf(c.var.caller);
    const dir = fullPathOf(viewer, body.dir);
    requireWritable(viewer, state, dir, dir, Permission.REMOVE, body.password);
    for (const name of body.names) requireSubtree(viewer, state, joinName(dir, name), body.password);
    const tree = treeFor(c, state, viewer, dir, body.password);
    for (const name of body.names)
      requireMovable(viewer, joinName(dir, name), await tree.mountsAt(joinName(dir, name)), "remove");
    const log = writes.log(c.var.db, state);
    await eachName(body.names, "deleted", async (name) => {
      await removePath(tree, joinName(dir, name));
      log.removed(joinName(dir, name));
    }).finally(() => log.flush());
    return ok(c, null);
  });

  app.openapi(link.route, async (c) => {
    const state = await planned(c, link.state);
    if (!isAdmin(c.var.caller)) throw new ApiError(403, NOT_AN_ADMIN);
    const path = joinBasePath("/", c.req.valid("json").path);
    if (path === null) throw new ApiError(403, RELATIVE_PATH_REFUSED);
    const found = await new MountTree(state.tree, c.var.db, c.req.raw.signal).link(path, { redirect: false });
    if ("source" in found) return ok(c, { url: "", header: null, Expiration: null, concurrency: 0, part_size: 0 });
    return ok(c, { url: found.url, header: found.headers ?? null, Expiration: null, concurrency: 0, part_size: 0 });
  });
}
