// The documentation of the archive routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const ObjectShape = {
  id: z.string(),
  path: z.string(),
  name: z.string(),
  size: z.number().check(z.int()),
  is_dir: z.boolean(),
  modified: z.string(),
  created: z.string(),
  sign: z.string(),
  thumb: z.string(),
  type: z.number().check(z.int()),
  hashinfo: z.string(),
  hash_info: z.null(),
};

const TreeItemSchema = z.object({
  ...ObjectShape,
  children: z
    .nullable(z.array(z.unknown()))
    .openapi({ description: "A folder's items, each of this same shape; null for a file" }),
});

const MetaData = z.object({
  comment: z.string(),
  encrypted: z.boolean(),
  content: z.nullable(z.array(TreeItemSchema)),
  sort: z.optional(z.object({ order_by: z.string(), order_direction: z.string(), extract_folder: z.string() })),
  raw_url: z.string().openapi({ description: "This server's /ae link of the archive; add ?inner=<entry>&sign=" }),
  sign: z.string().openapi({ description: "The archive sign, for every entry's /ae link; empty when none is needed" }),
});
const TaskInfo = z.object({
  id: z.string(),
  name: z.string(),
  creator: z.string(),
  creator_role: z.array(z.number()),
  state: z.number().check(z.int()),
  status: z.string(),
  progress: z.number(),
  start_time: z.string(),
  end_time: z.string(),
  total_bytes: z.number(),
  error: z.string(),
});
/** `/ae/{path}`, `/ad/{path}` and `/ap/{path}` (download.ts), served outside `app.openapi`. */
const entryDocs = (kind: "ae" | "ad" | "ap") => ({
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

export const routeDocs: RouteDocs = {
  "get /ae/{path}": entryDocs("ae"),
  "get /ad/{path}": entryDocs("ad"),
  "get /ap/{path}": entryDocs("ap"),
  "post /api/fs/archive/meta": {
    tags: ["fs"],
    summary: "A ZIP's comment and whole tree, read from its central directory with range reads",
    responses: envelopeResponse(MetaData, "The archive's tree"),
  },
  "post /api/fs/archive/list": {
    tags: ["fs"],
    summary: "One folder inside a ZIP (implicit folders included), paged",
    responses: envelopeResponse(
      z.object({ content: z.array(z.object(ObjectShape)), total: z.number().check(z.int()) }),
      "The folder's entries",
    ),
  },
  "post /api/fs/archive/decompress": {
    tags: ["fs"],
    summary: "Extract ZIPs into a folder, within the request (capped: docs/files.md, Archives); one finished task each",
    responses: envelopeResponse(z.object({ task: z.array(TaskInfo) }), "The finished extractions"),
  },
};
