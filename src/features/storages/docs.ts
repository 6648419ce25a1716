// The documentation of the storages routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";
import { Storage } from "./wire.ts";

const IdData = z.object({ id: z.number().check(z.int()) });

export const routeDocs: RouteDocs = {
  "get /api/admin/storage/list": {
    tags: ["storages"],
    summary:
      "Storages in `order`, then `id` order; `per_page` absent or below 1 lists them all (as AList); a storage never checked is checked first",
    responses: envelopeResponse(
      z.object({ content: z.array(Storage), total: z.number().check(z.int()) }),
      "One page and the total",
    ),
  },
  "get /api/admin/storage/get": {
    tags: ["storages"],
    summary: "One storage",
    responses: envelopeResponse(Storage, "The storage"),
  },
  "post /api/admin/storage/create": {
    tags: ["storages"],
    summary: "Mount a storage and check it; a failed check keeps the row and answers code 500 with its id",
    responses: envelopeResponse(IdData, "The new storage's id"),
  },
  "post /api/admin/storage/update": {
    tags: ["storages"],
    summary: "Save a storage (same driver) and check it again unless it is disabled",
    responses: envelopeResponse(IdData, "The storage's id"),
  },
  "post /api/admin/storage/delete": {
    tags: ["storages"],
    summary: "Delete a storage, unless a role's scope or a user's base path still uses its first mount segment",
    responses: envelopeResponse(z.null(), "Deleted"),
  },
  "post /api/admin/storage/enable": {
    tags: ["storages"],
    summary: "Enable a disabled storage and check it",
    responses: envelopeResponse(z.null(), "Enabled and working"),
  },
  "post /api/admin/storage/disable": {
    tags: ["storages"],
    summary: "Disable a storage: status `disabled`",
    responses: envelopeResponse(z.null(), "Disabled"),
  },
  "post /api/admin/storage/load_all": {
    tags: ["storages"],
    summary: "Check every enabled storage again, in the background; answers at once",
    responses: envelopeResponse(z.null(), "Checks started"),
  },
};
