// The documentation of the uploads routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const SessionData = z.object({
  upload_id: z.string(),
  state: z.enum(["receiving", "completed"]),
  attempt: z.number(),
  path: z.string(),
  size: z.number(),
  chunk_size: z.number(),
  total_chunks: z.number(),
  received: z.array(z.array(z.number())).openapi({ description: "Inclusive [from, to] ranges of the chunks stored" }),
  received_bytes: z.number(),
  frontier: z.number(),
  storage_progress: z.number(),
});

export const routeDocs: RouteDocs = {
  "post /api/fs/multipart/init": {
    tags: ["fs"],
    summary: "Open a chunked upload of File-Path (X-File-Size bytes); the checks of /api/fs/put",
    responses: envelopeResponse(
      z.object({ ...SessionData.shape, resumed: z.boolean() }),
      "The new session, or the caller's live one for the same path, size and hashes (`resumed`)",
    ),
  },
  "put /api/fs/multipart/chunk": {
    tags: ["fs"],
    summary: "Store chunk X-Chunk-Index of a chunked upload; the same bytes again are accepted, other bytes refused",
    responses: envelopeResponse(SessionData, "Stored (or stored already with the same bytes)"),
  },
  "get /api/fs/multipart/status": {
    tags: ["fs"],
    summary:
      "The state of a chunked upload (by id, or the caller's live one at path and size): exactly the chunks stored whole",
    responses: envelopeResponse(SessionData, "The session"),
  },
  "post /api/fs/multipart/complete": {
    tags: ["fs"],
    summary: "Join the chunks into the file, once every chunk is stored",
    responses: envelopeResponse(SessionData, "The file is written"),
  },
  "post /api/fs/multipart/abort": {
    tags: ["fs"],
    summary: "Drop a chunked upload and what it stored upstream",
    responses: envelopeResponse(z.null(), "Dropped"),
  },
  "post /api/fs/get_direct_upload_info": {
    tags: ["fs"],
    summary: "HTTP Direct: a short-lived URL to PUT one file straight into an S3 storage that opted in",
    responses: envelopeResponse(
      z.object({
        upload_url: z.string(),
        method: z.string(),
        chunk_size: z.number().openapi({ description: "0: the whole file in one request" }),
        headers: z.record(z.string(), z.string()),
      }),
      "Upload there",
    ),
  },
};
