// The S3 operations on buckets, a key's folders (docs/decisions.md D22.1): list, head, create,
// delete, and the listing of a bucket's objects.
import { bucketFolder, makeFolders, type S3Request, treeAt, visible, visibleChildren, xml } from "./request.ts";
import { FileError } from "../../http/errors.ts";
import { etagOfObject } from "../dav/rules.ts";
import { lookup, removePath } from "../fs/operations.ts";
import { anchoredBy, Permission, requireAccess, requireWritable } from "../fs/rules.ts";
import { IndexChanges } from "../search/changes.ts";
import { ACCESS_DENIED, BUCKET_NAME_INVALID, BUCKET_NOT_EMPTY, BUCKET_TAKEN } from "./messages.ts";
import { bucketPath, continuationToken, listPage, listRequestOf, S3Error } from "./rules.ts";
import { listBucketsDocument, listingDocument } from "./xml.ts";

export async function listBuckets(request: S3Request): Promise<Response> {
  const { scope, caller } = request;
  requireAccess(request.viewer, request.fs, scope, "");
  const entries = await visibleChildren(request, treeAt(request, scope), scope);
  const buckets = entries
    .filter((entry) => entry.isDir)
    .map((entry) => ({ name: entry.name, created: entry.modified }));
  return xml(listBucketsDocument(buckets, { id: String(caller.user.id), name: caller.user.username }));
}

/**
 * CreateBucket (D22.7): a new folder at the top of the key's folder, where the key may make one
 * (write, or a meta's write grant, as `/api/fs/mkdir`). A bucket that is there answers 200, as S3
 * in us-east-1 answers its owner (clients such as rclone create the bucket before they write).
 */
export async function createBucket(request: S3Request): Promise<Response> {
  const { c, viewer, fs, scope } = request;
  const path = bucketPath(scope, request.bucket!);
  if (path === null) throw new S3Error("InvalidBucketName", BUCKET_NAME_INVALID);
  // A hidden or password-guarded name is not told apart from one the key may not make.
  if (!visible(request, scope) || !visible(request, path)) throw new S3Error("AccessDenied", ACCESS_DENIED);
  const tree = treeAt(request, path);
  const existing = await lookup(tree, path).catch(() => null);
  if (existing?.isDir) return new Response(null, { status: 200, headers: { Location: `/${request.bucket}` } });
  if (existing) throw new S3Error("BucketAlreadyExists", BUCKET_TAKEN);
  requireWritable(viewer, fs, scope, path, Permission.WRITE, "", true);
  await makeFolders(tree, path);
  const index = new IndexChanges(c.var.db, fs);
  index.added(path, true, 0);
  await index.flush();
  return new Response(null, { status: 200, headers: { Location: `/${request.bucket}` } });
}

/** DeleteBucket (D22.7): the bucket's folder, only when nothing is in it (hidden entries count), with the remove bit. */
export async function deleteBucket(request: S3Request): Promise<Response> {
  const { c, viewer, fs, scope } = request;
  const { path, tree } = await bucketFolder(request);
  requireWritable(viewer, fs, scope, path, Permission.REMOVE, "");
  if ((await tree.list(path)).length > 0) throw new S3Error("BucketNotEmpty", BUCKET_NOT_EMPTY);
  const refusal = anchoredBy(viewer, path, await tree.mountsAt(path), "remove");
  if (refusal) throw new S3Error("AccessDenied", refusal);
  await removePath(tree, path);
  const index = new IndexChanges(c.var.db, fs);
  index.removed(path);
  await index.flush();
  return new Response(null, { status: 204 });
}

export async function listObjects(request: S3Request, version: 1 | 2): Promise<Response> {
  const { path: root, tree } = await bucketFolder(request);
  const query = new URL(request.c.req.url).searchParams;
  const list = listRequestOf(query, version);
  const page = await listPage(list, async (dir) => {
    const path = dir === "" ? root : `${root}/${dir}`;
    if (!visible(request, path)) return [];
    try {
      return await visibleChildren(request, tree, path);
    } catch (error) {
      // A prefix naming no folder lists nothing, as S3 answers a prefix no key has.
      if (error instanceof FileError && ["not_found", "not_a_folder", "no_storage"].includes(error.kind)) return [];
      throw error;
    }
  });
  const next = page.truncated && page.last !== undefined ? page.last : undefined;
  return xml(
    listingDocument({
      version,
      bucket: request.bucket!,
      prefix: list.prefix,
      delimiter: list.delimiter,
      maxKeys: list.maxKeys,
      encodeUrl: list.encodeUrl,
      truncated: page.truncated,
      objects: page.objects.map(({ key, object }) => ({
        key,
        modified: object.modified,
        etag: etagOfObject(object),
        size: object.size,
      })),
      prefixes: page.prefixes,
      continuationToken: query.get("continuation-token") ?? undefined,
      nextContinuationToken: version === 2 && next !== undefined ? continuationToken(next) : undefined,
      startAfter: version === 2 ? (query.get("start-after") ?? undefined) : undefined,
      marker: query.get("marker") ?? "",
      nextMarker: version === 1 ? next : undefined,
    }),
  );
}
