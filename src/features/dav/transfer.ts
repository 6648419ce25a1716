// COPY and MOVE (RFC 4918 §9.8-9.9): the file side's transfer between two paths of the tree, an
// existing destination deleted first by DELETE's rules; dead properties go with the resource.
import { runBatch } from "../../db/plan.ts";
import { lookup, makeDirs, removePath, transfer } from "../fs/operations.ts";
import { baseName, isWithin, parentOf } from "../fs/path.ts";
import { Permission } from "../fs/rules.ts";
import { IndexChanges } from "../search/changes.ts";
import { DESTINATION_EXISTS, intoItself, SAME_SOURCE_AND_DESTINATION, transferDepth } from "./messages.ts";
import { created, existing, requireManage, requireParent, requireUnlocked, type DavRequest } from "./request.ts";
import {
  checkMovable,
  checkNothingHidden,
  checkSubtree,
  DavError,
  etagOfObject,
  overwriteOf,
  requireName,
} from "./rules.ts";
import { copyTreeProperties, forgetTree } from "./store.ts";

export async function copyOrMove(
  request: DavRequest,
  method: "COPY" | "MOVE",
  destination: string,
  depth: 0 | 1 | -1,
): Promise<Response> {
  const { c, path, tree } = request;
  const db = c.var.db;
  if (depth === 1 || (method === "MOVE" && depth === 0)) throw new DavError(400, transferDepth(method));
  const overwriteHeader = overwriteOf(c.req.header("Overwrite"));
  const source = await existing(request, path);
  requireName(destination);
  if (destination === path) throw new DavError(403, SAME_SOURCE_AND_DESTINATION);
  if (isWithin(destination, path)) throw new DavError(403, intoItself(method));
  requireManage(request, path, method === "MOVE" ? [Permission.MOVE, Permission.RENAME] : [Permission.COPY]);
  requireManage(request, destination, [Permission.WRITE], true);
  checkSubtree(request.viewer, request.fs.metas, path);
  checkSubtree(request.viewer, request.fs.metas, destination);
  checkNothingHidden(request.viewer, request.fs.metas, path, destination);
  if (method === "MOVE") checkMovable(request.viewer, path, await tree.mountsAt(path), "move");
  await requireParent(request, destination);
  const target = await lookup(tree, destination);
  if (target && overwriteHeader === "F") throw new DavError(412, DESTINATION_EXISTS);
  // An existing destination is deleted first: the same rules as DELETE.
  if (target) checkMovable(request.viewer, destination, await tree.mountsAt(destination), "remove");
  const etags = new Map([
    [path, etagOfObject(source)],
    ...(target ? [[destination, etagOfObject(target)] as [string, string]] : []),
  ]);
  requireUnlocked(
    request,
    [
      ...(method === "MOVE"
        ? [
            { path, tree: true },
            { path: parentOf(path), tree: false },
          ]
        : []),
      { path: destination, tree: true },
      { path: parentOf(destination), tree: false },
    ],
    etags,
  );
  const [sourceProperties = 0, destinationProperties = 0] = request.dav.propertyCounts;
  if (target) {
    await removePath(tree, destination);
    await runBatch(db, forgetTree(db, destination, true, destinationProperties > 0));
  }
  const index = new IndexChanges(db, request.fs);
  if (target) index.removed(destination);
  if (method === "COPY" && depth === 0 && source.isDir) {
    await makeDirs(tree, destination);
    index.added(destination, true, 0);
  } else {
    await transfer(tree, method === "MOVE" ? "move" : "copy", path, parentOf(destination), baseName(destination));
    if (method === "MOVE") index.moved(path, destination);
    else index.copied(path, destination);
  }
  // Dead properties go with the resource; locks stay behind (RFC 4918 §7.7: a moved resource is not locked).
  await runBatch(db, [
    ...(sourceProperties > 0 ? copyTreeProperties(db, path, destination) : []),
    ...(method === "MOVE"
      ? forgetTree(
          db,
          path,
          request.dav.locks.some((lock) => isWithin(lock.path, path)),
          sourceProperties > 0,
        )
      : []),
    ...index.take(),
  ]);
  return created(target ? 204 : 201);
}
