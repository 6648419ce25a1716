// `/ae/*path` (and `/ad`, `/ap`): one entry of a ZIP, streamed (AList v3.58.0
// server/handles/archive.go:323-427). The gate is /d's: a sign whenever /d of the archive would need
// one (sign_all, the storage's enable_sign, a meta password, a hidden name on the way), here the
// archive sign. No storage here extracts by itself, so `/ad` and `/ap` extract as `/ae` does
// (docs/decisions.md D13.3). Range is served by inflating from the entry's start and dropping the
// bytes before the range (a stored entry is read at the range itself).
import * as z from "zod/mini";
import "../../http/openapi.ts";
import type { Context } from "hono";
import type { AppEnv } from "../../http/context.ts";
import { ApiError, FileError } from "../../http/errors.ts";
import type { Router } from "../../http/router.ts";
import { NOT_A_FILE } from "../fs/messages.ts";
import { MountTree } from "../fs/mounts.ts";
import { baseName, cleanPath, decodeDownloadPath } from "../fs/path.ts";
import { signRequired, targetNeedsSign } from "../fs/rules.ts";
import { contentDisposition, contentTypeOf, rangeWithin } from "../fs/serve.ts";
import { signProblem } from "../fs/sign.ts";
import type { FsState } from "../fs/state.ts";
import { readState } from "../fs/store.ts";
import { archiveTree, nodeAt, requireNoBomb, requireSafeNames, requireZipName } from "./rules.ts";
import { openArchive } from "./source.ts";
import { openEntry, readZipDirectory, requireOpenable } from "./zip.ts";

const KINDS = ["ae", "ad", "ap"] as const;

export function registerArchiveDownloadRoutes(app: Router) {
  for (const kind of KINDS) {
    // HEAD is answered by the GET route (Hono), without a body.
    app.get(`/${kind}/:path{.+}`, (c) => extractEntry(c, kind.length + 1));
    app.openAPIRegistry.registerPath({
      method: "get",
      path: `/${kind}/{path}`,
      tags: ["fs"],
      summary:
        kind === "ae"
          ? "One entry of a ZIP, extracted here and streamed, with Range. HEAD too."
          : `As /ae (no storage extracts archives itself). HEAD too.`,
      request: {
        params: z.object({
          path: z.string().openapi({ description: "The archive's full path, percent-encoded per segment" }),
        }),
        query: z.object({
          inner: z.string().openapi({ description: "The entry's path inside the archive" }),
          pass: z.optional(z.string()).openapi({ description: "The archive's password (ZipCrypto)" }),
          sign: z.optional(z.string()).openapi({ description: "The sign from archive/meta, when one is needed" }),
        }),
      },
      responses: {
        200: {
          description: "The entry; or, with HTTP 200 too, an envelope with code 401 (sign) or 500",
          content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
        },
        206: { description: "The requested range" },
      },
    });
  }
}

async function requireSign(state: FsState, path: string, sign: string) {
  const problem = await signProblem(`${state.settings.token}-archive`, path, sign);
  if (problem) throw new ApiError(401, problem);
}

async function extractEntry(c: Context<AppEnv>, prefixLength: number): Promise<Response> {
  const url = new URL(c.req.url);
  const path = decodeDownloadPath(url.pathname.slice(prefixLength));
  // The archive's own mount-point lookup (tree.get) travels in the same batch: one round trip.
  const state = await readState(c.var.db, { paths: [path], folders: [], points: [path] });
  const tree = new MountTree(state.tree, c.var.db, c.req.raw.signal);
  const storage = await tree.storageAt(path);
  const sign = url.searchParams.get("sign") ?? "";
  const checked = signRequired(state, path, storage);
  if (checked) await requireSign(state, path, sign);
  // Through an alias, a target a meta password guards or a hide rule hides needs the sign as it would named directly.
  tree.guardedBy({
    async enter(target) {
      if (!checked && targetNeedsSign(state, [target])) await requireSign(state, path, sign);
    },
    entries: (_target, entries) => entries,
  });
  requireZipName(baseName(path));
  const password = url.searchParams.get("pass") ?? "";

  const { object, reader } = await openArchive(tree, path, c.req.raw.signal);
  const directory = await readZipDirectory(reader);
  requireSafeNames(directory.entries);
  const node = nodeAt(archiveTree(directory.entries, object.modified), cleanPath(url.searchParams.get("inner") ?? "/"));
  const entry = node.entry;
  if (node.isDir || !entry) throw new FileError("not_a_file", NOT_A_FILE);
  requireNoBomb(entry);
  requireOpenable(entry, password);

  const headers = new Headers({
    // By the name only: AList took the request's own Content-Type, which lets a link choose how a browser reads it.
    "Content-Type": contentTypeOf(node.name),
    "Content-Disposition": contentDisposition(node.name),
    "Cache-Control": "max-age=0, no-cache, no-store, must-revalidate",
    "Referrer-Policy": "no-referrer",
    "Accept-Ranges": "bytes",
  });
  const header = c.req.header("Range");
  const range = header === undefined ? null : rangeWithin(header, entry.size);
  if (range === "unsatisfiable") {
    headers.set("Content-Range", `bytes */${entry.size}`);
    return new Response(null, { status: 416, headers });
  }
  const [start, end] = range ?? [0, entry.size - 1];
  const length = Math.max(0, end - start + 1);
  headers.set("Content-Length", String(length));
  if (range) headers.set("Content-Range", `bytes ${start}-${end}/${entry.size}`);
  const status = range ? 206 : 200;
  if (c.req.method === "HEAD") return new Response(null, { status, headers });
  return new Response(await openEntry(reader, entry, password, start, length), { status, headers });
}
