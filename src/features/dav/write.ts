// PUT, MKCOL and DELETE: a file written, a folder made, a resource removed, each held to the
// permissions, the locks (RFC 4918 §7) and the conditions; the search index follows each change.
import { runBatch } from "../../db/plan.ts";
import { emptyBody } from "../../lib/streams.ts";
import { lookup, need, putFile, removePath } from "../fs/operations.ts";
import { baseName, isWithin, parentOf } from "../fs/path.ts";
import { Permission } from "../fs/rules.ts";
import { contentTypeOf } from "../fs/serve.ts";
import { IndexChanges } from "../search/changes.ts";
import {
  ALREADY_EXISTS,
  DELETE_DEPTH,
  FILE_EXISTS,
  IF_MATCH_FAILED,
  MKCOL_BODY,
  PUT_ON_FOLDER,
  STORAGE_ROOT_REMOVE,
} from "./messages.ts";
import {
  cappedBody,
  created,
  existing,
  requireManage,
  requireParent,
  requireUnlocked,
  type DavRequest,
} from "./request.ts";
import { checkMovable, checkSubtree, DavError, etagList, etagOfObject, requireName, uploadSize } from "./rules.ts";
import { forgetTree } from "./store.ts";

export async function mkcol(request: DavRequest): Promise<Response> {
  const { path } = request;
  if ((await cappedBody(request.c)).byteLength > 0) throw new DavError(415, MKCOL_BODY);
  requireName(path);
  requireManage(request, path, [Permission.WRITE], true);
  if (await lookup(request.tree, path)) throw new DavError(405, ALREADY_EXISTS);
  await requireParent(request, path);
  requireUnlocked(request, [
    { path, tree: false },
    { path: parentOf(path), tree: false },
  ]);
  const parent = await request.tree.mount(parentOf(path));
  await need(parent, "makeDir")(parent.actualPath, baseName(path));
  const index = new IndexChanges(request.c.var.db, request.fs);
  index.added(path, true, 0);
  await index.flush();
  return created(201);
}

export async function put(request: DavRequest): Promise<Response> {
  const { c, path, tree } = request;
  requireName(path);
  requireManage(request, path, [Permission.WRITE], true);
  const before = await lookup(tree, path);
  if (before?.isDir) throw new DavError(405, PUT_ON_FOLDER);
  if (!before) await requireParent(request, path);
  requireUnlocked(
    request,
    [{ path, tree: false }, ...(before ? [] : [{ path: parentOf(path), tree: false }])],
    new Map(before ? [[path, etagOfObject(before)]] : []),
  );
  if (c.req.header("If-None-Match")?.trim() === "*" && before) throw new DavError(412, FILE_EXISTS);
  if (
    c.req.header("If-Match") &&
    (!before || !etagList(c.req.header("If-Match")!).some((tag) => tag === "*" || tag === etagOfObject(before)))
  )
    throw new DavError(412, IF_MATCH_FAILED);
  const size = uploadSize((name) => c.req.header(name));
  const parent = await tree.mount(parentOf(path));
  await putFile(parent, {
    name: baseName(path),
    size,
    body: c.req.raw.body ?? emptyBody(),
    contentType: c.req.header("Content-Type") || contentTypeOf(baseName(path)),
  });
  const index = new IndexChanges(c.var.db, request.fs);
  index.added(path, false, size);
  await index.flush();
  return created(before ? 204 : 201);
}

export async function remove(request: DavRequest, depth: 0 | 1 | -1): Promise<Response> {
  const { path, tree } = request;
  const object = await existing(request, path);
  if (object.isDir && depth !== -1) throw new DavError(400, DELETE_DEPTH);
  requireManage(request, path, [Permission.REMOVE]);
  checkSubtree(request.viewer, request.fs.metas, path);
  checkMovable(request.viewer, path, await tree.mountsAt(path), "remove");
  const storage = path === "/" ? null : await tree.storageAt(path);
  if (!storage || (await tree.mount(path)).actualPath === "/") throw new DavError(403, STORAGE_ROOT_REMOVE);
  requireUnlocked(
    request,
    [
      { path, tree: true },
      { path: parentOf(path), tree: false },
    ],
    new Map([[path, etagOfObject(object)]]),
  );
  await removePath(tree, path);
  const index = new IndexChanges(request.c.var.db, request.fs);
  index.removed(path);
  await runBatch(request.c.var.db, [
    ...forgetTree(
      request.c.var.db,
      path,
      request.dav.locks.some((lock) => isWithin(lock.path, path)),
      (request.dav.propertyCounts[0] ?? 0) > 0,
    ),
    ...index.take(),
  ]);
  return created(204);
}
