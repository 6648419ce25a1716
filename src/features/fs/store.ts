// Every query of the file side. A file request reads the caller (through the guard), the enabled
// storages, the metas and the settings it needs in ONE batch (FILES.md §4): one round trip.
// The mount tree and the metas are small tables read whole, so resolving a path (longest match,
// virtual folders, Alias targets, nearest meta) never needs a second query.
import { asc, eq, inArray } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import { authenticateWith, eitherToken } from "../../auth/guard.ts";
import type { Database } from "../../db/client.ts";
import { metas, settings, storages } from "../../db/schema.ts";
import { SETTING_DEFINITIONS } from "../../db/settings.ts";
import type { AppEnv } from "../../env.ts";
import type { MetaRow } from "./metas.ts";
import type { StorageRow } from "./tree.ts";

/** The settings the file side reads, with AList's defaults when a row is missing. */
const FS_SETTING_KEYS = [
  "token",
  "sign_all",
  "link_expiration",
  "proxy_types",
  "text_types",
  "audio_types",
  "video_types",
  "image_types",
  "filter_readme_scripts",
  "site_url",
  "search_index",
  "forward_direct_link_params",
  "ignore_direct_link_params",
] as const;

type FsSettingKey = (typeof FS_SETTING_KEYS)[number];

export interface FsSettings {
  token: string;
  signAll: boolean;
  /** Hours; 0 = signs never expire. */
  linkExpirationHours: number;
  proxyTypes: Set<string>;
  textTypes: Set<string>;
  audioTypes: Set<string>;
  videoTypes: Set<string>;
  imageTypes: Set<string>;
  filterReadmeScripts: boolean;
  siteUrl: string;
  searchIndex: string;
  forwardDirectLinkParams: boolean;
  ignoreDirectLinkParams: Set<string>;
}

/** What the file side knows for one request: the tree, the metas and the settings. */
export interface FsState {
  storages: StorageRow[];
  metas: MetaRow[];
  settings: FsSettings;
}

function stateReads(db: Database) {
  return [
    db.select().from(storages).where(eq(storages.disabled, false)).orderBy(asc(storages.order), asc(storages.mountPath)),
    db.select().from(metas),
    db.select({ key: settings.key, value: settings.value }).from(settings).where(inArray(settings.key, [...FS_SETTING_KEYS])),
  ] as const;
}

type StateResults = [StorageRow[], MetaRow[], { key: string; value: string }[]];

function toState([storageRows, metaRows, settingRows]: StateResults): FsState {
  const values = new Map(settingRows.map((row) => [row.key, row.value]));
  const value = (key: FsSettingKey) => values.get(key) ?? SETTING_DEFINITIONS.find((d) => d.key === key)?.value ?? "";
  const list = (key: FsSettingKey) => new Set(value(key).split(",").map((s) => s.trim().toLowerCase()).filter(Boolean));
  const hours = Number(value("link_expiration"));
  return {
    storages: storageRows,
    metas: metaRows,
    settings: {
      token: value("token"),
      signAll: value("sign_all") === "true",
      linkExpirationHours: Number.isFinite(hours) && hours > 0 ? hours : 0,
      proxyTypes: list("proxy_types"),
      textTypes: list("text_types"),
      audioTypes: list("audio_types"),
      videoTypes: list("video_types"),
      imageTypes: list("image_types"),
      filterReadmeScripts: value("filter_readme_scripts") === "true",
      siteUrl: value("site_url"),
      searchIndex: value("search_index"),
      forwardDirectLinkParams: value("forward_direct_link_params") === "true",
      ignoreDirectLinkParams: new Set(value("ignore_direct_link_params").split(",").map((s) => s.trim()).filter(Boolean)),
    },
  };
}

/**
 * Route middleware of the file API: the caller (as the one guard decides) and the file-side state,
 * read in one round trip, on `c.var.caller` and `c.var.fs`.
 */
export const authenticateWithState: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { reads } = await authenticateWith(c, stateReads(c.var.db));
  c.set("fs", toState(reads as StateResults));
  await next();
};

/** Spread into `createRoute({...})` of a file route: signed in (the guest counts), state read. */
export const fsRoute = { middleware: [authenticateWithState] as [typeof authenticateWithState], security: eitherToken() };

/** The file-side state without a caller (`/d`, `/p`: the sign is their only gate), one round trip. */
export async function readState(db: Database): Promise<FsState> {
  const [first, ...rest] = stateReads(db);
  return toState((await db.batch([first, ...rest])) as unknown as StateResults);
}
