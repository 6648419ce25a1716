// What metas do (reference §4): the nearest meta of a path is used alone; passwords, hide
// patterns, readme and header, and the write grant, each on the meta's own path or below it.
import type { metas } from "../../db/schema.ts";
import { constantTimeEqual } from "../../auth/password.ts";
import { baseName, isWithin, parentOf } from "./path.ts";

export type MetaRow = typeof metas.$inferSelect;

/** The meta on `path` itself, else on its closest ancestor. */
export function nearestMeta(rows: readonly MetaRow[], path: string): MetaRow | undefined {
  let best: MetaRow | undefined;
  for (const row of rows) {
    if (isWithin(path, row.path) && (!best || row.path.length > best.path.length)) best = row;
  }
  return best;
}

const applies = (meta: MetaRow, path: string, sub: boolean) => meta.path === path || (sub && isWithin(path, meta.path));

/** The meta's password guards `path` (on the meta's own folder, or below it with `p_sub`). */
export const passwordGuards = (meta: MetaRow | undefined, path: string): meta is MetaRow =>
  !!meta && meta.password !== "" && applies(meta, path, meta.passwordSub);

export function passwordMatches(meta: MetaRow, supplied: string): boolean {
  const encoder = new TextEncoder();
  return constantTimeEqual(encoder.encode(supplied), encoder.encode(meta.password));
}

/**
 * The hide patterns in force for the entries of folder `dir`. Empty lines are skipped (AList hid
 * everything when the text ended with a newline, FILES.md §3.5); a line that is not a valid
 * pattern hides nothing (create and update refuse such lines).
 */
export function hidePatterns(meta: MetaRow | undefined, dir: string): RegExp[] {
  if (!meta || meta.hide === "" || !applies(meta, dir, meta.hideSub)) return [];
  return meta.hide
    .split("\n")
    .map((line) => line.replace(/\r$/, ""))
    .filter((line) => line !== "")
    .flatMap((line) => {
      try {
        return [new RegExp(line)];
      } catch {
        return [];
      }
    });
}

export const isHidden = (patterns: readonly RegExp[], name: string) => patterns.some((pattern) => pattern.test(name));

/** Direct access to `path` hidden by its nearest meta's rules for the parent folder (§3.2 step 2). */
export const hiddenFromParent = (meta: MetaRow | undefined, path: string) =>
  path !== "/" && isHidden(hidePatterns(meta, parentOf(path)), baseName(path));

export const readmeFor = (meta: MetaRow | undefined, path: string) => (meta && applies(meta, path, meta.readmeSub) ? meta.readme : "");
export const headerFor = (meta: MetaRow | undefined, path: string) => (meta && applies(meta, path, meta.headerSub) ? meta.header : "");

/** The meta's write grant at `path` (AList's exact comparison without `w_sub`). */
export const metaGrantsWrite = (meta: MetaRow | undefined, path: string) => !!meta && meta.write && (meta.writeSub || meta.path === path);
