// The documentation of the shares routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const Share = z.object({
  id: z.string(),
  expires: z.nullable(z.string()).openapi({ description: "RFC 3339; null never expires" }),
  pwd: z.string().openapi({ description: "Always empty, except in the reply that set the code" }),
  pwd_hash: z
    .string()
    .openapi({ description: 'The stored form of the code ("" when none): posted back, it keeps the code' }),
  accessed: z.number().check(z.int()).openapi({ description: "Downloads delivered" }),
  max_accessed: z.number().check(z.int()).openapi({ description: "0: no limit" }),
  disabled: z.boolean(),
  remark: z.string(),
  readme: z.string(),
  header: z.string(),
  order_by: z.string(),
  order_direction: z.string(),
  extract_folder: z.string(),
  files: z.array(z.string()),
  creator: z.string(),
  creator_role: z.number().check(z.int()).openapi({ description: "0 user, 1 guest, 2 admin" }),
});

const change = (summary: string) => ({
  tags: ["shares"],
  summary,
  responses: envelopeResponse(z.null(), "Done"),
});

export const routeDocs: RouteDocs = {
  "post /api/share/delete": change("Delete a share link: its links stop working on the next request"),
  "post /api/share/enable": change("Enable a disabled share link"),
  "post /api/share/disable": change("Disable a share link until it is enabled again"),
  "get /api/share/list": {
    tags: ["shares"],
    summary: "The caller's share links (the admin: everyone's), by id",
    responses: envelopeResponse(z.object({ content: z.array(Share), total: z.number().check(z.int()) }), "One page"),
  },
  "get /api/share/get": {
    tags: ["shares"],
    summary: "One of the caller's share links (the admin: anyone's)",
    responses: envelopeResponse(Share, "The share"),
  },
  "post /api/share/create": {
    tags: ["shares"],
    summary: "Share files or folders (full paths) by a link; needs the share bit at each path",
    responses: envelopeResponse(Share, "The new share"),
  },
  "post /api/share/update": {
    tags: ["shares"],
    summary: "Change a share link whole; the access counter stays, the code stays unless a new one is given",
    responses: envelopeResponse(Share, "The share as saved"),
  },
  "get /sd/{path}": {
    tags: ["shares"],
    summary: "A shared file's bytes (Range and HEAD too), through this server; refusals carry a real HTTP status",
    request: {
      // The code comes as `?pwd=` (the web UI's links) or a `?sign=` (fs/get's raw_url in a share);
      // they are not listed as parameters: /sd answers files and plain-text refusals, no envelope.
      params: z.object({
        path: z.string().openapi({
          description:
            "`<share id>/<path inside the share>`, percent-encoded per segment; add `?pwd=<code>` or raw_url's `?sign=`",
        }),
      }),
    },
    responses: {
      200: {
        description: "The file; each delivered GET counts one access",
        content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
      },
      206: { description: "The requested range (counts one access too)" },
      403: { description: "Wrong code, share disabled, or its creator may no longer share it" },
      404: { description: "No such share, or nothing of that name in it" },
      410: { description: "The share expired or has no downloads left" },
      429: { description: "Too many wrong codes" },
    },
  },
  "get /sad/{path}": {
    tags: ["shares"],
    summary:
      "One entry of a shared ZIP (Range and HEAD too), while share_archive_preview is on; the web UI's /ae/<share id>/… links too",
    request: {
      params: z.object({
        path: z.string().openapi({
          description:
            "`<share id>/<the ZIP's path inside the share>`, percent-encoded per segment; add `?inner=<entry>`, `&pass=` (the ZIP's password), and `?pwd=<code>` or archive/meta raw_url's `?sign=`",
        }),
      }),
    },
    responses: {
      200: {
        description: "The entry; each delivered GET counts one access of the share",
        content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
      },
      206: { description: "The requested range (counts one access too)" },
      400: { description: "Not a ZIP, a folder, a wrong archive password, or the archive refused" },
      403: {
        description:
          "Wrong code, archives not allowed in shares (the setting), or the creator may not read archives there",
      },
      404: { description: "No such share, or nothing of that name in it or in the ZIP" },
      410: { description: "The share expired or has no downloads left" },
      429: { description: "Too many wrong codes" },
    },
  },
};
