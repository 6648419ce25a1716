// The write side of the file API (AList v3.58.0 server/handles/fsmanage.go, fsbatch.go, fsup.go),
// AList's wire with docs/decisions.md D8's fixes: permissions are checked where the change happens
// (move and copy need write at the destination too), meta passwords guard writes as they guard
// reads, names are checked (docs/decisions.md D8.3), and a batch that stops part-way says which
// names were done (docs/decisions.md D8.8).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import type { Context } from "hono";
import { isAdmin } from "../../auth/guard.ts";
import { NOT_AN_ADMIN } from "../../auth/messages.ts";
import type { AppEnv } from "../../http/context.ts";
import { envelope, ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { emptyBody } from "../../lib/streams.ts";
import {
  ACROSS_STORAGES_MOVE,
  contentLengthInvalid,
  EMPTY_NAMES,
  FILE_EXISTS,
  FILE_PATH_NOT_ENCODED,
  FILES_INTO_ITSELF,
  intoItself,
  movedCount,
  nameExists,
  partlyDone,
  PERMISSION_DENIED,
  regexpInvalid,
  RELATIVE_PATH_REFUSED,
  STORAGE_ROOT_RENAME,
  tooManyWalked,
  uploadTaskName,
} from "./messages.ts";
import { fileFailure, MountTree } from "./mounts.ts";
import { acrossStorages, exists, makeDirs, need, putFile, removePath, transfer } from "./operations.ts";
import { transferTaskName, type TaskInfo } from "../tasks/rules.ts";
import { startTask } from "../tasks/start.ts";
import { baseName, hasRelativeSegment, isValidName, joinBasePath, joinName, parentOf } from "./path.ts";
import { fileFromMultipart } from "./multipart.ts";
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
  requireUploadable,
  requireWritable,
  throughAlias,
  viewerOf,
  type Viewer,
} from "./rules.ts";
import type { TreeNeeds } from "./state.ts";
import { fsRoute } from "./store.ts";
import { IndexChanges } from "../search/changes.ts";

const PathField = z.string().check(z.maxLength(4096));
const NameList = z.array(z.string().check(z.maxLength(1024))).check(z.maxLength(1000));
const PasswordField = z
  ._default(z.string().check(z.maxLength(1024)), "")
  .openapi({ description: "The meta password of the folder, when it has one" });

const guess = (...raws: unknown[]): TreeNeeds => {
  const paths = raws.flatMap((raw) =>
    typeof raw === "string" && !hasRelativeSegment(raw) ? [joinBasePath("/", raw) ?? "/"] : [],
  );
  return { paths, folders: [] };
};

/**
 * A request on `names` of folder `dir` (then `others`): the chains of each name too, and with
 * `folder` the folder's virtual folders, which say which names are mount points or hold one
 * (a move, remove or rename of those is refused): all in the request's one round trip.
 */
const itemsGuess = (dir: unknown, names: unknown, folder: boolean, ...others: unknown[]): TreeNeeds => {
  const needs = guess(dir, ...others);
  const full = typeof dir === "string" && !hasRelativeSegment(dir) ? joinBasePath("/", dir) : null;
  if (full === null || !Array.isArray(names)) return needs;
  const items = names
    .filter((name): name is string => typeof name === "string" && isValidName(name))
    .map((name) => joinName(full, name));
  return { paths: [...needs.paths, ...items], folders: folder ? [full] : [] };
};

function route<T extends z.ZodMiniObject>(
  path: string,
  summary: string,
  body: T,
  needs: (body: Record<string, unknown>) => TreeNeeds,
  data: z.ZodMiniType = z.null(),
) {
  return createRoute({
    method: "post",
    path,
    tags: ["fs"],
    summary,
    ...fsRoute(needs),
    request: { body: jsonBody(body) },
    responses: envelopeResponse(data, "Done"),
  });
}

const mkdir = route(
  "/api/fs/mkdir",
  "Create a folder and the missing folders above it",
  z.object({ path: PathField, password: PasswordField }),
  (b) => guess(b.path),
);
const rename = route(
  "/api/fs/rename",
  "Rename a file or folder in place",
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
const move = route("/api/fs/move", "Move names from one folder to another of the same storage", ItemsBody, (b) =>
  itemsGuess(b.src_dir, b.names, true, b.dst_dir),
);
const copy = route(
  "/api/fs/copy",
  "Copy names to another folder (within a storage; single files across storages)",
  ItemsBody,
  (b) => itemsGuess(b.src_dir, b.names, false, b.dst_dir),
  z.object({ tasks: z.array(z.unknown()) }),
);
const remove = route(
  "/api/fs/remove",
  "Delete names from a folder; a name that does not exist counts as deleted",
  z.object({ dir: PathField, names: NameList, password: PasswordField }),
  (b) => itemsGuess(b.dir, b.names, true),
);
const link = route(
  "/api/fs/link",
  "Admins: the upstream link of a file, credentials included (full path, not joined)",
  z.object({ path: PathField }),
  (b) => guess(b.path),
  z.record(z.string(), z.unknown()),
);

const put = createRoute({
  method: "put",
  path: "/api/fs/put",
  tags: ["fs"],
  summary: "Upload the request body as a file (File-Path header, percent-encoded); streamed to the storage",
  ...fsRoute(() => ({ paths: [], folders: [] })),
  request: {
    headers: z.object({
      "file-path": z.optional(z.string()).openapi({ description: "encodeURIComponent of the full target path" }),
      "content-length": z.optional(z.string()).openapi({ description: "Required: the file's size" }),
      overwrite: z.optional(z.string()).openapi({ description: "`false`: refuse when the file exists" }),
      "as-task": z.optional(z.string()).openapi({
        description: "`true`: the reply carries a finished task (the upload still completes within the request)",
      }),
      "last-modified": z.optional(z.string()).openapi({ description: "Unix epoch milliseconds" }),
      password: z.optional(z.string()),
    }),
    body: { content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } } },
  },
  responses: envelopeResponse(z.nullable(z.object({ task: z.record(z.string(), z.unknown()) })), "Uploaded"),
});

const form = createRoute({
  method: "put",
  path: "/api/fs/form",
  tags: ["fs"],
  summary:
    "Upload the `file` part of a multipart/form-data body (headers as /api/fs/put); streamed, so the file must be the form's last part",
  ...fsRoute(() => ({ paths: [], folders: [] })),
  // The multipart body is not declared: a declared form is parsed (held whole) before the handler.
  request: { headers: put.request.headers },
  responses: put.responses,
});

/** Runs `work` on each name in order; a failure part-way reports the names done before it. */
async function eachName(names: string[], verb: string, work: (name: string) => Promise<void>): Promise<void> {
  const done: string[] = [];
  for (const name of names) {
    try {
      await work(name);
    } catch (error) {
      const failure = fileFailure(error, "");
      if (done.length === 0 || !(failure instanceof ApiError)) throw failure;
      throw new ApiError(failure.code, partlyDone(failure.message, verb, done, names.slice(done.length)), { done });
    }
    done.push(name);
  }
}

/**
 * The mount tree a write works on. Through an Alias each target path is held to its own metas, as
 * for reads (rules.ts throughAlias): a copy or move out of an alias reads no protected target.
 */
export function treeFor(c: Context<AppEnv>, viewer: Viewer, path: string, password: string): MountTree {
  return new MountTree(c.var.fs.tree, c.var.db, c.req.raw.signal).guardedBy(
    throughAlias(viewer, c.var.fs, path, password),
  );
}

export function registerFsWriteRoutes(app: Router) {
  app.openapi(mkdir, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const path = fullPathOf(viewer, body.path);
    if (path === "/") throw new ApiError(403, PERMISSION_DENIED);
    requireWritable(viewer, c.var.fs, parentOf(path), path, Permission.WRITE, body.password, true);
    await makeDirs(treeFor(c, viewer, path, body.password), path);
    const index = new IndexChanges(c.var.db, c.var.fs);
    index.added(path, true, 0);
    await index.flush();
    return ok(c, null);
  });

  app.openapi(rename, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const path = fullPathOf(viewer, body.path);
    requireName(body.name);
    requireRenamable(viewer, c.var.fs, path, body.password);
    requireWritable(viewer, c.var.fs, parentOf(path), path, Permission.RENAME, body.password);
    const target = joinName(parentOf(path), body.name);
    requireReach(viewer, c.var.fs, target);
    if (target !== path) requireNothingHidden(viewer, c.var.fs, path, target);
    const tree = treeFor(c, viewer, path, body.password);
    requireMovable(viewer, path, await tree.mountsAt(path), "rename");
    const mounted = await tree.mount(path);
    if (mounted.actualPath === "/") throw new ApiError(403, STORAGE_ROOT_RENAME);
    if (!body.overwrite && body.name !== baseName(path) && (await exists(tree, target)))
      throw new ApiError(403, nameExists(body.name));
    await need(mounted, "rename")(mounted.actualPath, body.name).catch((error: unknown) =>
      Promise.reject(fileFailure(error, "")),
    );
    const index = new IndexChanges(c.var.db, c.var.fs);
    index.moved(path, target);
    await index.flush();
    return ok(c, null);
  });

  for (const [operation, bit, verb] of [
    [move, Permission.MOVE, "moved"],
    [copy, Permission.COPY, "copied"],
  ] as const) {
    app.openapi(operation as typeof move, async (c: Context<AppEnv>) => {
      // One handler for two routes of one body schema: the loop loses which route typed `c`.
      const body = (c.req as unknown as { valid(target: "json"): z.infer<typeof ItemsBody> }).valid("json");
      if (body.names.length === 0) throw new ApiError(400, EMPTY_NAMES);
      body.names.forEach(requireName);
      const viewer = viewerOf(c.var.caller);
      const src = fullPathOf(viewer, body.src_dir);
      const dst = fullPathOf(viewer, body.dst_dir);
      requireWritable(viewer, c.var.fs, src, src, bit, body.password);
      requireWritable(viewer, c.var.fs, dst, dst, Permission.WRITE, body.password, true);
      for (const name of body.names) {
        const from = joinName(src, name);
        if (dst === from || dst.startsWith(`${from}/`))
          throw new ApiError(400, intoItself(verb === "moved" ? "move" : "copy", name));
        requireSubtree(viewer, c.var.fs, from, body.password);
        requireSubtree(viewer, c.var.fs, joinName(dst, name), body.password);
        requireNothingHidden(viewer, c.var.fs, from, joinName(dst, name));
      }
      const tree = treeFor(c, viewer, src, body.password);
      if (verb === "moved")
        for (const name of body.names)
          requireMovable(viewer, joinName(src, name), await tree.mountsAt(joinName(src, name)), "move");
      if (!body.overwrite) {
        for (const name of body.names)
          if (await exists(tree, joinName(dst, name))) throw new ApiError(403, nameExists(name));
      }
      const kind = verb === "moved" ? "move" : "copy";
      const started: TaskInfo[] = [];
      const index = new IndexChanges(c.var.db, c.var.fs);
      // The names done before a failure are in the index too.
      await eachName(body.names, verb, async (name) => {
        const from = joinName(src, name);
        const across = await acrossStorages(tree, kind, from, dst);
        if (!across) {
          await transfer(tree, kind, from, dst);
          if (kind === "move") index.moved(from, joinName(dst, name));
          else index.copied(from, joinName(dst, name));
          return;
        }
        // Between storages: a task, whatever the size (AList v3.58.0 internal/fs/copy.go:104-118).
        started.push(
          await startTask(c.var.db, c.env, c.var.caller, kind, transferTaskName(kind, across.source, across.target), {
            unit: "copy",
            from,
            toDir: dst,
            name,
            index: index.forTask(),
          }),
        );
      }).finally(() => index.flush());
      if (started.length > 0) return ok(c, { tasks: started });
      return verb === "moved" ? ok(c, null) : ok(c, { tasks: [] });
    });
  }

  app.openapi(remove, async (c) => {
    const body = c.req.valid("json");
    if (body.names.length === 0) throw new ApiError(400, EMPTY_NAMES);
    body.names.forEach(requireName);
    const viewer = viewerOf(c.var.caller);
    const dir = fullPathOf(viewer, body.dir);
    requireWritable(viewer, c.var.fs, dir, dir, Permission.REMOVE, body.password);
    for (const name of body.names) requireSubtree(viewer, c.var.fs, joinName(dir, name), body.password);
    const tree = treeFor(c, viewer, dir, body.password);
    for (const name of body.names)
      requireMovable(viewer, joinName(dir, name), await tree.mountsAt(joinName(dir, name)), "remove");
    const index = new IndexChanges(c.var.db, c.var.fs);
    await eachName(body.names, "deleted", async (name) => {
      await removePath(tree, joinName(dir, name));
      index.removed(joinName(dir, name));
    }).finally(() => index.flush());
    return ok(c, null);
  });

  app.openapi(link, async (c) => {
    if (!isAdmin(c.var.caller)) throw new ApiError(403, NOT_AN_ADMIN);
    const path = joinBasePath("/", c.req.valid("json").path);
    if (path === null) throw new ApiError(403, RELATIVE_PATH_REFUSED);
    const found = await new MountTree(c.var.fs.tree, c.var.db, c.req.raw.signal).link(path, { redirect: false });
    if ("source" in found) return ok(c, { url: "", header: null, Expiration: null, concurrency: 0, part_size: 0 });
    return ok(c, { url: found.url, header: found.headers ?? null, Expiration: null, concurrency: 0, part_size: 0 });
  });

  app.openapi(put, async (c) => {
    const lengthHeader = c.req.header("Content-Length") ?? "";
    if (!/^\d{1,16}$/.test(lengthHeader)) throw new ApiError(400, contentLengthInvalid(lengthHeader));
    return uploadTo(c, () => ({
      size: Number(lengthHeader),
      body: c.req.raw.body ?? emptyBody(),
      contentType: c.req.header("Content-Type") || "application/octet-stream",
    }));
  });

  app.openapi(form, async (c) => uploadTo(c, () => fileFromMultipart(c.req.raw)));
}

/** The target of an upload: `File-Path` decoded once and joined to the caller's base path. */
export function uploadPath(c: Context<AppEnv>, viewer: Viewer): string {
  let rawPath: string;
  try {
    rawPath = decodeURIComponent(c.req.header("File-Path") ?? "");
  } catch {
    throw new ApiError(400, FILE_PATH_NOT_ENCODED);
  }
  return fullPathOf(viewer, rawPath);
}

/**
 * The checks of an upload to the full path `path` (rules.ts requireUploadable: a valid file name, and
 * write permission or a meta's write grant at its folder, past the meta password). Shared by
 * /api/fs/put, /api/fs/form and every step of a chunked upload; answers the mount tree the upload
 * works on.
 */
export function uploadChecks(
  c: Context<AppEnv>,
  viewer: Viewer,
  path: string,
  password: string,
): { name: string; dir: string; tree: MountTree } {
  const { name, dir } = requireUploadable(viewer, c.var.fs, path, password);
  return { name, dir, tree: treeFor(c, viewer, dir, password) };
}

/**
 * An upload of either kind (AList v3.58.0 server/handles/fsup.go:30, :107): `File-Path` decoded
 * once and joined, write permission (or a meta's write grant) at the target, Overwrite: false
 * honoured, missing folders made, then the body streamed to the storage. `bytes` is read only once
 * every check passed.
 */
async function uploadTo(
  c: Context<AppEnv>,
  bytes: () =>
    | Promise<{ size: number; body: ReadableStream<Uint8Array>; contentType: string }>
    | { size: number; body: ReadableStream<Uint8Array>; contentType: string },
) {
  const viewer = viewerOf(c.var.caller);
  const path = uploadPath(c, viewer);
  const { name, dir, tree } = uploadChecks(c, viewer, path, c.req.header("Password") ?? "");
  if (c.req.header("Overwrite") === "false" && (await exists(tree, path))) throw new ApiError(403, FILE_EXISTS);
  const mounted = await tree.mount(dir);
  need(mounted, "put");
  if (mounted.actualPath !== "/") await makeDirs(tree, dir);
  const { size, body, contentType } = await bytes();
  const modified = Number(c.req.header("Last-Modified"));
  await putFile(mounted, {
    name,
    size,
    body,
    contentType,
    ...(Number.isFinite(modified) && modified > 0 ? { modified: new Date(modified) } : {}),
  });
  const index = new IndexChanges(c.var.db, c.var.fs);
  index.added(path, false, size);
  await index.flush();
  if (c.req.header("As-Task") !== "true") return ok(c, null);
  const now = new Date().toISOString();
  return ok(c, {
    task: {
      id: crypto.randomUUID(),
      name: uploadTaskName(name, mounted.storage.mountPath, mounted.actualPath),
      creator: c.var.caller.user.username,
      creator_role: c.var.caller.user.roleIds,
      state: 2,
      status: "",
      progress: 100,
      start_time: now,
      end_time: now,
      total_bytes: size,
      error: "",
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Batch operations (AList v3.58.0 server/handles/fsbatch.go:155, :215, :25, fsmanage.go:331) and
// the form upload (fsup.go:107).

/** Most entries a recursive walk (recursive_move, remove_empty_directory) visits in one request. */
export const MAX_WALK_ENTRIES = 1000;

const batchRename = route(
  "/api/fs/batch_rename",
  "Rename several names of one folder; stops at the first failure and says which were renamed",
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
      Array.isArray(b.rename_objects)
        ? b.rename_objects.map((o: unknown) =>
            o !== null && typeof o === "object" ? (o as { src_name?: unknown }).src_name : undefined,
          )
        : [],
      true,
    ),
);
const regexRename = route(
  "/api/fs/regex_rename",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the summary names the replacement syntax
  "Rename the names of a folder matching a regular expression (JavaScript syntax; $1 and ${name} expand groups)",
  z.object({
    src_dir: PathField,
    src_name_regex: z.string().check(z.maxLength(1024)),
    new_name_regex: z.string().check(z.maxLength(1024)),
    password: PasswordField,
  }),
  (b) => itemsGuess(b.src_dir, [], true),
);
const recursiveMove = route(
  "/api/fs/recursive_move",
  "Move every file below a folder into another folder of the same storage (flattened)",
  z.object({
    src_dir: PathField,
    dst_dir: PathField,
    conflict_policy: z._default(z.enum(["cancel", "overwrite", "skip"]), "cancel"),
    password: PasswordField,
  }),
  (b) => guess(b.src_dir, b.dst_dir),
);
const removeEmpty = route(
  "/api/fs/remove_empty_directory",
  "Delete the empty folders below a folder (not the folder itself)",
  z.object({ src_dir: PathField, password: PasswordField }),
  (b) => guess(b.src_dir),
);

/** Go's replacement template in JavaScript's: `${1}` → `$1`, `${name}` → `$<name>`, `$$` stays. */
export function goTemplate(template: string): string {
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

export function registerFsBatchRoutes(app: Router) {
  async function renameIn(c: Context<AppEnv>, src: string, pairs: [string, string][], password: string) {
    const viewer = viewerOf(c.var.caller);
    requireWritable(viewer, c.var.fs, src, src, Permission.RENAME, password);
    const tree = treeFor(c, viewer, src, password);
    const index = new IndexChanges(c.var.db, c.var.fs);
    await eachName(
      pairs.map(([from]) => from),
      "renamed",
      async (from) => {
        const to = pairs.find(([name]) => name === from)![1];
        requireName(from);
        requireName(to);
        const path = joinName(src, from);
        requireRenamable(viewer, c.var.fs, path, password);
        requireReach(viewer, c.var.fs, joinName(src, to));
        if (to !== from) requireNothingHidden(viewer, c.var.fs, path, joinName(src, to));
        requireMovable(viewer, path, await tree.mountsAt(path), "rename");
        const mounted = await tree.mount(path);
        await need(mounted, "rename")(mounted.actualPath, to);
        index.moved(path, joinName(src, to));
      },
    ).finally(() => index.flush());
  }

  app.openapi(batchRename, async (c) => {
    const body = c.req.valid("json");
    const src = fullPathOf(viewerOf(c.var.caller), body.src_dir);
    const pairs = body.rename_objects
      .filter((o) => o.src_name !== "" && o.new_name !== "")
      .map((o): [string, string] => [o.src_name, o.new_name]);
    await renameIn(c, src, pairs, body.password);
    return ok(c, null);
  });

  app.openapi(regexRename, async (c) => {
    const body = c.req.valid("json");
    const src = fullPathOf(viewerOf(c.var.caller), body.src_dir);
    let pattern: RegExp;
    try {
      pattern = new RegExp(body.src_name_regex);
    } catch (error) {
      throw new ApiError(400, regexpInvalid(error));
    }
    const template = goTemplate(body.new_name_regex);
    const entries = await treeFor(c, viewerOf(c.var.caller), src, body.password).list(src);
    const global = new RegExp(pattern.source, `${pattern.flags}g`);
    const pairs = entries
      .filter((entry) => pattern.test(entry.name))
      .map((entry): [string, string] => [entry.name, entry.name.replace(global, template)]);
    await renameIn(
      c,
      src,
      pairs.filter(([from, to]) => from !== to),
      body.password,
    );
    return ok(c, null);
  });

  app.openapi(recursiveMove, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const src = fullPathOf(viewer, body.src_dir);
    const dst = fullPathOf(viewer, body.dst_dir);
    if (dst === src || dst.startsWith(`${src}/`)) throw new ApiError(400, FILES_INTO_ITSELF);
    requireWritable(viewer, c.var.fs, src, src, Permission.MOVE, body.password);
    requireWritable(viewer, c.var.fs, dst, dst, Permission.WRITE, body.password, true);
    requireSubtree(viewer, c.var.fs, src, body.password);
    requireNothingHidden(viewer, c.var.fs, src, dst);
    const tree = treeFor(c, viewer, src, body.password);
    const target = await tree.mount(dst);
    const { files } = await walkFiles(tree, src);
    const existing = new Set((await tree.list(dst)).map((entry) => entry.name));
    if (body.conflict_policy === "cancel") {
      const clash = files.find((file) => existing.has(baseName(file)));
      if (clash) throw new ApiError(403, nameExists(baseName(clash)));
    }
    const moving = files.filter((file) => body.conflict_policy !== "skip" || !existing.has(baseName(file)));
    const index = new IndexChanges(c.var.db, c.var.fs);
    await eachName(moving, "moved", async (file) => {
      const source = await tree.mount(file);
      if (source.storage.id !== target.storage.id) throw new ApiError(500, ACROSS_STORAGES_MOVE);
      await need(source, "move")(source.actualPath, target.actualPath);
      index.moved(file, joinName(dst, baseName(file)));
    }).finally(() => index.flush());
    return envelope(c, 200, movedCount(moving.length), null);
  });

  app.openapi(removeEmpty, async (c) => {
    const body = c.req.valid("json");
    const viewer = viewerOf(c.var.caller);
    const src = fullPathOf(viewer, body.src_dir);
    requireWritable(viewer, c.var.fs, src, src, Permission.REMOVE, body.password);
    requireSubtree(viewer, c.var.fs, src, body.password);
    const tree = treeFor(c, viewer, src, body.password);
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
    const index = new IndexChanges(c.var.db, c.var.fs);
    await eachName(empty, "deleted", async (folder) => {
      const mounted = await tree.mount(folder);
      await need(mounted, "remove")(mounted.actualPath);
      index.removed(folder);
    }).finally(() => index.flush());
    return ok(c, null);
  });
}
