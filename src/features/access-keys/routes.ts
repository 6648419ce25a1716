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
import { envelopeResponse, jsonBody, type Router } from "../../http/router.ts";
import { wellFormed } from "../../http/text.ts";
import type { AppEnv } from "../../http/context.ts";
import { USER_INVALID } from "../sshkeys/messages.ts";
import { makeAccessKey, revokeAccessKey, seenPath } from "./rules.ts";
import { accessKeyList, accessKeyPage } from "./store.ts";

/** The guest has no keys; refused with the SSH key routes' words. */
const ownKeys = accountOnly(401, USER_INVALID);

const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString();

const Usage = z.enum(["api", "webdav", "s3"]);

const AccessKey = z.object({
  id: z.number().check(z.int()),
  name: z.string(),
  path: z.string().openapi({ description: "The key's folder as its user sees it" }),
  permission: z.number().check(z.int()).openapi({
    description: "AList permission bits the key keeps of its user's (-1: all of them, an app password)",
  }),
  expires_at: z.number().check(z.int()).openapi({ description: "Unix seconds; 0 never" }),
  usage: z.array(Usage),
  access_key_id: z.nullable(z.string()).openapi({ description: "The S3 access key id; null without S3 use" }),
  created: z.string().openapi({ description: "RFC 3339" }),
  last_used: z.nullable(z.string()).openapi({
    description: "RFC 3339; null until first used. Updated at most once every 5 minutes.",
  }),
});

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
  tags: ["access keys"],
  summary: "The caller's access keys and app passwords (never their secrets)",
  ...reading(ownKeys, listPlan),
  responses: envelopeResponse(z.array(AccessKey), "The keys, oldest first"),
});

const create = createRoute({
  method: "post",
  path: "/api/me/access_key/create",
  tags: ["access keys"],
  summary: "Make an access key: a folder, rights, an expiry and its uses; the secret is in this reply and never again",
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
  responses: envelopeResponse(
    z.object({
      ...AccessKey.shape,
      secret: z.string().openapi({ example: "gh-key-3fQ9…" }),
      secret_access_key: z.nullable(z.string()).openapi({ description: "The S3 secret; null without S3 use" }),
    }),
    "Made",
  ),
});

const IdBody = jsonBody(z.object({ id: z.number().check(z.int(), z.positive()) }));

const remove = createRoute({
  method: "post",
  path: "/api/me/access_key/delete",
  tags: ["access keys"],
  summary: "Revoke one of the caller's access keys: it is refused from the next request",
  ...ownKeys,
  request: { body: IdBody },
  responses: envelopeResponse(z.null(), "Revoked"),
});

const adminList = createRoute({
  method: "get",
  path: "/api/admin/access_key/list",
  tags: ["access keys", "admin"],
  summary: "Everyone's access keys and app passwords, with their users",
  ...reading(adminOnly, adminPlan),
  request: { query: z.object(pagingParams) },
  responses: envelopeResponse(
    z.object({
      content: z.array(z.object({ ...AccessKey.shape, user_id: z.number().check(z.int()), username: z.string() })),
      total: z.number().check(z.int()),
    }),
    "A page of keys; `path` is the full path",
  ),
});

const adminRemove = createRoute({
  method: "post",
  path: "/api/admin/access_key/delete",
  tags: ["access keys", "admin"],
  summary: "Revoke anyone's access key",
  ...adminOnly,
  request: { body: IdBody },
  responses: envelopeResponse(z.null(), "Revoked"),
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
