// Every query of search: the page and count of what a caller may see (one batch), the index's
// writes (build steps, and the changes Gatehouse's own writes make), the build queue and progress.
// Paths are full paths in the mount tree; "below Q" is the range [Q/, Q0) of the unique path
// index ("/" and "0" are neighbours in byte order), so a subtree is a range scan and `/a` never
// holds `/ab`.
import { and, count, eq, exists, gte, inArray, lt, lte, notExists, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "../../db/client.ts";
import { searchGrams, searchNodes, searchQueue, settings } from "../../db/schema.ts";
import { baseName, pathChain } from "../fs/path.ts";
import { depthOf, type HideRule, type Keywords, type Visibility } from "./rules.ts";

const path = searchNodes.path;

// The trigram index (drizzle/0004_search_fts.sql) is an FTS5 virtual table, which Drizzle's schema
// cannot declare: its name and its two uses are here, the one place store.ts writes raw SQL.
const fts = {
  /** The ids of the nodes whose name holds every phrase of `match` (FTS5 query text, rules.ts keywordsOf). */
  ids: (match: string) => sql`SELECT rowid FROM search_fts WHERE search_fts MATCH ${match}`,
  /** FTS5's command that empties the index at once. */
  deleteAll: (db: Database) => db.run(sql`INSERT INTO search_fts (search_fts) VALUES ('delete-all')`),
};

/** The node is `q` or lies below it. */
const within = (q: string): SQL =>
  q === "/" ? sql`1` : sql`(${path} = ${q} OR (${path} >= ${`${q}/`} AND ${path} < ${`${q}0`}))`;

/** The node lies strictly below `q`. */
const below = (q: string): SQL => (q === "/" ? sql`1` : sql`(${path} >= ${`${q}/`} AND ${path} < ${`${q}0`})`);

const anyOf = (parts: SQL[]) => (parts.length === 0 ? sql`0` : sql`(${sql.join(parts, sql` OR `)})`);

/**
 * A name on the node's way hidden by `rule`: the name at index k lies in the folder of depth k, so
 * the rule's own folder holds index depth(rule); with `sub`, each deeper index too, up to the first
 * deeper meta on the way (that meta is then the nearest one).
 */
function hiddenBy(rule: HideRule): SQL {
  const from = depthOf(rule.path);
  const limit = !rule.sub
    ? sql`${from + 1}`
    : rule.deeper.length === 0
      ? sql`1000000`
      : sql`CASE ${sql.join(
          rule.deeper.map((meta) => sql`WHEN ${within(meta)} THEN ${depthOf(meta)}`),
          sql` `,
        )} ELSE 1000000 END`;
  const matches =
    rule.patterns === "all" ? sql`1` : anyOf(rule.patterns.map((pattern) => sql`s.value REGEXP ${pattern}`));
  return sql`(${below(rule.path)} AND EXISTS (SELECT 1 FROM json_each(${searchNodes.segments}) AS s WHERE s.key >= ${from} AND s.key < ${limit} AND ${matches}))`;
}

/** What the caller may see, as one condition (rules.ts visibilityOf); undefined when it is everything. */
function visible(seen: Visibility): SQL | undefined {
  const parts: SQL[] = seen.under === "/" ? [] : [below(seen.under)];
  if (seen.scopes !== null) {
    parts.push(
      anyOf(
        seen.scopes.map((scope) => {
          const chain = pathChain(scope).filter((p) => p !== "/");
          return chain.length === 0 ? sql`1` : sql`(${within(scope)} OR ${inArray(path, chain)})`;
        }),
      ),
    );
  }
  if (seen.blocked.length > 0) parts.push(sql`NOT ${anyOf(seen.blocked.map(within))}`);
  if (seen.hides.length > 0 && seen.seeHides !== null)
    parts.push(sql`(NOT ${anyOf(seen.hides.map(hiddenBy))} OR ${anyOf(seen.seeHides.map(within))})`);
  return and(...parts);
}

/**
 * The keywords as conditions on a node: the trigram index for long ones, LIKE over the folded
 * names for short ones (read in name order, a page stops at its last match).
 */
function matching(keywords: Keywords): SQL[] {
  const parts = keywords.likes.map((like) => sql`${searchNodes.folded} LIKE ${like} ESCAPE '\\'`);
  if (keywords.match !== "") parts.unshift(sql`${searchNodes.id} IN (${fts.ids(keywords.match)})`);
  return parts;
}

/**
 * The ids of the nodes holding a short keyword, from its postings (docs/decisions.md D24.2): a
 * gram of two characters is one key; one character starts the grams from itself to itself followed
 * by the last code point, U+10FFFF (in byte order, every gram it starts lies between).
 */
const gramIds = (gram: string) =>
  [...gram].length === 2
    ? sql`SELECT ${searchGrams.nodeId} FROM ${searchGrams} WHERE ${eq(searchGrams.gram, gram)}`
    : // A node holds several grams the character starts: each id once.
      sql`SELECT DISTINCT ${searchGrams.nodeId} FROM ${searchGrams}
        WHERE ${and(gte(searchGrams.gram, gram), lte(searchGrams.gram, `${gram}\u{10FFFF}`))}`;

/**
 * The count when the caller sees every node and no kind is chosen: the postings' ids alone,
 * intersected, without reading a node (docs/decisions.md D24.3). null when a keyword has no
 * postings (a case fold beyond two characters) or there is no keyword.
 */
function postingsCount(db: Database, keywords: Keywords) {
  if (keywords.grams === null) return null;
  const sets = keywords.grams.map(gramIds);
  if (keywords.match !== "") sets.unshift(fts.ids(keywords.match));
  if (sets.length === 0) return null;
  return db.select({ total: count() }).from(sql`(${sql.join(sets, sql` INTERSECT `)})`);
}

export interface SearchQuery {
  seen: Visibility;
  keywords: Keywords;
  /** 0 all, 1 folders, anything else files (AList v3.58.0 internal/db/searchnode.go:76-79). */
  scope: number;
  page: number;
  perPage: number;
}

export type FoundNode = { path: string; name: string; isDir: boolean; size: number };

/** One page of what the caller may see, by name, and the count of all of it: one round trip. */
export async function searchPage(db: Database, query: SearchQuery): Promise<{ nodes: FoundNode[]; total: number }> {
  const seen = visible(query.seen);
  const where = and(
    seen,
    ...matching(query.keywords),
    ...(query.scope === 0 ? [] : [eq(searchNodes.isDir, query.scope === 1)]),
  );
  const counting =
    (seen === undefined && query.scope === 0 ? postingsCount(db, query.keywords) : null) ??
    db.select({ total: count() }).from(searchNodes).where(where);
  const [nodes, [counted]] = await db.batch([
    db
      .select({ path: searchNodes.path, name: searchNodes.name, isDir: searchNodes.isDir, size: searchNodes.size })
      .from(searchNodes)
      .where(where)
      .orderBy(searchNodes.name, searchNodes.path)
      .limit(query.perPage)
      .offset((query.page - 1) * query.perPage),
    counting,
  ]);
  return { nodes, total: counted?.total ?? 0 };
}

// ---------------------------------------------------------------------------------------------
// Writes to the index.

export interface IndexEntry {
  path: string;
  isDir: boolean;
  size: number;
}

const segmentsOf = (full: string) => JSON.stringify(full.split("/").filter(Boolean));

const nodeRow = (entry: IndexEntry) => {
  const name = baseName(entry.path);
  return {
    path: entry.path,
    name,
    folded: name.toLowerCase(),
    segments: segmentsOf(entry.path),
    isDir: entry.isDir,
    size: entry.size,
  };
};

const ROWS_PER_INSERT = 400;

/** An inserted row's id in an INSERT ... SELECT: SQLite assigns the next one. */
const NEW_ID = sql<number>`NULL`;
/** What indexing a path again changes: a path is one row however often it is indexed. */
const refreshed = { isDir: sql`excluded.is_dir`, size: sql`excluded.size` };

/** Inserts or refreshes entries (a path is one row however often it is indexed). */
export function upsertEntries(db: Database, entries: readonly IndexEntry[]): BatchItem<"sqlite">[] {
  const statements: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < entries.length; i += ROWS_PER_INSERT) {
    statements.push(
      db
        .insert(searchNodes)
        .values(entries.slice(i, i + ROWS_PER_INSERT).map(nodeRow))
        .onConflictDoUpdate({
          target: searchNodes.path,
          set: refreshed,
        }),
    );
  }
  return statements;
}

/** The folders above `full` (not `/`), as folder rows kept if present: an upload or mkdir made them. */
export function ensureFolders(db: Database, full: string): BatchItem<"sqlite">[] {
  const folders = pathChain(full).filter((p) => p !== "/");
  if (folders.length === 0) return [];
  return [
    db
      .insert(searchNodes)
      .values(folders.map((folder) => nodeRow({ path: folder, isDir: true, size: 0 })))
      .onConflictDoNothing(),
  ];
}

export const deleteSubtree = (db: Database, full: string) => db.delete(searchNodes).where(within(full));

/** `path` and `segments` of the nodes below `from`, rewritten to lie below `to` (text, as JSON.stringify wrote them). */
const movedColumns = (from: string, to: string) => {
  const fromPrefix = segmentsOf(from).slice(0, -1);
  const toPrefix = segmentsOf(to).slice(0, -1);
  return {
    path: sql<string>`${to} || substr(${path}, length(${from}) + 1)`,
    segments: sql<string>`${toPrefix} || substr(${searchNodes.segments}, length(${fromPrefix}) + 1)`,
  };
};

/** A move or rename of `from` to `to`: what was at `to` goes, the subtree follows. */
export function moveSubtree(db: Database, from: string, to: string): BatchItem<"sqlite">[] {
  if (from === to) return [];
  const row = nodeRow({ path: to, isDir: false, size: 0 });
  return [
    deleteSubtree(db, to),
    db.update(searchNodes).set(movedColumns(from, to)).where(below(from)),
    db
      .update(searchNodes)
      .set({ path: to, name: row.name, folded: row.folded, segments: row.segments })
      .where(eq(path, from)),
  ];
}

/** A copy of `from` to `to`: the subtree's rows again below `to` (merged with what is there). */
export function copySubtree(db: Database, from: string, to: string): BatchItem<"sqlite">[] {
  if (from === to) return [];
  const row = nodeRow({ path: to, isDir: false, size: 0 });
  const moved = movedColumns(from, to);
  const { name, folded, isDir, size } = searchNodes;
  // The select's columns in the table's order: an INSERT ... SELECT fills every column by position.
  const copy = (columns: Record<"path" | "name" | "folded" | "segments", SQL | SQLiteColumn>, where: SQL) =>
    db
      .insert(searchNodes)
      .select((qb) =>
        qb
          .select({
            id: NEW_ID,
            path: columns.path,
            name: columns.name,
            folded: columns.folded,
            segments: columns.segments,
            isDir,
            size,
          })
          .from(searchNodes)
          .where(where)
          .getSQL(),
      )
      .onConflictDoUpdate({ target: path, set: refreshed });
  return [
    copy(
      { path: sql`${to}`, name: sql`${row.name}`, folded: sql`${row.folded}`, segments: sql`${row.segments}` },
      eq(path, from),
    ),
    copy({ path: moved.path, name, folded, segments: moved.segments }, below(from)),
  ];
}

// ---------------------------------------------------------------------------------------------
// The build: its queue and progress (the `index_progress` setting, AList's object).

const PROGRESS = "index_progress";
/** The manual scan's progress: `{obj_count, is_done}` (docs/decisions.md D18.1). */
const SCAN = "scan_progress";

const INDEX_SETTING_KEYS = [
  "search_index",
  "index_progress",
  "max_index_depth",
  "ignore_paths",
  "scan_progress",
] as const;

/** The index settings, and whether a build or update is running (its queue has folders). */
export const indexStateReads = (db: Database) =>
  [
    db
      .select({ key: settings.key, value: settings.value })
      .from(settings)
      .where(inArray(settings.key, [...INDEX_SETTING_KEYS])),
    db.select({ path: searchQueue.path }).from(searchQueue).limit(1),
  ] as const;

const writeProgress = (db: Database, progress: object) =>
  db
    .update(settings)
    .set({ value: JSON.stringify(progress) })
    .where(eq(settings.key, PROGRESS));

/**
 * The whole index emptied: FTS5's 'delete-all' and every gram at once, then the rows with the
 * per-row delete triggers skipped (a queue row of path "" is their marker, inside this batch's
 * transaction only: no one else sees it).
 */
function emptyIndex(db: Database): BatchItem<"sqlite">[] {
  return [
    db.insert(searchQueue).values({ path: "", depth: 0 }).onConflictDoNothing(),
    fts.deleteAll(db),
    db.delete(searchGrams),
    db.delete(searchNodes),
    db.delete(searchQueue).where(eq(searchQueue.path, "")),
  ];
}

/** The build's and the scan's progress while they run (`{}` before any build has no is_done). */
const runningProgress = and(
  inArray(settings.key, [PROGRESS, SCAN]),
  sql`json_valid(${settings.value}) AND json_extract(${settings.value}, '$.is_done') = 0`,
);

/** A new build: the index emptied, `/` queued, the progress at zero; one batch. */
export function startBuild(db: Database, depth: number): BatchItem<"sqlite">[] {
  return [
    db.delete(searchQueue),
    ...emptyIndex(db),
    db.insert(searchQueue).values({ path: "/", depth }),
    writeProgress(db, { obj_count: 0, is_done: false, last_done_time: null, error: "" }),
  ];
}

/** An update: the index below each path emptied and the path queued again. */
export function startUpdate(db: Database, paths: readonly string[], depth: number): BatchItem<"sqlite">[] {
  return paths.flatMap((full) => [
    db.delete(searchNodes).where(below(full)),
    db
      .insert(searchQueue)
      .values({ path: full, depth })
      .onConflictDoUpdate({ target: searchQueue.path, set: { depth, leaseUntilMs: 0 } }),
  ]);
}

/** Marks a running build or manual scan done once the queue is empty (an update leaves a done progress as it was). */
const finishProgress = (db: Database) =>
  db
    .update(settings)
    .set({
      value: sql`json_set(${settings.value}, '$.is_done', json('true'), '$.last_done_time', ${new Date().toISOString()})`,
    })
    .where(and(runningProgress, notExists(db.select({ path: searchQueue.path }).from(searchQueue))));

/**
 * A manual scan: an update of `full` with no depth limit (OpenList's scan lists the whole tree),
 * its own progress at zero; one batch.
 */
export function startScan(db: Database, full: string): BatchItem<"sqlite">[] {
  return [
    ...startUpdate(db, [full], -1),
    db
      .update(settings)
      .set({ value: JSON.stringify({ obj_count: 0, is_done: false }) })
      .where(eq(settings.key, SCAN)),
  ];
}

export const stopBuild = (db: Database): BatchItem<"sqlite">[] => [db.delete(searchQueue), finishProgress(db)];

export const clearIndex = (db: Database): BatchItem<"sqlite">[] => [
  ...emptyIndex(db),
  writeProgress(db, { obj_count: 0, is_done: true, last_done_time: null, error: "" }),
];

/** Claims up to `limit` queued folders no other step holds, until `lease`; one statement. */
export const claimFolders = (db: Database, now: number, lease: number, limit: number) =>
  db
    .update(searchQueue)
    .set({ leaseUntilMs: lease })
    .where(
      inArray(
        searchQueue.path,
        db
          .select({ path: searchQueue.path })
          .from(searchQueue)
          .where(lt(searchQueue.leaseUntilMs, now))
          .orderBy(searchQueue.path)
          .limit(limit),
      ),
    )
    .returning({ path: searchQueue.path, depth: searchQueue.depth });

/** Queue rows this step holds: its lease value is its own (build.ts adds a random part). */
const heldBy = (lease: number) => eq(searchQueue.leaseUntilMs, lease);

/** While this step's claim on `folder` stands (a stop or a new build removes it). */
const claimed = (db: Database, folder: string, lease: number) =>
  exists(
    db
      .select({ path: searchQueue.path })
      .from(searchQueue)
      .where(and(eq(searchQueue.path, folder), heldBy(lease))),
  );

/**
 * A step's results in one batch: the entries of each folder it listed and the subfolders to list
 * next, written only while its claim on that folder stands; the folders done; the progress counted,
 * and finished when the queue is empty.
 */
export function finishStep(
  db: Database,
  lease: number,
  listed: { folder: string; entries: IndexEntry[]; next: { path: string; depth: number }[] }[],
  failure: string,
): BatchItem<"sqlite">[] {
  const statements: BatchItem<"sqlite">[] = [];
  let written = 0;
  for (const { folder, entries, next } of listed) {
    for (let i = 0; i < entries.length; i += ROWS_PER_INSERT) {
      const rows = entries.slice(i, i + ROWS_PER_INSERT).map(nodeRow);
      const values = sql.join(
        rows.map((r) => sql`(NULL, ${r.path}, ${r.name}, ${r.folded}, ${r.segments}, ${r.isDir ? 1 : 0}, ${r.size})`),
        sql`, `,
      );
      statements.push(
        db
          .insert(searchNodes)
          .select(sql`SELECT * FROM (VALUES ${values}) WHERE ${claimed(db, folder, lease)}`)
          .onConflictDoUpdate({ target: path, set: refreshed }),
      );
    }
    written += entries.length;
    for (let i = 0; i < next.length; i += ROWS_PER_INSERT) {
      const values = sql.join(
        next.slice(i, i + ROWS_PER_INSERT).map((n) => sql`(${n.path}, ${n.depth}, 0)`),
        sql`, `,
      );
      statements.push(
        db
          .insert(searchQueue)
          .select(sql`SELECT * FROM (VALUES ${values}) WHERE ${claimed(db, folder, lease)}`)
          .onConflictDoNothing(),
      );
    }
  }
  const { value } = settings;
  statements.push(
    db
      .update(settings)
      .set({
        value: sql`json_set(${value}, '$.obj_count', coalesce(json_extract(${value}, '$.obj_count'), 0) + ${written})`,
      })
      .where(
        and(runningProgress, exists(db.select({ path: searchQueue.path }).from(searchQueue).where(heldBy(lease)))),
      ),
  );
  if (failure !== "")
    statements.push(
      db
        .update(settings)
        .set({ value: sql`json_set(${value}, '$.error', ${failure})` })
        .where(and(eq(settings.key, PROGRESS), sql`json_valid(${value}) AND json_extract(${value}, '$.error') = ''`)),
    );
  statements.push(
    db.delete(searchQueue).where(
      and(
        inArray(
          searchQueue.path,
          listed.map((l) => l.folder),
        ),
        heldBy(lease),
      ),
    ),
    finishProgress(db),
  );
  return statements;
}
