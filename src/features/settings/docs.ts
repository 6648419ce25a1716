// The documentation of the settings routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";
import { CLOUD_DRIVE_TOOLS } from "./rules.ts";

const SettingItem = z
  .object({
    key: z.string(),
    value: z.string().openapi({ description: "always a string; `default_role` shows the role's name" }),
    help: z.string(),
    type: z.enum(["string", "number", "text", "select", "bool"]),
    options: z.string().openapi({ description: "comma-separated choices of a `select`" }),
    group: z.number().check(z.int()),
    flag: z.number().check(z.int()).openapi({ description: "0 public, 1 private, 2 read-only, 3 deprecated" }),
    index: z.number().check(z.int()),
  })
  .openapi("SettingItem");

const tags = ["settings"];

export const routeDocs: RouteDocs = {
  "get /api/admin/setting/list": {
    summary: "Settings, all or of some groups (by index); the permanent token included",
    tags,
    responses: envelopeResponse(z.array(SettingItem), "Setting items"),
  },
  "get /api/admin/setting/get": {
    summary: "One setting by `key`, or several by `keys` (an array in request order; `keys` wins when both are given)",
    tags,
    responses: envelopeResponse(
      z.union([SettingItem, z.array(SettingItem)]),
      "The item, or the items in request order",
    ),
  },
  "post /api/admin/setting/save": {
    summary: "Change setting values: known keys only, each checked against its type; all or nothing",
    description:
      "Only `key` and `value` are read; the other columns the web UI sends back are ignored, so a key's type, group, flag, options and help never change. " +
      "An item whose value is unchanged (read-only `version` included) is accepted and left alone. `default_role` takes a role name.",
    tags,
    responses: envelopeResponse(z.null(), "Saved"),
  },
  "post /api/admin/setting/delete": {
    summary: "Delete a deprecated setting (flag 3)",
    tags,
    responses: envelopeResponse(z.object({}), "Deleted"),
  },
  "post /api/admin/setting/reset_token": {
    summary: "Replace the permanent token with a new random one; the old one stops working at once",
    tags,
    responses: envelopeResponse(z.string(), "The new token"),
  },
  "post /api/admin/setting/set_token": {
    summary: "Replace the permanent token with a chosen one; the old one stops working at once",
    tags,
    responses: envelopeResponse(z.string(), "The saved token"),
  },
  "post /api/admin/setting/set_aria2": {
    summary: "Save aria2's JSON-RPC URI and secret, then ask it for its version",
    description: "The settings stay saved when aria2 cannot be reached; the reply is then code 500 naming the cause.",
    tags,
    responses: envelopeResponse(z.string().openapi({ example: "aria2 version: 1.36.0" }), "aria2's version"),
  },
  "post /api/admin/setting/set_qbit": {
    summary: "Save qBittorrent's Web UI URL (credentials in the URL) and seed time, then sign in to check them",
    description:
      "The settings stay saved when qBittorrent cannot be reached or refuses the credentials; the reply is then code 500 naming the cause.",
    tags,
    responses: envelopeResponse(z.literal("ok"), "qBittorrent answered"),
  },
  "post /api/admin/setting/default": {
    summary:
      "The settings of some groups (or all) with their default values, as `list` answers them; nothing is written",
    description:
      "The web UI's reset button shows these and its Save writes them. Read-only settings, the permanent token and keys without a default keep their stored value.",
    tags,
    responses: envelopeResponse(z.array(SettingItem), "Setting items with default values"),
  },
  "post /api/admin/setting/set_transmission": {
    summary: "Save Transmission's RPC URI (credentials in the URI) and seed time, then ask it for its version",
    description:
      "The settings stay saved when Transmission cannot be reached or refuses the credentials; the reply is then code 500 naming the cause.",
    tags,
    responses: envelopeResponse(z.literal("ok"), "Transmission answered"),
  },
  ...Object.fromEntries(
    Object.entries(CLOUD_DRIVE_TOOLS).map(([name, tool]) => [
      `post /api/admin/setting/${name}`,
      {
        summary: `Refused: ${tool} offline download needs the ${tool} storage driver, which Gatehouse does not have`,
        tags,
        responses: envelopeResponse(z.null(), "Never: code 400 names the reason"),
      },
    ]),
  ),
};
