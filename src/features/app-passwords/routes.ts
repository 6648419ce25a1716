// App passwords (/api/me/app_password/*): the way a WebDAV client signs in without the account's
// own password, and the only way for a user with two-factor on (FILES.md §3.9). Each is random,
// shown once, stored as a hash, listed with its last use, and revoked on its own; a password
// change ends them all.
import type { SQL } from "drizzle-orm";
import type { Context } from "hono";
import * as z from "zod";
import { createRoute } from "../../http/openapi.ts";
import { accountOnly, planned, reading } from "../../auth/guard.ts";
import { sha256Hex } from "../../auth/encoding.ts";
import { randomAlphanumeric } from "../../auth/random.ts";
import { ok } from "../../http/envelope.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { idParam } from "../../http/params.ts";
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { wellFormed } from "../../http/text.ts";
import type { AppEnv } from "../../http/context.ts";
import { addAppPassword, appPasswordList, deleteAppPassword } from "./store.ts";

/** Enough for every device a person owns; stops one account from filling the table. */
export const MAX_APP_PASSWORDS = 50;

/** The prefix tells a leaked app password apart in logs and secret scanners; 32 characters carry 190 bits. */
export const APP_PASSWORD_PREFIX = "gh-app-";
export const newAppPassword = () => APP_PASSWORD_PREFIX + randomAlphanumeric(32);

/** The guest has no app passwords. */
const ownPasswords = accountOnly(401, "user invalid");

const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString();

const AppPassword = z.object({
  id: z.number().int(),
  name: z.string(),
  created: z.string().openapi({ description: "RFC 3339" }),
  last_used: z.string().nullable().openapi({ description: "RFC 3339; null until first used. Updated at most once a minute." }),
});

/** The caller's app passwords, read in the guard's batch. */
const listPlan = (c: Context<AppEnv>, callerId: SQL) => appPasswordList(c.var.db, callerId);

const list = createRoute({
  method: "get",
  path: "/api/me/app_password/list",
  tags: ["app passwords"],
  summary: "The caller's app passwords (names and use, never the passwords)",
  ...reading(ownPasswords, listPlan),
  responses: envelopeResponse(z.array(AppPassword), "The app passwords, oldest first"),
});

const create = createRoute({
  method: "post",
  path: "/api/me/app_password/create",
  tags: ["app passwords"],
  summary: "Make an app password for a WebDAV client; the password is in this reply and never again",
  ...ownPasswords,
  request: { body: jsonBody(z.object({ name: wellFormed(z.string().trim().min(1).max(100)).openapi({ example: "rclone on my laptop" }) })) },
  responses: envelopeResponse(AppPassword.extend({ password: z.string().openapi({ example: "gh-app-3fQ9…" }) }), "Made"),
});

const remove = createRoute({
  method: "post",
  path: "/api/me/app_password/delete",
  tags: ["app passwords"],
  summary: "Revoke one of the caller's app passwords: WebDAV refuses it from the next request",
  ...ownPasswords,
  request: { query: z.object({ id: idParam }) },
  responses: envelopeResponse(z.null(), "Revoked"),
});

export function registerAppPasswordRoutes(app: Router) {
  app.openapi(list, async (c) => {
    const rows = await planned(c, listPlan);
    return ok(
      c,
      rows.map((row) => ({ id: row.id, name: row.name, created: rfc3339(row.createdAt), last_used: row.lastUsedAt > 0 ? rfc3339(row.lastUsedAt) : null })),
    );
  });

  app.openapi(create, async (c) => {
    const { name } = c.req.valid("json");
    const password = newAppPassword();
    const now = Math.floor(Date.now() / 1000);
    const hash = await sha256Hex(password);
    const id = await refuseDuplicate("an app password with this name already exists", addAppPassword(c.var.db, { userId: c.var.caller.user.id, name, hash, now }, MAX_APP_PASSWORDS));
    if (id === null) throw new ApiError(400, `a user can have at most ${MAX_APP_PASSWORDS} app passwords`);
    return ok(c, { id, name, created: rfc3339(now), last_used: null, password });
  });

  app.openapi(remove, async (c) => {
    // Someone else's and a missing one answer alike.
    if (!(await deleteAppPassword(c.var.db, c.req.valid("query").id, c.var.caller.user.id))) throw new ApiError(404, "app password not found");
    return ok(c, null);
  });
}
