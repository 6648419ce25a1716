// Metas (AList v3.58.0 server/handles/meta.go): per-folder passwords, hide patterns, readme, header
// and write grants, admin only. Every file request reads them fresh, so a change applies from the
// next request (docs/decisions.md D8.5: no stale caches, no negative cache).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly, planned, reading } from "../../auth/guard.ts";
import { ok } from "../../http/envelope.ts";
import { fromQuery, idParam, pageWindow, pagingParams } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { wellFormed } from "../../http/text.ts";
import { changeMeta, createMeta, foundMeta, removeMeta } from "./rules.ts";
import { metaById, metaPage, type MetaRow } from "./store.ts";

const MetaFieldsShape = {
  path: wellFormed(z.string().check(z.minLength(1, { error: "is required" }), z.maxLength(4096))).openapi({
    example: "/s3/private",
  }),
  password: z._default(z.string().check(z.maxLength(1024)), ""),
  p_sub: z._default(z.boolean(), false).openapi({ description: "The password also guards everything below" }),
  write: z
    ._default(z.boolean(), false)
    .openapi({ description: "Anyone who may open the folder may create folders and upload in it" }),
  w_sub: z._default(z.boolean(), false),
  hide: z._default(z.string().check(z.maxLength(65536)), "").openapi({
    description:
      "Regular expressions (JavaScript syntax), one a line, matched against entry names; empty lines are skipped",
  }),
  h_sub: z._default(z.boolean(), false),
  readme: z._default(z.string().check(z.maxLength(1_000_000)), ""),
  r_sub: z._default(z.boolean(), false),
  header: z._default(z.string().check(z.maxLength(1_000_000)), ""),
  header_sub: z._default(z.boolean(), false),
};

const CreateBody = z.object(MetaFieldsShape);
const UpdateBody = z.object({ id: z.number().check(z.int(), z.positive()), ...MetaFieldsShape });

const listPlan = fromQuery(z.object(pagingParams), (db, query) => metaPage(db, pageWindow(query)));
const getPlan = fromQuery(z.object({ id: idParam }), (db, { id }) => metaById(db, id));

const list = createRoute({
  method: "get",
  path: "/api/admin/meta/list",
  ...reading(adminOnly, listPlan),
  request: { query: z.object(pagingParams) },
});

const get = createRoute({
  method: "get",
  path: "/api/admin/meta/get",
  ...reading(adminOnly, getPlan),
  request: { query: z.object({ id: idParam }) },
});

const create = createRoute({
  method: "post",
  path: "/api/admin/meta/create",
  ...adminOnly,
  request: { body: jsonBody(CreateBody) },
});

const update = createRoute({
  method: "post",
  path: "/api/admin/meta/update",
  ...adminOnly,
  request: { body: jsonBody(UpdateBody) },
});

const remove = createRoute({
  method: "post",
  path: "/api/admin/meta/delete",
  ...adminOnly,
  request: { query: z.object({ id: idParam }) },
});

function toWire(row: MetaRow) {
  return {
    id: row.id,
    path: row.path,
    password: row.password,
    p_sub: row.passwordSub,
    write: row.write,
    w_sub: row.writeSub,
    hide: row.hide,
    h_sub: row.hideSub,
    readme: row.readme,
    r_sub: row.readmeSub,
    header: row.header,
    header_sub: row.headerSub,
  };
}

export function registerMetaRoutes(app: Router) {
  app.openapi(list, async (c) => {
    const { rows, total } = await planned(c, listPlan);
    return ok(c, { content: rows.map(toWire), total });
  });

  app.openapi(get, async (c) => ok(c, toWire(foundMeta(await planned(c, getPlan)))));

  app.openapi(create, async (c) => {
    await createMeta(c.var.db, c.req.valid("json"));
    return ok(c, null);
  });

  app.openapi(update, async (c) => {
    const { id, ...body } = c.req.valid("json");
    await changeMeta(c.var.db, id, body);
    return ok(c, null);
  });

  app.openapi(remove, async (c) => {
    await removeMeta(c.var.db, c.req.valid("query").id);
    return ok(c, null);
  });
}
