// The decisions of search (docs/files.md, Search; docs/decisions.md D11), over plain inputs: what
// part of the index a caller may see, as data the store turns into SQL conditions, so the database
// pages and counts only what the caller may see (AList v3.58.0 server/handles/search.go:46-75
// filtered after paging: wrong totals, skipped items); how keywords match; what the progress says.
import { isWellFormedText } from "../../http/text.ts";
import { isWithin } from "../fs/path.ts";
import { type MetaRow, Permission, permissionAt, passwordMatches, type Viewer } from "../fs/rules.ts";

/** The one engine Gatehouse offers (AList's `database`, here trigram FTS5 in libSQL). */
export const ENGINE = "database";

/** A meta's hide rule as the search applies it to each name on a node's way. */
export interface HideRule {
  /** The meta's path; its rule covers names in this folder (and below with `sub`). */
  path: string;
  sub: boolean;
  /** Regular expressions in the subset SQLite's REGEXP reads as JavaScript does; "all" hides every name. */
  patterns: string[] | "all";
  /** Deeper metas (any): below them, this meta is no longer the nearest, so its rule stops. */
  deeper: string[];
}

/** What a caller may see of the index below `under`, as path rules (store.ts turns them into SQL). */
export interface Visibility {
  /** The searched folder (a full path); results lie strictly below it. */
  under: string;
  /** The caller's role scope paths: a node is seen when a scope holds it or lies below it. null: all. */
  scopes: string[] | null;
  /** Folders guarded by a meta password the caller did not give: nothing at or below them is seen. */
  blocked: string[];
  /** Hide rules that may hide a name below `under`. */
  hides: HideRule[];
  /** Scope paths whose holders see hidden names (the see-hides bit); null: everywhere. */
  seeHides: string[] | null;
}

/** Number of names in a path: `/` 0, `/a/b` 2 (a node's name at index k lies in a folder of depth k). */
export const depthOf = (path: string) => (path === "/" ? 0 : path.split("/").length - 1);

/**
 * The part of the index below `under` the viewer may see with `password` (the request's one
 * password, as AList's search takes one): role scopes as fs/list filters entries (a branch shows
 * when a scope holds it or lies below it); a meta password on a folder below `under` hides the
 * folder and everything in it, with `p_sub` or without (AList v3.58.0 server/common/role_perm.go:78-84
 * showed the files directly inside); hide rules on every name of the way, not only the last
 * (docs/decisions.md D8.11). `under` itself was checked as fs/list checks its folder.
 */
export function visibilityOf(viewer: Viewer, metas: readonly MetaRow[], under: string, password: string): Visibility {
  const { scopes } = viewer.grants;
  const holders = (bit: number) =>
    scopes.some((scope) => scope.path === "/" && (scope.permission & bit) !== 0)
      ? null
      : scopes.filter((scope) => (scope.permission & bit) !== 0).map((scope) => scope.path);
  const blocked = metas
    .filter(
      (meta) =>
        meta.password !== "" &&
        meta.path !== under &&
        isWithin(meta.path, under) &&
        (permissionAt(viewer.grants, meta.path) & Permission.ACCESS_WITHOUT_PASSWORD) === 0 &&
        !passwordMatches(meta, password),
    )
    .map((meta) => meta.path);
  const hides = metas.flatMap((meta): HideRule[] => {
    const patterns = searchPatterns(meta.hide);
    const reaches = isWithin(meta.path, under) || (meta.hideSub && isWithin(under, meta.path));
    if (patterns.length === 0 || !reaches) return [];
    const deeper = metas.filter((other) => other.path !== meta.path && isWithin(other.path, meta.path));
    return [
      {
        path: meta.path,
        sub: meta.hideSub,
        patterns: patterns.includes(UNSAFE) ? "all" : patterns,
        deeper: deeper.map((other) => other.path).sort((a, b) => depthOf(a) - depthOf(b)),
      },
    ];
  });
  return {
    under,
    scopes: scopes.some((scope) => scope.path === "/") ? null : scopes.map((scope) => scope.path),
    blocked,
    hides,
    seeHides: holders(Permission.SEE_HIDES),
  };
}

const UNSAFE = "\u0000unsafe";

/**
 * A meta's hide lines for SQL: lines JavaScript cannot compile are dropped (they hide nothing in a
 * listing either, fs/rules.ts hidePatterns); a line using syntax SQLite's REGEXP reads otherwise
 * (lookarounds, lazy or possessive quantifiers, back references, Unicode classes, flags) becomes
 * UNSAFE: the search then hides every name the rule covers rather than guess (docs/decisions.md D11.3).
 */
export function searchPatterns(hide: string): string[] {
  return hide
    .split("\n")
    .map((line) => line.replace(/\r$/, ""))
    .filter((line) => line !== "")
    .flatMap((line) => {
      try {
        new RegExp(line);
      } catch {
        return [];
      }
      return [/\(\?|[*+?}]\?|[*+}]\+|\\[1-9kpPcux0]|\[\[|\\B|&&/.test(line) ? UNSAFE : line];
    });
}

/** A keyword, matched as a substring: by the trigram index from three characters, by LIKE below. */
export interface Keywords {
  /** FTS5 query text: each keyword a quoted phrase, ANDed; "" when none is long enough. */
  match: string;
  /** LIKE patterns on the folded name, `%` `_` and `\` escaped (literal), ESCAPE '\'. */
  likes: string[];
  /**
   * The same keywords folded, for the gram postings (store.ts, docs/decisions.md D24.2); null when
   * one folds to more than two characters (a rare case fold, as İ to i̇), which only LIKE answers.
   */
  grams: string[] | null;
}

/**
 * Keyword text a search takes: no control characters but the whitespace that separates keywords
 * (tab, line breaks), no unpaired surrogates. FTS5 stops reading a query at a NUL (an internal
 * error), and no file name holds such a character (fs/path.ts refuses them), so the text is
 * refused with a clear message rather than cleaned into a search the caller did not type
 * (docs/decisions.md D11.5).
 */
export const isKeywordText = (text: string) => isWellFormedText(text.replace(/[\t\n\v\f\r]/g, " "));

/** Whitespace-separated keywords, all required (AList v3.58.0 internal/db/searchnode.go:59-64), literal, case folded. */
export function keywordsOf(text: string): Keywords {
  const words = text.split(/\s+/).filter((word) => word !== "");
  const long = words.filter((word) => [...word].length >= 3);
  const short = words.filter((word) => [...word].length < 3);
  const folded = short.map((word) => word.toLowerCase());
  return {
    match: long.map((word) => `"${word.replace(/"/g, '""')}"`).join(" AND "),
    likes: folded.map((word) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`),
    grams: folded.every((word) => [...word].length <= 2) ? folded : null,
  };
}

/** The reply's `parent`: the node's folder in the caller's view (relative to its base path). */
export function viewParent(basePath: string, fullParent: string): string {
  if (basePath === "/" || basePath === "") return fullParent;
  return fullParent === basePath ? "/" : fullParent.slice(basePath.length);
}

// ---------------------------------------------------------------------------------------------
// The build's rules.

/** `ignore_paths`: one path per line; a folder is skipped with everything below it (a path rule, not a text prefix). */
export function ignoredPaths(setting: string): string[] {
  return setting
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("/"))
    .map((line) => (line.length > 1 ? line.replace(/\/+$/, "") : line));
}

export const isIgnored = (ignored: readonly string[], path: string) => ignored.some((rule) => isWithin(path, rule));

/** AList's progress object (AList v3.58.0 internal/search/util.go:17-39). */
export interface Progress {
  obj_count: number;
  is_done: boolean;
  last_done_time: string | null;
  error: string;
}

/** The stored `index_progress`, with AList's defaults for what it lacks (`{}` before any build). */
export function progressOf(stored: string): Progress {
  let parsed: Partial<Progress> = {};
  try {
    const value = JSON.parse(stored) as unknown;
    if (value !== null && typeof value === "object") parsed = value as Partial<Progress>;
  } catch {}
  return {
    obj_count: typeof parsed.obj_count === "number" ? parsed.obj_count : 0,
    is_done: parsed.is_done === true,
    last_done_time: typeof parsed.last_done_time === "string" ? parsed.last_done_time : null,
    error: typeof parsed.error === "string" ? parsed.error : "",
  };
}

/**
 * Is there an index to keep up to date: a build ran or runs since the last clear (`{}`: never built;
 * a clear leaves is_done with no last_done_time)?
 */
export function indexExists(stored: string): boolean {
  const progress = progressOf(stored);
  return stored.includes("is_done") && (!progress.is_done || progress.last_done_time !== null);
}

/**
 * The manual scan's progress as the web UI reads it: done unless a scan was started and its folders
 * are still queued (a stop, or an index stop, empties the queue), so a scan that never ran is done.
 */
export function scanProgressOf(stored: string, queued: boolean): { obj_count: number; is_done: boolean } {
  const progress = progressOf(stored);
  return { obj_count: progress.obj_count, is_done: !(queued && stored.includes("is_done") && !progress.is_done) };
}
