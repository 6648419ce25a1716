// App passwords (/api/me/app_password/*): the way a WebDAV client signs in without the account's
// own password, and the only way for a user with two-factor on (docs/decisions.md D8.9). Each is random,
// shown once, stored as a hash, listed with its last use, and revoked on its own; a password
// change ends them all.
import type { SQL } from "drizzle-orm";
import type { Context } from "hono";
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { accountOnly, planned, reading } from "../../auth/guard.ts";
import { ok } from "../../http/envelope.ts";
import { idParam } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { wellFormed } from "../../http/text.ts";
import type { AppEnv } from "../../http/context.ts";
import { USER_INVALID } from "../sshkeys/messages.ts";
import { makeAppPassword, revokeAppPassword } from "./rules.ts";
import { appPasswordList } from "./store.ts";

export { MAX_APP_PASSWORDS } from "./rules.ts";

/** The guest has no app passwords; refused with the SSH key routes' words. */
const ownPasswords = accountOnly(401, USER_INVALID);

const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The caller's app passwords, read in the guard's batch. */
const listPlan = (c: Context<AppEnv>, callerId: SQL) => appPasswordList(c.var.db, callerId);

const list = createRoute({
  method: "get",
  path: "/api/me/app_password/list",
  ...reading(ownPasswords, listPlan),
});

const create = createRoute({
  method: "post",
  path: "/api/me/app_password/create",
  ...ownPasswords,
  request: {
    body: jsonBody(
      z.object({
        name: wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))).openapi({
          example: "rclone on my laptop",
        }),
      }),
    ),
  },
});

const remove = createRoute({
  method: "post",
  path: "/api/me/app_password/delete",
  ...ownPasswords,
  request: { query: z.object({ id: idParam }) },
});

export function registerAppPasswordRoutes(app: Router) {
  app.openapi(list, async (c) => {
    const rows = await planned(c, listPlan);
    return ok(
      c,
      rows.map((row) => ({
        id: row.id,
        name: row.name,
        created: rfc3339(row.createdAt),
        last_used: row.lastUsedAt > 0 ? rfc3339(row.lastUsedAt) : null,
      })),
    );
  });

  app.openapi(create, async (c) => {
    const { name } = c.req.valid("json");
    const { id, password, createdAt } = await makeAppPassword(c.var.db, c.var.caller.user.id, name);
    return ok(c, { id, name, created: rfc3339(createdAt), last_used: null, password });
  });

  app.openapi(remove, async (c) => {
    await revokeAppPassword(c.var.db, c.req.valid("query").id, c.var.caller.user.id);
    return ok(c, null);
  });
}
