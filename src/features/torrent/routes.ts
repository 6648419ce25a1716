// The web UI's torrent tools (OpenList server/handles/torrent.go): `parse` reads a .torrent the
// browser sends as Base64 and answers what is in it, in the Worker and without disk; `rapid_upload`
// is refused with its reason (docs/decisions.md D18.5).
import * as z from "zod/mini";
import { signedIn } from "../../auth/guard.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { RAPID_UPLOAD_UNAVAILABLE } from "./messages.ts";
import { MAX_TORRENT_BASE64, summarizeTorrent, torrentBytes } from "./rules.ts";

const tags = ["fs"];

const torrentData = z
  .string({ error: "is required" })
  .check(z.minLength(1, { error: "is required" }), z.maxLength(MAX_TORRENT_BASE64 + 1))
  .openapi({ description: "The .torrent file, Base64 (at most 10 MiB decoded)" });

const parse = createRoute({
  method: "post",
  path: "/api/fs/torrent/parse",
  summary: "What a .torrent holds: name, files and sizes, pieces and info hash (nothing is stored)",
  tags,
  ...signedIn,
  request: { body: jsonBody(z.object({ torrent_data: torrentData })) },
  responses: envelopeResponse(
    z.object({
      name: z.string(),
      total_size: z.number().check(z.int()),
      piece_length: z.number().check(z.int()),
      piece_count: z.number().check(z.int()),
      info_hash: z.string().openapi({ description: "SHA-1 of the info dictionary, hex (BitTorrent v1)" }),
      files: z.array(z.object({ path: z.string(), size: z.number().check(z.int()) })),
      has_cas: z.boolean(),
      cas: z.optional(
        z.object({
          file_md5: z.string(),
          slice_md5: z.string(),
          slice_size: z.number().check(z.int()),
          cloud: z.string(),
        }),
      ),
    }),
    "The torrent's contents; a malformed file is code 400 naming the fault",
  ),
});

const rapidUpload = createRoute({
  method: "post",
  path: "/api/fs/torrent/rapid_upload",
  summary: "Refused (code 400): rapid upload by a torrent's hashes needs a storage driver Gatehouse does not have",
  tags,
  ...signedIn,
  request: { body: jsonBody(z.object({ torrent_data: torrentData, path: z.string().check(z.maxLength(4096)) })) },
  responses: envelopeResponse(z.null(), "Never"),
});

export function registerTorrentRoutes(app: Router) {
  app.openapi(parse, async (c) => ok(c, await summarizeTorrent(torrentBytes(c.req.valid("json").torrent_data))));
  app.openapi(rapidUpload, () => {
    throw new ApiError(400, RAPID_UPLOAD_UNAVAILABLE);
  });
}
