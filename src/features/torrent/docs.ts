// The documentation of the torrent routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const tags = ["fs"];

export const routeDocs: RouteDocs = {
  "post /api/fs/torrent/parse": {
    summary: "What a .torrent holds: name, files and sizes, pieces and info hash (nothing is stored)",
    tags,
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
  },
  "post /api/fs/torrent/rapid_upload": {
    summary: "Refused (code 400): rapid upload by a torrent's hashes needs a storage driver Gatehouse does not have",
    tags,
    responses: envelopeResponse(z.null(), "Never"),
  },
};
