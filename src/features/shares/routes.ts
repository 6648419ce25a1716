// Share links in the wire the served web UI speaks (OpenList server/router.go:193-199,
// server/handles/sharing.go): /api/share/{list,get,create,update,delete,enable,disable} for their
// owners (the admin: every share), and `/sd/<id>/<path>` downloads for anyone with the link.
// Browsing a share goes through /api/fs/list, /api/fs/get and /api/fs/archive/{meta,list}
// (`registerShareBrowsing`, ahead of the file side's own routes). The rules
// are rules.ts, the queries store.ts, the texts messages.ts; docs/files.md has the behaviour.
import * as z from "zod/mini";
import { accountOnly, isAdmin, planned, reading } from "../../auth/guard.ts";
import type { Caller } from "../../auth/caller.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import { fromQuery, pageWindow, pagingParams } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { viewerOf } from "../fs/rules.ts";
import { GUEST_REFUSED, ID_TAKEN, SHARE_NOT_FOUND } from "./messages.ts";
import { expiresAt, randomId, requireMayShare, requireValidId, sharedPaths, shareReply, storedCode } from "./rules.ts";
import {
  deleteShare,
  findShare,
  insertShare,
  managedShare,
  setShareDisabled,
  sharePage,
  updateShare,
  type ShareFields,
} from "./store.ts";
import { shareArchiveDownload, sharedArchives } from "./archive.ts";
import { shareBrowsing, shareDownload } from "./use.ts";

const owners = accountOnly(403, GUEST_REFUSED);

const text = (max: number) => z._default(z.string().check(z.maxLength(max)), "");

const ShareBody = {
  files: z.array(z.string().check(z.maxLength(4096))).check(z.maxLength(100)),
  expires: z.optional(z.nullable(z.string().check(z.maxLength(64)))),
  pwd: text(1024),
  pwd_hash: z.optional(z.string().check(z.maxLength(256))),
  max_accessed: z
    ._default(z.nullable(z.number().check(z.int(), z.gte(0), z.lte(1_000_000_000))), 0)
    .openapi({ description: "0 or null: no limit (the UI sends null for an emptied field)" }),
  disabled: z._default(z.boolean(), false),
  remark: text(4096),
  readme: text(65536),
  header: text(65536),
  order_by: z._default(z.enum(["", "name", "size", "modified"]), ""),
  order_direction: z._default(z.enum(["", "asc", "desc"]), ""),
  extract_folder: z._default(z.enum(["", "front", "back"]), ""),
};

const idQuery = z.object({ id: z.string().check(z.minLength(1), z.maxLength(256)) });

const listPlan = fromQuery(z.object(pagingParams), (db, query, callerId) => sharePage(db, callerId, pageWindow(query)));
const getPlan = fromQuery(idQuery, (db, query, callerId) => managedShare(db, callerId, query.id));

const list = createRoute({
  method: "get",
  path: "/api/share/list",
  ...reading(owners, listPlan),
  request: { query: z.object(pagingParams) },
});

const get = createRoute({
  method: "get",
  path: "/api/share/get",
  ...reading(owners, getPlan),
  request: { query: idQuery },
});

const create = createRoute({
  method: "post",
  path: "/api/share/create",
  ...owners,
  request: {
    body: jsonBody(
      z.object({
        ...ShareBody,
        id: z.optional(z.string().check(z.maxLength(256))).openapi({ description: "A chosen id: needs bit 15" }),
      }),
    ),
  },
});

const update = createRoute({
  method: "post",
  path: "/api/share/update",
  ...owners,
  request: {
    body: jsonBody(
      z.object({
        ...ShareBody,
        id: z.string().check(z.minLength(1), z.maxLength(256)),
        new_id: z.optional(z.string().check(z.maxLength(256))),
      }),
    ),
  },
});

const change = (action: "delete" | "enable" | "disable") =>
  createRoute({ method: "post", path: `/api/share/${action}`, ...owners, request: { query: idQuery } });

/** The caller's own shares, or (null) every share for the admin. */
const scopeOf = (caller: Caller) => (isAdmin(caller) ? null : caller.user.id);

type Body = z.output<z.ZodMiniObject<typeof ShareBody>>;

async function fieldsOf(body: Body, files: string[]): Promise<ShareFields> {
  return {
    files,
    expiresAtMs: expiresAt(body.expires),
    codeHash: await storedCode(body.pwd, body.pwd_hash),
    maxAccessed: body.max_accessed ?? 0,
    disabled: body.disabled,
    remark: body.remark,
    readme: body.readme,
    header: body.header,
    orderBy: body.order_by,
    orderDirection: body.order_direction,
    extractFolder: body.extract_folder,
  };
}

/**
 * Share browsing, registered by src/app.ts ahead of the file side's routes of the same paths: a
 * path under `/@s/` is a share's, answered here without an account (use.ts, archive.ts); any other
 * goes on to the file side's guard and route.
 */
export function registerShareBrowsing(app: Router) {
  app.post("/api/fs/list", shareBrowsing("list"));
  app.post("/api/fs/get", shareBrowsing("get"));
  app.post("/api/fs/archive/meta", sharedArchives("meta"));
  app.post("/api/fs/archive/list", sharedArchives("list"));
}

export function registerShareRoutes(app: Router) {
  app.openapi(list, async (c) => {
    const { rows, total } = await planned(c, listPlan);
    return ok(c, { content: rows.map((row) => shareReply(row)), total });
  });

  app.openapi(get, async (c) => {
    const found = await planned(c, getPlan);
    if (!found) throw new ApiError(404, SHARE_NOT_FOUND);
    return ok(c, shareReply(found));
  });

  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const caller = c.var.caller;
    const files = sharedPaths(body.files);
    const chosen = body.id !== undefined && body.id !== "";
    if (chosen) requireValidId(body.id!);
    requireMayShare(viewerOf(caller), files, chosen);
    const row = { ...(await fieldsOf(body, files)), creatorId: caller.user.id, accessed: 0 };
    // OpenList's ids: 8 random letters and digits, one more after each collision, up to 11.
    let id = chosen ? body.id! : randomId(8);
    while (!(await insertShare(c.var.db, { ...row, id }))) {
      if (chosen || id.length >= 11) throw new ApiError(chosen ? 400 : 500, ID_TAKEN);
      id += randomId(1);
    }
    const made = await findShare(c.var.db, id, caller.user.id);
    return ok(c, shareReply(made!, body.pwd));
  });

  app.openapi(update, async (c) => {
    const body = c.req.valid("json");
    const caller = c.var.caller;
    const files = sharedPaths(body.files);
    const newId = body.new_id !== undefined && body.new_id !== "" && body.new_id !== body.id ? body.new_id : body.id;
    if (newId !== body.id) requireValidId(newId);
    requireMayShare(viewerOf(caller), files, newId !== body.id);
    const outcome = await updateShare(c.var.db, body.id, scopeOf(caller), await fieldsOf(body, files), newId);
    if (outcome === "missing") throw new ApiError(404, SHARE_NOT_FOUND);
    if (outcome === "taken") throw new ApiError(400, ID_TAKEN);
    const saved = await findShare(c.var.db, newId, null);
    return ok(c, shareReply(saved!, body.pwd));
  });

  app.openapi(change("delete"), async (c) => {
    if (!(await deleteShare(c.var.db, c.req.valid("query").id, scopeOf(c.var.caller))))
      throw new ApiError(404, SHARE_NOT_FOUND);
    return ok(c, null);
  });

  for (const [action, disabled] of [
    ["enable", false],
    ["disable", true],
  ] as const) {
    app.openapi(change(action), async (c) => {
      if (!(await setShareDisabled(c.var.db, c.req.valid("query").id, scopeOf(c.var.caller), disabled)))
        throw new ApiError(404, SHARE_NOT_FOUND);
      return ok(c, null);
    });
  }

  // HEAD is answered by the GET route (Hono), without a body.
  app.get("/sd/:path{.+}", shareDownload);
  app.openAPIRegistry.registerPath({ method: "get", path: "/sd/{path}" });

  app.get("/sad/:path{.+}", shareArchiveDownload);
  app.openAPIRegistry.registerPath({ method: "get", path: "/sad/{path}" });
}
