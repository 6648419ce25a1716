// The setting group (admin only): list, get, save and delete settings, their defaults, the
// permanent token, and the offline-download services aria2, qBittorrent and Transmission, with the
// cloud-drive tools refused (docs/api.md "Settings", AList v3.58.0 server/handles/setting.go).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly, planned, reading } from "../../auth/guard.ts";
import { NOT_ADMIN } from "../../auth/store.ts";
import { fromJson, fromQuery } from "../../http/params.ts";
import { settingDefinitionByKey, type SettingType } from "../../db/settings.ts";
import { ok } from "../../http/envelope.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import {
  askedSettings,
  CLOUD_DRIVE_TOOLS,
  defaultRows,
  keysOrNone,
  refuseCloudTool,
  removeSetting,
  resetPermanentToken,
  saveSettings,
  setAria2 as saveAria2,
  setPermanentToken,
  setQbittorrent,
  setTransmission,
} from "./rules.ts";
import { settingsByKey, settingsInGroups, settingsSave, type SettingRow } from "./store.ts";
import { defaultRoleOptions, defaultRoleShown, presaveSplit, type RoleName } from "./validate.ts";

const groupList = z.optional(
  z
    .string()
    .check(
      z.regex(/^\s*(\d{1,4}\s*(,\s*\d{1,4}\s*)*)?$/, { error: "must be group numbers separated by commas, e.g. 5,0" }),
    ),
);

const ListQuery = z.object({
  groups: groupList.openapi({ description: "comma-separated group numbers; wins over `group`", example: "5,0" }),
  group: groupList.openapi({ description: "one group number", example: "1" }),
});
const GetQuery = z.object({
  key: z.optional(z.string()).openapi({ example: "site_title" }),
  keys: z.optional(z.string()).openapi({ description: "comma-separated keys", example: "aria2_uri,aria2_secret" }),
});
const listPlan = fromQuery(ListQuery, (db, { groups, group }) =>
  settingsInGroups(db, groupNumbers(groups) ?? groupNumbers(group)),
);
// A query naming no key reads only the guard's rows; the handler then answers 400.
const getPlan = fromQuery(GetQuery, (db, query) => settingsByKey(db, keysOrNone(query)));

const list = createRoute({
  method: "get",
  path: "/api/admin/setting/list",
  ...reading(adminOnly, listPlan),
  request: { query: ListQuery },
});

const get = createRoute({
  method: "get",
  path: "/api/admin/setting/get",
  ...reading(adminOnly, getPlan),
  request: { query: GetQuery },
});

/** Far more than there are settings (the web UI saves one group), far fewer than SQLite's 32,766 variables. */
const MAX_SAVE_ITEMS = 1000;

const SaveBody = z
  .array(
    z.object({
      key: z.string().check(z.minLength(1), z.maxLength(255)),
      value: z.string(),
      help: z.optional(z.string()),
      type: z.optional(z.string()),
      options: z.optional(z.string()),
      group: z.optional(z.number()),
      flag: z.optional(z.number()),
      index: z.optional(z.number()),
    }),
  )
  .check(z.maxLength(MAX_SAVE_ITEMS));
// The stored rows of the known keys it names (a bounded list; settingChanges() refuses the unknown
// ones) and the role names, read in the guard's batch, with the values it can write there already.
const savePlan = fromJson(SaveBody, (db, items, _callerId, callerIsAdmin) => {
  const keys = [...new Set(items.map((item) => item.key))].filter((key) => settingDefinitionByKey.has(key));
  const split = presaveSplit(items);
  return settingsSave(
    db,
    keys,
    split ?? { sure: [], mustStand: [], defaultRole: undefined },
    split ? callerIsAdmin : NOT_ADMIN,
  );
});

const save = createRoute({
  method: "post",
  path: "/api/admin/setting/save",
  ...reading(adminOnly, savePlan),
  request: {
    body: jsonBody(SaveBody),
  },
});

const remove = createRoute({
  method: "post",
  path: "/api/admin/setting/delete",
  ...adminOnly,
  request: {
    query: z.object({ key: z.string({ error: "is required" }).check(z.minLength(1, { error: "is required" })) }),
  },
});

const resetToken = createRoute({
  method: "post",
  path: "/api/admin/setting/reset_token",
  ...adminOnly,
});

const setToken = createRoute({
  method: "post",
  path: "/api/admin/setting/set_token",
  ...adminOnly,
  request: {
    body: jsonBody(
      z.object({
        token: z
          .string()
          .check(z.trim(), z.maxLength(4096))
          .openapi({ description: "16 to 512 printable ASCII characters, no spaces, not shaped like a JWT" }),
      }),
    ),
  },
});

const setAria2 = createRoute({
  method: "post",
  path: "/api/admin/setting/set_aria2",
  ...adminOnly,
  request: {
    body: jsonBody(
      z.object({
        uri: z.string().check(z.trim(), z.maxLength(2048)).openapi({ example: "http://localhost:6800/jsonrpc" }),
        secret: z.string().check(z.maxLength(1024)),
      }),
    ),
  },
});

const setQbit = createRoute({
  method: "post",
  path: "/api/admin/setting/set_qbit",
  ...adminOnly,
  request: {
    body: jsonBody(
      z.object({
        url: z
          .string()
          .check(z.trim(), z.maxLength(2048))
          .openapi({ example: "http://admin:adminadmin@localhost:8080/" }),
        seedtime: z
          .string()
          .check(z.trim(), z.regex(/^\d{1,9}$/, { error: "must be a whole number, 0 or more" }))
          .openapi({ example: "0" }),
      }),
    ),
  },
});

const defaults = createRoute({
  method: "post",
  path: "/api/admin/setting/default",
  ...reading(adminOnly, listPlan),
  request: { query: ListQuery },
});

const setTransmissionRoute = createRoute({
  method: "post",
  path: "/api/admin/setting/set_transmission",
  ...adminOnly,
  request: {
    body: jsonBody(
      z.object({
        uri: z
          .string()
          .check(z.trim(), z.maxLength(2048))
          .openapi({ example: "http://localhost:9091/transmission/rpc" }),
        seedtime: z
          .string()
          .check(z.trim(), z.regex(/^\d{1,9}$/, { error: "must be a whole number, 0 or more" }))
          .openapi({ example: "0" }),
      }),
    ),
  },
});

/** One route per cloud-drive tool, all refused the same way (rules.ts CLOUD_DRIVE_TOOLS). */
const cloudToolRoutes = Object.entries(CLOUD_DRIVE_TOOLS).map(([name, tool]) => ({
  tool,
  route: createRoute({
    method: "post",
    path: `/api/admin/setting/${name}`,
    ...adminOnly,
    request: {
      body: jsonBody(
        z.object({
          temp_dir: z.optional(z.string().check(z.maxLength(4096))),
          callback_url: z.optional(z.string().check(z.maxLength(4096))),
        }),
      ),
    },
  }),
}));

/**
 * A row as clients see it: `default_role` by name, with the names it may take (AList v3.58.0
 * server/handles/setting.go:164-170).
 */
function settingItem(row: SettingRow, roles: readonly RoleName[]) {
  const item = { ...row, type: row.type as SettingType };
  return row.key === "default_role"
    ? { ...item, value: defaultRoleShown(row.value, roles), options: defaultRoleOptions(roles) }
    : item;
}

const groupNumbers = (raw: string | undefined) => (raw?.trim() ? raw.split(",").map((g) => Number(g.trim())) : null);

export function registerSettingRoutes(app: Router) {
  app.openapi(list, async (c) => {
    const { rows, roles } = await planned(c, listPlan);
    return ok(
      c,
      rows.map((row) => settingItem(row, roles)),
    );
  });

  app.openapi(get, async (c) => {
    const { rows: found, roles } = await planned(c, getPlan);
    const { rows, many } = askedSettings(c.req.valid("query"), found);
    const items = rows.map((row) => settingItem(row, roles));
    return ok(c, many ? items : items[0]!);
  });

  app.openapi(save, async (c) => {
    await saveSettings(c.var.db, c.req.valid("json"), await planned(c, savePlan));
    return ok(c, null);
  });

  app.openapi(defaults, async (c) => {
    const { rows, roles } = await planned(c, listPlan);
    return ok(
      c,
      defaultRows(rows).map((row) => settingItem(row, roles)),
    );
  });

  app.openapi(remove, async (c) => {
    await removeSetting(c.var.db, c.req.valid("query").key);
    return ok(c, {});
  });

  app.openapi(resetToken, async (c) => ok(c, await resetPermanentToken(c.var.db)));

  app.openapi(setToken, async (c) => ok(c, await setPermanentToken(c.var.db, c.req.valid("json").token)));

  app.openapi(setAria2, async (c) => {
    const { uri, secret } = c.req.valid("json");
    return ok(c, await saveAria2(c.var.db, uri, secret));
  });

  app.openapi(setQbit, async (c) => {
    const { url, seedtime } = c.req.valid("json");
    await setQbittorrent(c.var.db, url, seedtime);
    return ok(c, "ok" as const);
  });

  app.openapi(setTransmissionRoute, async (c) => {
    const { uri, seedtime } = c.req.valid("json");
    await setTransmission(c.var.db, uri, seedtime);
    return ok(c, "ok" as const);
  });

  for (const { tool, route } of cloudToolRoutes) app.openapi(route, () => refuseCloudTool(tool));
}
