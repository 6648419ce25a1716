// What the write routes share (manage-routes.ts, upload-routes.ts, batch-routes.ts) and the chunked
// uploads (features/uploads) reuse: the body fields, the plan of the state a write reads in the
// guard's batch, the mount tree a write works on, the checks of an upload, and one name at a time.
import type { Context } from "hono";
import * as z from "zod/mini";
import { reading, signedIn } from "../../auth/guard.ts";
import type { AppEnv } from "../../http/context.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import { fromJson } from "../../http/params.ts";
import { jsonBody } from "../../http/router.ts";
import { FILE_PATH_NOT_ENCODED, partlyDone } from "./messages.ts";
import { fileFailure, MountTree } from "./mounts.ts";
import { hasRelativeSegment, isValidName, joinBasePath, joinName } from "./path.ts";
import { fullPathOf, requireUploadable, throughAlias, type Viewer } from "./rules.ts";
import type { FsState, TreeNeeds } from "./state.ts";
import { statePlan } from "./store.ts";

export const PathField = z.string().check(z.maxLength(4096));
export const NameList = z.array(z.string().check(z.maxLength(1024))).check(z.maxLength(1000));
export const PasswordField = z
  ._default(z.string().check(z.maxLength(1024)), "")
  .openapi({ description: "The meta password of the folder, when it has one" });

/** The storages of the paths a request names, guessed as if the caller's base path were `/`. */
export const guess = (...raws: unknown[]): TreeNeeds => {
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
export const itemsGuess = (dir: unknown, names: unknown, folder: boolean, ...others: unknown[]): TreeNeeds => {
  const needs = guess(dir, ...others);
  const full = typeof dir === "string" && !hasRelativeSegment(dir) ? joinBasePath("/", dir) : null;
  if (full === null || !Array.isArray(names)) return needs;
  const items = names
    .filter((name): name is string => typeof name === "string" && isValidName(name))
    .map((name) => joinName(full, name));
  return { paths: [...needs.paths, ...items], folders: folder ? [full] : [] };
};

/**
 * A JSON write route (its documentation: `fileWrite` in docs.ts): its body, and the file-side state for the paths `needs` guesses from it,
 * read in the guard's batch (`state`, taken by the handler with `planned(c, state)`).
 */
export function writeRoute<T extends z.ZodMiniObject>(path: string, body: T, needs: (body: z.output<T>) => TreeNeeds) {
  const state = fromJson(body, (db, parsed) => statePlan(db, needs(parsed)));
  const route = createRoute({
    method: "post",
    path,
    ...reading(signedIn, state),
    request: { body: jsonBody(body) },
  });
  return { route, state };
}

/** Runs `work` on each name in order; a failure part-way reports the names done before it. */
export async function eachName(names: string[], verb: string, work: (name: string) => Promise<void>): Promise<void> {
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
export function treeFor(c: Context<AppEnv>, state: FsState, viewer: Viewer, path: string, password: string): MountTree {
  return new MountTree(state.tree, c.var.db, c.req.raw.signal).guardedBy(throughAlias(viewer, state, path, password));
}

/** `File-Path`, decoded once (null when it is not valid percent-encoding): a header schema's field. */
export const FilePathHeader = z
  .pipe(
    z.optional(z.string()),
    z.transform((raw) => {
      try {
        return decodeURIComponent(raw ?? "");
      } catch {
        return null;
      }
    }),
  )
  .openapi({ description: "encodeURIComponent of the full target path" });

/** Unix epoch milliseconds; none when absent, zero or not a number. */
export const LastModifiedHeader = z
  .pipe(
    z.optional(z.string()),
    z.transform((raw) => {
      const modified = Number(raw);
      return Number.isFinite(modified) && modified > 0 ? modified : undefined;
    }),
  )
  .openapi({ description: "Unix epoch milliseconds" });

/** `Overwrite: false` refuses a name that exists; anything else (or none) overwrites. */
export const OverwriteHeader = z
  .pipe(
    z.optional(z.string()),
    z.transform((raw) => raw !== "false"),
  )
  .openapi({ description: "`false`: refuse when the file exists" });

/** The meta password of the target folder. */
export const PasswordHeader = z._default(z.string(), "");

/** The target of an upload: `File-Path` (decoded by the schema) joined to the caller's base path. */
export function uploadPath(viewer: Viewer, filePath: string | null): string {
  if (filePath === null) throw new ApiError(400, FILE_PATH_NOT_ENCODED);
  return fullPathOf(viewer, filePath);
}

/**
 * The checks of an upload to the full path `path` (rules.ts requireUploadable: a valid file name, and
 * write permission or a meta's write grant at its folder, past the meta password). Shared by
 * /api/fs/put, /api/fs/form and every step of a chunked upload; answers the mount tree the upload
 * works on.
 */
export function uploadChecks(
  c: Context<AppEnv>,
  state: FsState,
  viewer: Viewer,
  path: string,
  password: string,
): { name: string; dir: string; tree: MountTree } {
  const { name, dir } = requireUploadable(viewer, state, path, password);
  return { name, dir, tree: treeFor(c, state, viewer, dir, password) };
}
