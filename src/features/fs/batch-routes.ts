// The file API's batch operations (AList v3.58.0 server/handles/fsbatch.go:155, :215, :25,
// fsmanage.go:331): /api/fs/batch_rename, /api/fs/regex_rename, /api/fs/recursive_move and
// /api/fs/remove_empty_directory. Each name is checked as a single rename, move or remove would
// check it, and a batch that stops part-way says which names were done (docs/decisions.md D8.8).
import type { Context } from "hono";
import * as z from "zod/mini";
import { planned } from "../../auth/guard.ts";
import type { AppEnv } from "../../http/context.ts";
import { envelope, ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import type { Router } from "../../http/router.ts";
import type { FileWrites } from "./hooks.ts";
import {
  ACROSS_STORAGES_MOVE,
  FILES_INTO_ITSELF,
  movedCount,
  nameExists,
  regexpInvalid,
  tooManyWalked,
} from "./messages.ts";
import type { MountTree } from "./mounts.ts";
import { need } from "./operations.ts";
import { baseName, joinName, parentOf } from "./path.ts";
import {
  anchoredBy,
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
import { eachName, guess, itemsGuess, PasswordField, PathField, treeFor, writeRoute } from "./writes.ts";

/** Most entries a recursive walk (recursive_move, remove_empty_directory) visits in one request. */
const MAX_WALK_ENTRIES = 1000;

const batchRename = writeRoute(
  "/api/fs/batch_rename",
  z.object({
    src_dir: PathField,
    rename_objects: z
      .array(z.object({ src_name: z.string().check(z.maxLength(1024)), new_name: z.string().check(z.maxLength(1024)) }))
      .check(z.maxLength(1000)),
    password: PasswordField,
  }),
  (b) =>
    itemsGuess(
      b.src_dir,
      b.rename_objects.map((o) => o.src_name),
      true,
    ),
);
const regexRename = writeRoute(
  "/api/fs/regex_rename",
  z.object({
    src_dir: PathField,
    src_name_regex: z.string().check(z.maxLength(1024)),
    new_name_regex: z.string().check(z.maxLength(1024)),
    password: PasswordField,
  }),
  (b) => itemsGuess(b.src_dir, [], true),
);
const recursiveMove = writeRoute(
  "/api/fs/recursive_move",
  z.object({
    src_dir: PathField,
    dst_dir: PathField,
    conflict_policy: z._default(z.enum(["cancel", "overwrite", "skip"]), "cancel"),
    password: PasswordField,
  }),
  (b) => guess(b.src_dir, b.dst_dir),
);
const removeEmpty = writeRoute(
  "/api/fs/remove_empty_directory",
  z.object({ src_dir: PathField, password: PasswordField }),
  (b) => guess(b.src_dir),
);

/** Go's replacement template in JavaScript's: `${1}` → `$1`, `${name}` → `$<name>`, `$$` stays. */
function goTemplate(template: string): string {
  return template.replace(
    /\$\$|\$\{(\w+)\}|\$([A-Za-z_]\w*)/g,
    (all, braced: string | undefined, bare: string | undefined) => {
      const name = braced ?? bare;
      if (name === undefined) return all;
      return /^\d+$/.test(name) ? `$${name}` : `$<${name}>`;
    },
  );
}

async function walkFiles(tree: MountTree, dir: string): Promise<{ files: string[]; folders: string[] }> {
  const files: string[] = [];
  const folders: string[] = [];
  const queue = [dir];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const entry of await tree.list(current)) {
      if (files.length + folders.length >= MAX_WALK_ENTRIES)
        throw new ApiError(500, tooManyWalked(dir, MAX_WALK_ENTRIES));
      const path = joinName(current, entry.name);
      if (entry.isDir) {
        folders.push(path);
        queue.push(path);
      } else files.push(path);
    }
  }
  return { files, folders };
}

/** Renames `pairs` ([from, to] names) inside folder `src`, one at a time. */
async function renameIn(
  c: Context<AppEnv>,
  writes: FileWrites,
  state: FsState,
  src: string,
  pairs: [string, string][],
  password: string,
) {
  const viewer = viewerOf(c.var.caller);
  requireWritable(viewer, state, src, src, Permission.RENAME, password);
  const tree = treeFor(c, state, viewer, src, password);
  const log = writes.log(c.var.db, state);
  await eachName(
    pairs.map(([from]) => from),
    "renamed",
    async (from) => {
      const to = pairs.find(([name]) => name === from)![1];
      requireName(from);
      requireName(to);
      const path = joinName(src, from);
      requireRenamable(viewer, state, path, password);
      requireReach(viewer, state, joinName(src, to));
      if (to !== from) requireNothingHidden(viewer, state, path, joinName(src, to));
      requireMovable(viewer, path, await tree.mountsAt(path), "rename");
      const mounted = await tree.mount(path);
      await need(mounted, "rename")(mounted.actualPath, to);
      log.moved(path, joinName(src, to));
    },
  ).finally(() => log.flush());
}

/** The empty folders below `src` (deepest first) that may be removed: none holding a file or a kept folder. */
async function emptyFolders(c: Context<AppEnv>, state: FsState, src: string, password: string) {
  const viewer = viewerOf(c.var.caller);
  requireWritable(viewer, state, src, src, Permission.REMOVE, password);
  requireSubtree(viewer, state, src, password);
  const tree = treeFor(c, state, viewer, src, password);
  const { files, folders } = await walkFiles(tree, src);
  // A folder that may not be removed (a mount point, a scope root) stays, and so do those above it.
  const kept: string[] = [];
  for (const folder of folders)
    if (anchoredBy(viewer, folder, await tree.mountsAt(folder), "remove")) kept.push(folder);
  // Deepest first: a folder whose folders were all empty is empty once they are gone.
  const holding = new Set<string>(kept);
  for (const file of [...files, ...kept])
    for (let dir = parentOf(file); dir !== src && dir !== "/"; dir = parentOf(dir)) holding.add(dir);
  const empty = folders
    .filter((folder) => !holding.has(folder))
    .sort((a, b) => b.split("/").length - a.split("/").length);
  return { tree, empty };
}

export function registerFsBatchRoutes(app: Router, writes: FileWrites) {
  app.openapi(batchRename.route, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, batchRename.state);
    const src = fullPathOf(viewerOf(c.var.caller), body.src_dir);
    const pairs = body.rename_objects
      .filter((o) => o.src_name !== "" && o.new_name !== "")
      .map((o): [string, string] => [o.src_name, o.new_name]);
    await renameIn(c, writes, state, src, pairs, body.password);
    return ok(c, null);
  });

  app.openapi(regexRename.route, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, regexRename.state);
    const src = fullPathOf(viewerOf(c.var.caller), body.src_dir);
    let pattern: RegExp;
    try {
      pattern = new RegExp(body.src_name_regex);
    } catch (error) {
      throw new ApiError(400, regexpInvalid(error));
    }
    const template = goTemplate(body.new_name_regex);
    const entries = await treeFor(c, state, viewerOf(c.var.caller), src, body.password).list(src);
    const global = new RegExp(pattern.source, `${pattern.flags}g`);
    const pairs = entries
      .filter((entry) => pattern.test(entry.name))
      .map((entry): [string, string] => [entry.name, entry.name.replace(global, template)]);
    await renameIn(
      c,
      writes,
      state,
      src,
      pairs.filter(([from, to]) => from !== to),
      body.password,
    );
    return ok(c, null);
  });

  app.openapi(recursiveMove.route, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, recursiveMove.state);
    const viewer = viewerOf(c.var.caller);
    const src = fullPathOf(viewer, body.src_dir);
    const dst = fullPathOf(viewer, body.dst_dir);
    if (dst === src || dst.startsWith(`${src}/`)) throw new ApiError(400, FILES_INTO_ITSELF);
    requireWritable(viewer, state, src, src, Permission.MOVE, body.password);
    requireWritable(viewer, state, dst, dst, Permission.WRITE, body.password, true);
    requireSubtree(viewer, state, src, body.password);
    requireNothingHidden(viewer, state, src, dst);
    const tree = treeFor(c, state, viewer, src, body.password);
    const target = await tree.mount(dst);
    const { files } = await walkFiles(tree, src);
    const existing = new Set((await tree.list(dst)).map((entry) => entry.name));
    if (body.conflict_policy === "cancel") {
      const clash = files.find((file) => existing.has(baseName(file)));
      if (clash) throw new ApiError(403, nameExists(baseName(clash)));
    }
    const moving = files.filter((file) => body.conflict_policy !== "skip" || !existing.has(baseName(file)));
    const log = writes.log(c.var.db, state);
    await eachName(moving, "moved", async (file) => {
      const source = await tree.mount(file);
      if (source.storage.id !== target.storage.id) throw new ApiError(500, ACROSS_STORAGES_MOVE);
      await need(source, "move")(source.actualPath, target.actualPath);
      log.moved(file, joinName(dst, baseName(file)));
    }).finally(() => log.flush());
    return envelope(c, 200, movedCount(moving.length), null);
  });

  app.openapi(removeEmpty.route, async (c) => {
    const body = c.req.valid("json");
    const state = await planned(c, removeEmpty.state);
    const src = fullPathOf(viewerOf(c.var.caller), body.src_dir);
    const { tree, empty } = await emptyFolders(c, state, src, body.password);
    const log = writes.log(c.var.db, state);
    await eachName(empty, "deleted", async (folder) => {
      const mounted = await tree.mount(folder);
      await need(mounted, "remove")(mounted.actualPath);
      log.removed(folder);
    }).finally(() => log.flush());
    return ok(c, null);
  });
}
