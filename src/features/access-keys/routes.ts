// Access keys (/api/me/access_key/*, /api/admin/access_key/*; docs/decisions.md D16): scoped,
// expiring credentials for scripts (the API), WebDAV clients and S3 tools, grown out of app
// passwords (/api/me/app_password/* lists and makes the same rows). A key is shown once; its user
// lists and revokes its own, the admin anyone's. Keys themselves never reach these routes (the
// guard refuses a key anywhere but the file side).
import type { SQL } from "drizzle-orm";
import type { Context } from "hono";
import * as z from "zod/mini";
import { accountOnly, adminOnly, planned, reading } from "../../auth/guard.ts";
import { otpSealingKeys } from "../../env.ts";
import { ok } from "../../http/envelope.ts";
import { createRoute } from "../../http/openapi.ts";
import { fromQuery, pageWindow, pagingParams } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { wellFormed } from "../../http/text.ts";
import type { AppEnv } from "../../http/context.ts";
import { USER_INVALID } from "../sshkeys/messages.ts";
import { makeAccessKey, revokeAccessKey, seenPath } from "./rules.ts";
import { accessKeyList, accessKeyPage } from "./store.ts";

/** The guest has no keys; refused with the SSH key routes' words. */
const ownKeys = accountOnly(401, USER_INVALID);

const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString();

export const Usage = z.enum(["api", "webdav", "s3"]);

type ListedRow = {
  id: number;
  name: string;
  path: string;
  permission: number;
  expiresAt: number;
  usage: ("api" | "webdav" | "s3")[];
  accessKeyId: string | null;
  createdAt: number;
  lastUsedAt: number;
};

const toWire = (row: ListedRow, basePath: string) => ({
  id: row.id,
  name: row.name,
  path: seenPath(basePath, row.path),
  permission: row.permission,
  expires_at: row.expiresAt,
  usage: row.usage,
  access_key_id: row.accessKeyId,
  created: rfc3339(row.createdAt),
  last_used: row.lastUsedAt > 0 ? rfc3339(row.lastUsedAt) : null,
});

/** The caller's keys, read in the guard's batch. */
const listPlan = (c: Context<AppEnv>, callerId: SQL) => accessKeyList(c.var.db, callerId);
const adminPlan = fromQuery(z.object(pagingParams), (db, query) => accessKeyPage(db, pageWindow(query)));

const list = createRoute({
  method: "get",
  path: "/api/me/access_key/list",
  ...reading(ownKeys, listPlan),
});

const create = createRoute({
  method: "post",
  path: "/api/me/access_key/create",
  ...ownKeys,
  request: {
    body: jsonBody(
      z.object({
        name: wellFormed(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))).openapi({
          example: "backup script",
        }),
        path: z
          ._default(wellFormed(z.string().check(z.minLength(1), z.maxLength(4096))), "/")
          .openapi({ description: "A folder as the caller sees it; its base path by default", example: "/team/docs" }),
        permission: z.optional(z.number().check(z.int(), z.nonnegative())).openapi({
          description: "AList permission bits, all held by the caller in the folder; its reading ones by default",
          example: 256,
        }),
        expires_at: z
          ._default(z.number().check(z.int(), z.nonnegative()), 0)
          .openapi({ description: "Unix seconds; 0 never", example: 0 }),
        usage: z
          ._default(z.array(Usage).check(z.minLength(1), z.maxLength(3)), ["api", "webdav"])
          .openapi({ example: ["api", "webdav"] }),
      }),
    ),
  },
});

const IdBody = jsonBody(z.object({ id: z.number().check(z.int(), z.positive()) }));

const remove = createRoute({
  method: "post",
  path: "/api/me/access_key/delete",
  ...ownKeys,
  request: { body: IdBody },
});

const adminList = createRoute({
  method: "get",
  path: "/api/admin/access_key/list",
  ...reading(adminOnly, adminPlan),
  request: { query: z.object(pagingParams) },
});

const adminRemove = createRoute({
  method: "post",
  path: "/api/admin/access_key/delete",
  ...adminOnly,
  request: { body: IdBody },
});

export function registerAccessKeyRoutes(app: Router) {
  app.openapi(list, async (c) => {
    const rows = await planned(c, listPlan);
    return ok(
      c,
      rows.map((row) => toWire(row, c.var.caller.user.basePath)),
    );
  });

  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const caller = c.var.caller;
    const now = Math.floor(Date.now() / 1000);
    const made = await makeAccessKey(
      c.var.db,
      otpSealingKeys(c.env),
      caller,
      { name: body.name, path: body.path, permission: body.permission, expiresAt: body.expires_at, usage: body.usage },
      now,
    );
    return ok(c, {
      ...toWire({ ...made, name: body.name, expiresAt: body.expires_at, lastUsedAt: 0 }, caller.user.basePath),
      secret: made.secret,
      secret_access_key: made.secretAccessKey,
    });
  });

  app.openapi(remove, async (c) => {
    await revokeAccessKey(c.var.db, c.req.valid("json").id, c.var.caller.user.id);
    return ok(c, null);
  });

  app.openapi(adminList, async (c) => {
    const page = await planned(c, adminPlan);
    return ok(c, {
      content: page.content.map((row) => ({ ...toWire(row, "/"), user_id: row.userId, username: row.username })),
      total: page.total,
    });
  });

  app.openapi(adminRemove, async (c) => {
    await revokeAccessKey(c.var.db, c.req.valid("json").id, null);
    return ok(c, null);
  });
}
