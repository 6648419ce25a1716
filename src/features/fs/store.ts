// Every query of the file side. A file request reads the caller (through the guard), the storages
// its paths can land on, the virtual folders of the folders it lists, the metas and the settings
// in ONE batch (docs/decisions.md D9.1): one round trip. The metas are a small table read whole.
import { and, eq, gte, inArray, lt, ne, or, sql } from "drizzle-orm";
import type { RoutePlan } from "../../auth/guard.ts";
import type { Database } from "../../db/client.ts";
import { keptQuery } from "../../db/kept.ts";
import { type Plan, run, runBatch } from "../../db/plan.ts";
import { metas, settings, storages } from "../../db/schema.ts";
import { SETTING_DEFINITIONS } from "../../db/settings.ts";
import { subtreeRange } from "./path.ts";
import type { FsState, MetaRow, TreeNeeds, TreeRows } from "./state.ts";
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
  "auto_update_index",
  "index_progress",
  "ignore_paths",
  "forward_direct_link_params",
  "ignore_direct_link_params",
  "share_archive_preview",
] as const;

type FsSettingKey = (typeof FS_SETTING_KEYS)[number];

/** `/`, then every ancestor down to the path itself. */
const chainOf = (path: string) => {
  const chain = ["/"];
  let prefix = "";
  for (const segment of path.split("/").filter(Boolean)) {
    prefix += `/${segment}`;
    chain.push(prefix);
  }
  return chain;
};

/** Mount paths starting with `prefix` as a range of the mount-path index (path.ts subtreeRange). */
const below = (prefix: unknown, upper: unknown) =>
  and(gte(storages.mountPath, sql`${prefix}`), lt(storages.mountPath, sql`${upper}`));

// The reads of every file request, built once per isolate (src/db/kept.ts): drizzle building their
// text anew was the largest share of a listing's own CPU after the rows.
/** The enabled storages mounted on any of the paths of a JSON array (the chains). */
const storagesOn = keptQuery(["chains"], (db, v) =>
  db
    .select()
    .from(storages)
    .where(and(eq(storages.disabled, false), sql`${storages.mountPath} IN (SELECT value FROM json_each(${v.chains}))`)),
);

/**
 * A folder's virtual folders: the first segments of the mount paths below it, one row a name, in
 * AList's order (storage order, then mount path; the name's first storage gives its time).
 * Computed in SQL, so a listing of `/` over 10,000 storages reads one row a virtual folder, not
 * 10,000 storages.
 */
const virtualFoldersOf = keptQuery(["folder", "prefix", "upper"], (db, v) => {
  const rest = sql`substr(${storages.mountPath}, length(${v.prefix}) + 1)`;
  const name = sql<string>`CASE WHEN instr(${rest}, '/') > 0 THEN substr(${rest}, 1, instr(${rest}, '/') - 1) ELSE ${rest} END`;
  // With one min() aggregate, SQLite takes the other columns from the row holding the minimum.
  const first = sql<string>`min(printf('%020d', ${storages.order} + 2147483648) || ${storages.mountPath})`;
  return db
    .select({ name, modified: storages.modifiedAtMs, first })
    .from(storages)
    .where(and(eq(storages.disabled, false), ne(storages.mountPath, sql`${v.folder}`), below(v.prefix, v.upper)))
    .groupBy(name)
    .orderBy(first);
});

/**
 * A path that is a virtual folder when a mount path is on it or below it (`prefix` is the path with
 * its "/"): its time is its first storage's. No row: nothing is mounted there.
 */
const pointOf = keptQuery(["path", "prefix", "upper"], (db, v) =>
  db
    .select({ name: sql<string>`${v.path}`, modified: storages.modifiedAtMs })
    .from(storages)
    .where(and(eq(storages.disabled, false), or(eq(storages.mountPath, sql`${v.path}`), below(v.prefix, v.upper))))
    .orderBy(storages.order, storages.mountPath)
    .limit(1),
);

const allMetas = keptQuery([], (db) => db.select().from(metas));
const fsSettings = keptQuery([], (db) =>
  db
    .select({ key: settings.key, value: settings.value })
    .from(settings)
    .where(inArray(settings.key, [...FS_SETTING_KEYS])),
);

/**
 * The tree reads for `needs`: the storages on the paths' chains (longest-match candidates), and
 * per folder its virtual folders (virtualFoldersOf).
 */
function treeReads(db: Database, needs: TreeNeeds) {
  const chains = [...new Set(needs.paths.flatMap(chainOf))];
  const storageRead = storagesOn(db, { chains: JSON.stringify(chains.length > 0 ? chains : ["/"]) });
  const folderReads = needs.folders.map((folder) => virtualFoldersOf(db, { folder, ...subtreeRange(folder) }));
  const pointReads = (needs.points ?? []).map((path) => pointOf(db, { path, ...subtreeRange(path) }));
  return { chains, reads: [storageRead, ...folderReads, ...pointReads] as const };
}

type TreeResults = [StorageRow[], ...{ name: string; modified: number }[][]];

function toTree(needs: TreeNeeds, chains: string[], [storageRows, ...rest]: TreeResults, into?: TreeRows): TreeRows {
  const tree: TreeRows = into ?? { storages: [], chains: new Set<string>(), virtual: new Map(), points: new Map() };
  const known = new Set(tree.storages.map((row) => row.id));
  tree.storages.push(...storageRows.filter((row) => !known.has(row.id)));
  for (const path of chains) tree.chains.add(path);
  const folders = rest.slice(0, needs.folders.length);
  const points = rest.slice(needs.folders.length);
  for (const [i, folder] of needs.folders.entries()) {
    tree.virtual.set(
      folder,
      folders[i]!.map((row) => ({ name: row.name, modified: new Date(row.modified) })),
    );
  }
  (needs.points ?? []).forEach((path, i) => {
    const [row] = points[i]!;
    tree.points.set(
      path,
      row ? { name: path.slice(path.lastIndexOf("/") + 1), modified: new Date(row.modified) } : null,
    );
  });
  return tree;
}

/** Reads what `needs` adds to `tree` (one round trip), for paths no earlier read covered (Alias targets, base paths). */
export async function extendTree(db: Database, tree: TreeRows, needs: TreeNeeds): Promise<void> {
  const { chains, reads } = treeReads(db, needs);
  toTree(needs, chains, (await runBatch(db, reads)) as TreeResults, tree);
}

function stateReads(db: Database, needs: TreeNeeds) {
  const { chains, reads } = treeReads(db, needs);
  return {
    chains,
    reads: [allMetas(db, {}), fsSettings(db, {}), ...reads] as const,
  };
}

function toState(
  needs: TreeNeeds,
  chains: string[],
  [metaRows, settingRows, ...treeResults]: [MetaRow[], { key: string; value: string }[], ...unknown[]],
): FsState {
  const values = new Map(settingRows.map((row) => [row.key, row.value]));
  const value = (key: FsSettingKey) => values.get(key) ?? SETTING_DEFINITIONS.find((d) => d.key === key)?.value ?? "";
  const list = (key: FsSettingKey) =>
    new Set(
      value(key)
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
    );
  const hours = Number(value("link_expiration"));
  return {
    tree: toTree(needs, chains, treeResults as TreeResults),
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
      autoUpdateIndex: value("auto_update_index") === "true",
      indexProgress: value("index_progress"),
      ignorePaths: value("ignore_paths"),
      forwardDirectLinkParams: value("forward_direct_link_params") === "true",
      ignoreDirectLinkParams: new Set(
        value("ignore_direct_link_params")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      ),
      shareArchivePreview: value("share_archive_preview") === "true",
    },
  };
}

/**
 * The file-side state for `needs` as a plan: a route's guard reads it in its own batch (auth/guard.ts
 * `reading`, with the route's plan built by `fromJson` from the raw body: the paths it will resolve
 * guessed as if the caller's base path were `/`, every admin's). When the guess is wrong (another
 * base path), the tree reads what it lacks with one more round trip.
 */
export function statePlan(db: Database, needs: TreeNeeds): Plan<FsState> {
  const { chains, reads } = stateReads(db, needs);
  return {
    reads,
    read: (results) => toState(needs, chains, results as [MetaRow[], { key: string; value: string }[], ...unknown[]]),
  };
}

/**
 * A route's plan of the file-side state with no path guessed (the request names its paths in its
 * headers, or resolves none of its own): the metas, the settings and the storage mounted at `/`.
 */
export const stateWithoutGuess: RoutePlan<FsState> = (c) => statePlan(c.var.db, { paths: [], folders: [] });

/**
 * The file-side reads for `needs`, to travel in another batch (the WebDAV server's caller), and
 * how to read their results back.
 */
export function fsStateReads(db: Database, needs: TreeNeeds) {
  const { reads, read } = statePlan(db, needs);
  return { reads, toState: read };
}

/** The file-side state without a caller (`/d`, `/p`: the sign is their only gate), one round trip. */
export function readState(db: Database, needs: TreeNeeds): Promise<FsState> {
  return run(db, statePlan(db, needs));
}
