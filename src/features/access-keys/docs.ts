// The documentation of the access-keys routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";
import { Usage } from "./routes.ts";

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

export const routeDocs: RouteDocs = {
  "get /api/me/access_key/list": {
    tags: ["access keys"],
    summary: "The caller's access keys and app passwords (never their secrets)",
    responses: envelopeResponse(z.array(AccessKey), "The keys, oldest first"),
  },
  "post /api/me/access_key/create": {
    tags: ["access keys"],
    summary:
      "Make an access key: a folder, rights, an expiry and its uses; the secret is in this reply and never again",
    responses: envelopeResponse(
      z.object({
        ...AccessKey.shape,
        secret: z.string().openapi({ example: "gh-key-3fQ9…" }),
        secret_access_key: z.nullable(z.string()).openapi({ description: "The S3 secret; null without S3 use" }),
      }),
      "Made",
    ),
  },
  "post /api/me/access_key/delete": {
    tags: ["access keys"],
    summary: "Revoke one of the caller's access keys: it is refused from the next request",
    responses: envelopeResponse(z.null(), "Revoked"),
  },
  "get /api/admin/access_key/list": {
    tags: ["access keys", "admin"],
    summary: "Everyone's access keys and app passwords, with their users",
    responses: envelopeResponse(
      z.object({
        content: z.array(z.object({ ...AccessKey.shape, user_id: z.number().check(z.int()), username: z.string() })),
        total: z.number().check(z.int()),
      }),
      "A page of keys; `path` is the full path",
    ),
  },
  "post /api/admin/access_key/delete": {
    tags: ["access keys", "admin"],
    summary: "Revoke anyone's access key",
    responses: envelopeResponse(z.null(), "Revoked"),
  },
};
