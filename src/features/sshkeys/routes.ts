// SFTP public keys: a user's own (/api/me/sshkey/*) and an admin's view of anyone's (AList v3.58.0
// server/handles/sshkey.go:17-120).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { accountOnly, adminOnly, planned, reading } from "../../auth/guard.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { fromQuery, idParam, pageWindow, pagingParams } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { USER_INVALID } from "./messages.ts";
import { MAX_KEY_TEXT } from "./parse.ts";
import { addOwnKey, foundUserKeys, removeKey } from "./rules.ts";
import { keyPage } from "./store.ts";

export { MAX_KEYS_PER_USER } from "./rules.ts";

/** The guest has no keys; AList answers it 401 `user invalid`. */
const ownKeys = accountOnly(401, USER_INVALID);

const ownPlan = fromQuery(z.object(pagingParams), (db, query, callerId) => keyPage(db, callerId, pageWindow(query)));
const userPlan = fromQuery(z.object({ uid: idParam, ...pagingParams }), (db, query) =>
  keyPage(db, query.uid, pageWindow(query)),
);

const listOwn = createRoute({
  method: "get",
  path: "/api/me/sshkey/list",
  ...reading(ownKeys, ownPlan),
  request: { query: z.object(pagingParams) },
});

const addOwn = createRoute({
  method: "post",
  path: "/api/me/sshkey/add",
  ...ownKeys,
  request: {
    body: jsonBody(
      z.object({
        title: wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(255))),
        key: z.string().check(z.minLength(1), z.maxLength(MAX_KEY_TEXT + 1024)),
      }),
    ),
  },
});

const deleteOwn = createRoute({
  method: "post",
  path: "/api/me/sshkey/delete",
  ...ownKeys,
  request: { query: z.object({ id: idParam }) },
});

const listOfUser = createRoute({
  method: "get",
  path: "/api/admin/user/sshkey/list",
  ...reading(adminOnly, userPlan),
  request: { query: z.object({ uid: idParam, ...pagingParams }) },
});

const deleteOfUser = createRoute({
  method: "post",
  path: "/api/admin/user/sshkey/delete",
  ...adminOnly,
  request: { query: z.object({ id: idParam }) },
});

const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString();
const toWire = (key: { id: number; title: string; fingerprint: string; addedAt: number; lastUsedAt: number }) => ({
  id: key.id,
  title: key.title,
  fingerprint: key.fingerprint,
  added_time: rfc3339(key.addedAt),
  last_used_time: rfc3339(key.lastUsedAt),
});

export function registerSshKeyRoutes(app: Router) {
  app.openapi(listOwn, async (c) => {
    const page = await planned(c, ownPlan);
    return ok(c, { content: page.content.map(toWire), total: page.total });
  });

  app.openapi(addOwn, async (c) => {
    await addOwnKey(c.var.db, c.var.caller.user.id, c.req.valid("json"));
    return ok(c, null);
  });

  app.openapi(deleteOwn, async (c) => {
    await removeKey(c.var.db, c.req.valid("query").id, c.var.caller.user.id);
    return ok(c, null);
  });

  app.openapi(listOfUser, async (c) => {
    const page = foundUserKeys(await planned(c, userPlan));
    return ok(c, { content: page.content.map(toWire), total: page.total });
  });

  app.openapi(deleteOfUser, async (c) => {
    await removeKey(c.var.db, c.req.valid("query").id, null);
    return ok(c, null);
  });
}
