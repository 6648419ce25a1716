// One signed S3 request (server.ts makes it) and the tree it reaches: the file side's rules with no
// password, since an S3 client cannot send one (docs/decisions.md D22.1).
import type { Context } from "hono";
import type { Caller } from "../../auth/caller.ts";
import type { FileObject } from "../../drivers/types.ts";
import type { AppEnv } from "../../http/context.ts";
import type { ChunkedPayload } from "./chunked.ts";
import { MountTree } from "../fs/mounts.ts";
import { lookup, makeDirs } from "../fs/operations.ts";
import { mayAccess, mayReach, nearestMeta, throughAlias, visibleEntries, type Viewer } from "../fs/rules.ts";
import type { FsState } from "../fs/state.ts";
import { bucketPath, noSuchBucket } from "./rules.ts";

/** What one signed request knows: who, the key's folder (its buckets' parent), the tree. */
export interface S3Request {
  c: Context<AppEnv>;
  caller: Caller;
  viewer: Viewer;
  /** The key's folder, a full path: its entries are the key's buckets (D22.1). */
  scope: string;
  fs: FsState;
  bucket: string | null;
  key: string;
  payloadHash: string;
  /** An aws-chunked payload's shape and signing (D22.8, D22.15); null for a plain body. */
  chunks: ChunkedPayload | null;
}

// ---------------------------------------------------------------------------------------------
// The tree, held to the file side's rules with no password (an S3 client cannot send one).

/** The mount tree for a request at `path`: an Alias's targets are held to their metas with no password. */
export const treeAt = (request: S3Request, path: string) =>
  new MountTree(request.fs.tree, request.c.var.db, request.c.req.raw.signal).guardedBy(
    throughAlias(request.viewer, request.fs, path, ""),
  );

/** Reached past the hide rules and opened without a password (guarded folders need the skip-password bit). */
export const visible = (request: S3Request, path: string) =>
  mayReach(request.viewer, request.fs.metas, path) &&
  mayAccess(request.viewer, nearestMeta(request.fs.metas, path), path, "");

/** The entries of folder `path` the key may see: the file side's visibility, minus what a password guards. */
export async function visibleChildren(request: S3Request, tree: MountTree, path: string): Promise<FileObject[]> {
  const { viewer, fs } = request;
  const entries = visibleEntries(viewer, nearestMeta(fs.metas, path), path, await tree.list(path));
  return entries.filter((entry) => visible(request, path === "/" ? `/${entry.name}` : `${path}/${entry.name}`));
}

/** Where the bucket would be (a visible name at the top of the key's scope), not yet looked up; else NoSuchBucket. */
export function bucketAt(request: S3Request): { path: string; tree: MountTree } {
  const path = bucketPath(request.scope, request.bucket!);
  if (path === null || !visible(request, request.scope) || !visible(request, path)) throw noSuchBucket();
  return { path, tree: treeAt(request, path) };
}

/** NoSuchBucket unless the bucket's folder is there. */
export async function requireBucket(tree: MountTree, path: string): Promise<void> {
  const folder = await lookup(tree, path).catch(() => null);
  if (!folder?.isDir) throw noSuchBucket();
}

/** The bucket's folder (a visible folder at the top of the key's scope), or NoSuchBucket. */
export async function bucketFolder(request: S3Request): Promise<{ path: string; tree: MountTree }> {
  const bucket = bucketAt(request);
  await requireBucket(bucket.tree, bucket.path);
  return bucket;
}

/** An S3 reply of XML, 200. */
export const xml = (body: string) =>
  new Response(body, { status: 200, headers: { "Content-Type": "application/xml" } });

/**
 * The folders on a key's way. Clients upload in parallel (rclone four at a time), so two uploads
 * into a new folder race to make it, and the loser's MKCOL fails on a folder that is now there:
 * it tries once more, and a folder that exists by then is what it wanted.
 */
export async function makeFolders(tree: MountTree, path: string): Promise<void> {
  try {
    await makeDirs(tree, path);
  } catch {
    try {
      await makeDirs(tree, path);
    } catch (error) {
      if (!(await lookup(tree, path).catch(() => null))?.isDir) throw error;
    }
  }
}
