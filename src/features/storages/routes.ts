// The storage group: mounts, their life cycle, and the driver check behind each status
// (AList v3.58.0 server/handles/storage.go, docs/decisions.md D4.7-D4.8).
import * as z from "zod/mini";
import { run } from "../../db/plan.ts";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly, planned, reading } from "../../auth/guard.ts";
import { findDriver } from "../../drivers/index.ts";
import { ok, okJson } from "../../http/envelope.ts";
import { fromJson, fromQuery, idParam } from "../../http/params.ts";
import { cleanPath } from "../../lib/path.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { checkUnchecked, mountsToRead, recheckAll } from "./checks.ts";
import {
  changeStorage,
  createStorage,
  disableStorage,
  enableStorage,
  foundStorage,
  removeStorage,
  storageDraft,
} from "./rules.ts";
import { changeReads, readAllStorages, storageJsonOf, storagePage, storageUsage, storageWithMounts } from "./store.ts";
import { StorageBody, storageId } from "./wire.ts";

/** `?id=` as POSTs carry it: a positive integer; never "the first row" (docs/decisions.md D4.7). */
const IdQuery = z.object({ id: idParam });

const pageNumber = z
  .optional(z.pipe(z.string().check(z.regex(/^-?[0-9]{1,9}$/, { error: "must be an integer" })), z.transform(Number)))
  .openapi({ type: "integer" });

const storageBody = { body: jsonBody(StorageBody) };

const ListQuery = z.object({ page: pageNumber, per_page: pageNumber });

/** The window of rows a storage list asks for: `per_page` absent or below 1 is every row (AList). */
function storageListWindow(query: z.infer<typeof ListQuery>) {
  const perPage = query.per_page ?? 0;
  const limit = perPage < 1 ? null : perPage;
  return { limit, offset: limit === null ? 0 : (Math.max(1, query.page ?? 1) - 1) * limit };
}

const listPlan = fromQuery(ListQuery, (db, query) => storagePage(db, storageListWindow(query)));
const showPlan = fromQuery(IdQuery, (db, { id }) => storageJsonOf(db, id));
const enablePlan = fromQuery(IdQuery, (db, { id }) => storageWithMounts(db, id));
const usagePlan = fromQuery(IdQuery, (db, { id }) => storageUsage(db, id));
/** A create's or update's reads before the driver check; none for a body its validator refuses or an unknown driver. */
const changePlan = (id: (body: z.output<typeof StorageBody>) => number | null) =>
  fromJson(StorageBody, (db, body) => {
    const driver = findDriver(body.driver);
    const mountPath = cleanPath(body.mount_path);
    return changeReads(
      db,
      id(body),
      mountPath,
      driver && typeof body.addition === "string" ? mountsToRead(driver, body.addition) : [],
    );
  });
const createPlan = changePlan(() => null);
const updatePlan = changePlan((body) => {
  try {
    return storageId(body.id);
  } catch {
    return 0; // the handler refuses it
  }
});

const list = createRoute({
  method: "get",
  path: "/api/admin/storage/list",
  ...reading(adminOnly, listPlan),
  request: { query: ListQuery },
});

const get = createRoute({
  method: "get",
  path: "/api/admin/storage/get",
  ...reading(adminOnly, showPlan),
  request: { query: IdQuery },
});

const create = createRoute({
  method: "post",
  path: "/api/admin/storage/create",
  ...reading(adminOnly, createPlan),
  request: storageBody,
});

const update = createRoute({
  method: "post",
  path: "/api/admin/storage/update",
  ...reading(adminOnly, updatePlan),
  request: storageBody,
});

const remove = createRoute({
  method: "post",
  path: "/api/admin/storage/delete",
  ...reading(adminOnly, usagePlan),
  request: { query: IdQuery },
});

const enable = createRoute({
  method: "post",
  path: "/api/admin/storage/enable",
  ...reading(adminOnly, enablePlan),
  request: { query: IdQuery },
});

const disable = createRoute({
  method: "post",
  path: "/api/admin/storage/disable",
  ...adminOnly,
  request: { query: IdQuery },
});

const loadAll = createRoute({
  method: "post",
  path: "/api/admin/storage/load_all",
  ...adminOnly,
});

export function registerStorageRoutes(app: Router) {
  app.openapi(list, async (c) => {
    const listed = await planned(c, listPlan);
    if (listed.unchecked.length === 0) return okJson(c, listed.json);
    await checkUnchecked(c.var.db, listed.unchecked);
    return okJson(c, (await run(c.var.db, storagePage(c.var.db, storageListWindow(c.req.valid("query"))))).json);
  });

  app.openapi(get, async (c) => okJson(c, foundStorage(await planned(c, showPlan))));

  app.openapi(create, async (c) => {
    const draft = storageDraft(c.req.valid("json"), Date.now());
    const id = await createStorage(c.var.db, draft, await planned(c, createPlan));
    return ok(c, { id });
  });

  app.openapi(update, async (c) => {
    const body = c.req.valid("json");
    const id = storageId(body.id);
    const draft = storageDraft(body, Date.now());
    await changeStorage(c.var.db, id, draft, await planned(c, updatePlan));
    return ok(c, { id });
  });

  app.openapi(remove, async (c) => {
    const { id } = c.req.valid("query");
    await removeStorage(c.var.db, id, await planned(c, usagePlan));
    return ok(c, null);
  });

  app.openapi(enable, async (c) => {
    await enableStorage(c.var.db, await planned(c, enablePlan));
    return ok(c, null);
  });

  app.openapi(disable, async (c) => {
    await disableStorage(c.var.db, c.req.valid("query").id);
    return ok(c, null);
  });

  app.openapi(loadAll, async (c) => {
    const rows = await readAllStorages(c.var.db);
    c.executionCtx.waitUntil(recheckAll(c.var.db, rows));
    return ok(c, null);
  });
}
