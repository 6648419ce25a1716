// Uploads of a whole file in one request (AList v3.58.0 server/handles/fsup.go:30, :107):
// /api/fs/put (the body is the file) and /api/fs/form (the `file` part of a form). Their headers
// are parsed by the routes' schema; the chunked uploads are features/uploads.
import type { Context } from "hono";
import * as z from "zod/mini";
import { planned, reading, signedIn } from "../../auth/guard.ts";
import type { AppEnv } from "../../http/context.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import type { Router } from "../../http/router.ts";
import type { FileWrites } from "./hooks.ts";
import { contentLengthInvalid, FILE_EXISTS, uploadTaskName } from "./messages.ts";
import { fileFromMultipart } from "./multipart.ts";
import { emptyBody } from "../../lib/streams.ts";
import { exists, makeDirs, need, putFile } from "./operations.ts";
import { viewerOf } from "./rules.ts";
import { stateWithoutGuess } from "./store.ts";
import {
  FilePathHeader,
  LastModifiedHeader,
  OverwriteHeader,
  PasswordHeader,
  uploadChecks,
  uploadPath,
} from "./writes.ts";

const UploadHeaders = z.object({
  "file-path": FilePathHeader,
  "content-length": z.optional(z.string()).openapi({ description: "Required: the file's size" }),
  overwrite: OverwriteHeader,
  "as-task": z
    .pipe(
      z.optional(z.string()),
      z.transform((raw) => raw === "true"),
    )
    .openapi({
      description: "`true`: the reply carries a finished task (the upload still completes within the request)",
    }),
  "last-modified": LastModifiedHeader,
  password: PasswordHeader,
});

const put = createRoute({
  method: "put",
  path: "/api/fs/put",
  ...reading(signedIn, stateWithoutGuess),
  request: {
    headers: UploadHeaders,
    body: { content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } } },
  },
});

const form = createRoute({
  method: "put",
  path: "/api/fs/form",
  ...reading(signedIn, stateWithoutGuess),
  // The multipart body is not declared: a declared form is parsed (held whole) before the handler.
  request: { headers: UploadHeaders },
});

type Bytes = { size: number; body: ReadableStream<Uint8Array>; contentType: string };

/**
 * An upload of either kind: write permission (or a meta's write grant) at the target, Overwrite:
 * false honoured, missing folders made, then the body streamed to the storage. `bytes` is read
 * only once every check passed.
 */
async function uploadTo(
  c: Context<AppEnv>,
  writes: FileWrites,
  headers: z.output<typeof UploadHeaders>,
  bytes: () => Promise<Bytes> | Bytes,
) {
  const state = await planned(c, stateWithoutGuess);
  const viewer = viewerOf(c.var.caller);
  const path = uploadPath(viewer, headers["file-path"]);
  const { name, dir, tree } = uploadChecks(c, state, viewer, path, headers.password);
  if (!headers.overwrite && (await exists(tree, path))) throw new ApiError(403, FILE_EXISTS);
  const mounted = await tree.mount(dir);
  need(mounted, "put");
  if (mounted.actualPath !== "/") await makeDirs(tree, dir);
  const { size, body, contentType } = await bytes();
  const modified = headers["last-modified"];
  await putFile(mounted, { name, size, body, contentType, ...(modified ? { modified: new Date(modified) } : {}) });
  const log = writes.log(c.var.db, state);
  log.added(path, false, size);
  await log.flush();
  if (!headers["as-task"]) return ok(c, null);
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

export function registerFsUploadRoutes(app: Router, writes: FileWrites) {
  app.openapi(put, async (c) => {
    const headers = c.req.valid("header");
    const length = headers["content-length"] ?? "";
    if (!/^\d{1,16}$/.test(length)) throw new ApiError(400, contentLengthInvalid(length));
    return uploadTo(c, writes, headers, () => ({
      size: Number(length),
      body: c.req.raw.body ?? emptyBody(),
      contentType: c.req.header("Content-Type") || "application/octet-stream",
    }));
  });

  app.openapi(form, async (c) => uploadTo(c, writes, c.req.valid("header"), () => fileFromMultipart(c.req.raw)));
}
