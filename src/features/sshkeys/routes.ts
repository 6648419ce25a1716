// SFTP public keys: a user's own (/api/me/sshkey/*) and an admin's view of anyone's (AList v3.58.0
// server/handles/sshkey.go:17-120).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { accountOnly, adminOnly, planned, reading } from "../../auth/guard.ts";
import { wellFormed } from "../../http/text.ts";
import { ok } from "../../http/envelope.ts";
import { fromQuery, idParam, pageWindow, pagingParams } from "../../http/params.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { USER_INVALID } from "./messages.ts";
import { MAX_KEY_TEXT } from "./parse.ts";
import { addOwnKey, foundUserKeys, removeKey } from "./rules.ts";
import { keyPage } from "./store.ts";

export { MAX_KEYS_PER_USER } from "./rules.ts";

/** The guest has no keys; AList answers it 401 `user invalid`. */
const ownKeys = accountOnly(401, USER_INVALID);

const SshKey = z.object({
  id: z.number().check(z.int()),
  title: z.string(),
  fingerprint: z.string().openapi({ example: "SHA256:NmLCfiO0z3fX+xm9bHY/mv7o11XWrlXV0Ov/s9NqO9k" }),
  added_time: z.string().openapi({ description: "RFC 3339" }),
  last_used_time: z.string().openapi({ description: "RFC 3339" }),
});
const KeyPage = z.object({ content: z.array(SshKey), total: z.number().check(z.int()) });

const ownPlan = fromQuery(z.object(pagingParams), (db, query, callerId) => keyPage(db, callerId, pageWindow(query)));
const userPlan = fromQuery(z.object({ uid: idParam, ...pagingParams }), (db, query) =>
  keyPage(db, query.uid, pageWindow(query)),
);

const listOwn = createRoute({
  method: "get",
  path: "/api/me/sshkey/list",
  tags: ["sshkeys"],
  summary: "The caller's SSH public keys, by id (the key text is never returned)",
  ...reading(ownKeys, ownPlan),
  request: { query: z.object(pagingParams) },
  responses: envelopeResponse(KeyPage, "A page of keys"),
});

const addOwn = createRoute({
  method: "post",
  path: "/api/me/sshkey/add",
  tags: ["sshkeys"],
  summary: "Add an OpenSSH public key (ed25519, rsa, ecdsa, and their sk- variants)",
  ...ownKeys,
  request: {
    body: jsonBody(
      z.object({
        title: wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(255))),
        key: z.string().check(z.minLength(1), z.maxLength(MAX_KEY_TEXT + 1024)),
      }),
    ),
  },
  responses: envelopeResponse(z.null(), "Added"),
});

const deleteOwn = createRoute({
  method: "post",
  path: "/api/me/sshkey/delete",
  tags: ["sshkeys"],
  summary: "Delete one of the caller's keys",
  ...ownKeys,
  request: { query: z.object({ id: idParam }) },
  responses: envelopeResponse(z.null(), "Deleted"),
});

const listOfUser = createRoute({
  method: "get",
  path: "/api/admin/user/sshkey/list",
  tags: ["sshkeys", "admin"],
  summary: "A user's SSH public keys",
  ...reading(adminOnly, userPlan),
  request: { query: z.object({ uid: idParam, ...pagingParams }) },
  responses: envelopeResponse(KeyPage, "A page of keys"),
});

const deleteOfUser = createRoute({
  method: "post",
  path: "/api/admin/user/sshkey/delete",
  tags: ["sshkeys", "admin"],
  summary: "Delete anyone's key",
  ...adminOnly,
  request: { query: z.object({ id: idParam }) },
  responses: envelopeResponse(z.null(), "Deleted"),
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
