// The web UI's torrent tools (OpenList server/handles/torrent.go): `parse` reads a .torrent the
// browser sends as Base64 and answers what is in it, in the Worker and without disk; `rapid_upload`
// is refused with its reason (docs/decisions.md D18.5).
import * as z from "zod/mini";
import { signedIn } from "../../auth/guard.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { RAPID_UPLOAD_UNAVAILABLE } from "./messages.ts";
import { MAX_TORRENT_BASE64, summarizeTorrent, torrentBytes } from "./rules.ts";

const torrentData = z
  .string({ error: "is required" })
  .check(z.minLength(1, { error: "is required" }), z.maxLength(MAX_TORRENT_BASE64 + 1))
  .openapi({ description: "The .torrent file, Base64 (at most 10 MiB decoded)" });

const parse = createRoute({
  method: "post",
  path: "/api/fs/torrent/parse",
  ...signedIn,
  request: { body: jsonBody(z.object({ torrent_data: torrentData })) },
});

const rapidUpload = createRoute({
  method: "post",
  path: "/api/fs/torrent/rapid_upload",
  ...signedIn,
  request: { body: jsonBody(z.object({ torrent_data: torrentData, path: z.string().check(z.maxLength(4096)) })) },
});

export function registerTorrentRoutes(app: Router) {
  app.openapi(parse, async (c) => ok(c, await summarizeTorrent(torrentBytes(c.req.valid("json").torrent_data))));
  app.openapi(rapidUpload, () => {
    throw new ApiError(400, RAPID_UPLOAD_UNAVAILABLE);
  });
}
