// The documentation of the fs routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const ObjectShape = {
  id: z.string(),
  path: z.string().openapi({ description: "The driver's internal path; do not build URLs from it" }),
  name: z.string(),
  size: z.number().check(z.int()),
  is_dir: z.boolean(),
  modified: z.string().openapi({ example: "2026-03-01T08:00:00Z" }),
  created: z.string(),
  sign: z.string().openapi({ description: "Append as ?sign= to /d and /p links; empty when none is needed" }),
  thumb: z.string(),
  type: z.number().check(z.int()).openapi({ description: "0 unknown, 1 folder, 2 video, 3 audio, 4 text, 5 image" }),
  hashinfo: z.string().openapi({ description: 'JSON text of hash_info; "null" when unknown' }),
  hash_info: z.nullable(z.record(z.string(), z.string())),
  storage_class: z.optional(z.string()),
};

const ListItem = z.object({ ...ObjectShape, label_list: z.null() });
const ListData = z.object({
  content: z.nullable(z.array(ListItem)).openapi({ description: "null when the page is empty" }),
  total: z.number().check(z.int()),
  filtered_total: z.number().check(z.int()),
  page: z.number().check(z.int()),
  per_page: z.number().check(z.int()),
  has_more: z.boolean(),
  pages_total: z.number().check(z.int()),
  readme: z.string(),
  header: z.string(),
  write: z.boolean(),
  provider: z.string(),
  direct_upload_tools: z.optional(z.array(z.string())).openapi({
    description: 'OpenList\'s: `["HttpDirect"]` where the caller may write and the storage offers direct uploads',
  }),
});
const GetData = z.object({
  ...ObjectShape,
  raw_url: z
    .string()
    .openapi({ description: "Where the file's bytes are: the upstream's URL, or this server's /p link" }),
  readme: z.string(),
  header: z.string(),
  provider: z.string(),
  related: z.nullable(z.array(z.object(ObjectShape))),
});
/** The tasks a transfer between storages started, one per name (as /api/task/{copy,move}/info answers each). */
const Tasks = z.object({
  tasks: z.array(z.record(z.string(), z.unknown()).openapi({ description: "A background task, AList's task object" })),
});

/** What /api/fs/put and /api/fs/form answer. */
const uploaded = envelopeResponse(z.nullable(z.object({ task: z.record(z.string(), z.unknown()) })), "Uploaded");

/** A JSON write route's documentation (writeRoute in writes.ts). */
const fileWrite = (summary: string, data: z.ZodMiniType = z.null(), answer = "Done") => ({
  tags: ["fs"],
  summary,
  responses: envelopeResponse(data, answer),
});

/** `/d/{path}` and `/p/{path}` (download.ts), served outside `app.openapi`. */
const downloadDocs = (kind: "d" | "p") => ({
  tags: ["fs"],
  summary:
    kind === "d"
      ? "Download: 302 to the upstream where the storage allows it, else the bytes (as /p). HEAD too."
      : "Proxy: the bytes through this server, with Range and conditional requests. HEAD too.",
  request: {
    params: z.object({
      path: z.string().openapi({ description: "The file's full path, percent-encoded per segment" }),
    }),
    query: z.object({
      sign: z.optional(z.string()).openapi({ description: "The sign from fs/list or fs/get, when one is needed" }),
    }),
  },
  responses: {
    200: {
      description: "The file; or, with HTTP 200 too, an envelope with code 401 (sign), 403 (proxy not allowed) or 500",
      content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
    },
    ...(kind === "d" ? { 302: { description: "To the upstream's URL" } } : {}),
    206: { description: "The requested range" },
  },
});

export const routeDocs: RouteDocs = {
  "post /api/fs/batch_rename": fileWrite(
    "Rename several names of one folder; stops at the first failure and says which were renamed",
  ),
  "post /api/fs/regex_rename": fileWrite(
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the summary names the replacement syntax
    "Rename the names of a folder matching a regular expression (JavaScript syntax; $1 and ${name} expand groups)",
  ),
  "post /api/fs/recursive_move": fileWrite(
    "Move every file below a folder into another folder of the same storage (flattened)",
  ),
  "post /api/fs/remove_empty_directory": fileWrite("Delete the empty folders below a folder (not the folder itself)"),
  "post /api/fs/mkdir": fileWrite("Create a folder and the missing folders above it"),
  "post /api/fs/rename": fileWrite("Rename a file or folder in place"),
  "post /api/fs/move": fileWrite(
    "Move names into another folder: inside a storage at once; to another storage, one background task per name",
    z.nullable(Tasks),
    "Moved (null), or the tasks moving names to another storage",
  ),
  "post /api/fs/copy": fileWrite(
    "Copy names into another folder: inside a storage at once; to another storage, one background task per name",
    Tasks,
    "Copied; `tasks` lists the tasks copying names to another storage",
  ),
  "post /api/fs/remove": fileWrite("Delete names from a folder; a name that does not exist counts as deleted"),
  "post /api/fs/link": fileWrite(
    "Admins: the upstream link of a file, credentials included (full path, not joined)",
    z.record(z.string(), z.unknown()),
  ),
  "get /d/{path}": downloadDocs("d"),
  "get /p/{path}": downloadDocs("p"),
  "post /api/fs/list": {
    tags: ["fs"],
    summary: "A folder's entries, filtered to what the caller may see, one page",
    responses: envelopeResponse(ListData, "One page of the folder"),
  },
  "post /api/fs/get": {
    tags: ["fs"],
    summary: "One file or folder, with its raw_url and the related files beside it",
    responses: envelopeResponse(GetData, "The object"),
  },
  "post /api/fs/dirs": {
    tags: ["fs"],
    summary: "The folders of a folder (the web UI's folder chooser)",
    responses: envelopeResponse(
      z.nullable(z.array(z.object({ name: z.string(), modified: z.string() }))),
      "The folders; null when there are none",
    ),
  },
  "post /api/fs/other": {
    tags: ["fs"],
    summary: "A driver's extra operation; code 500 `not implement` for drivers without one",
    responses: envelopeResponse(z.nullable(z.record(z.string(), z.unknown())), "What the driver answers"),
  },
  "put /api/fs/put": {
    tags: ["fs"],
    summary: "Upload the request body as a file (File-Path header, percent-encoded); streamed to the storage",
    responses: uploaded,
  },
  "put /api/fs/form": {
    tags: ["fs"],
    summary:
      "Upload the `file` part of a multipart/form-data body (headers as /api/fs/put); streamed, so the file must be the form's last part",
    responses: uploaded,
  },
};
