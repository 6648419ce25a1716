// "The first mount segment" (AList v3.58.0 internal/op/storage.go:44 `firstPathSegment`): what a
// storage's delete checks usage by. It has two forms because it is needed on both sides: SQL
// narrows the rows a delete reads, TypeScript compares exactly (after cleaning paths SQL cannot
// clean). They sit together here, and segment.test.ts beside it checks that they agree.
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { cleanPath } from "../../lib/path.ts";

/** `a` for `/a/b`; empty for `/`. */
export function firstSegment(path: string): string {
  return cleanPath(path).split("/")[1] ?? "";
}

/** `firstSegment()` of a clean path (a stored mount path), in SQL. */
export function firstSegmentSql(cleanPathValue: SQLWrapper): SQL {
  const rest = sql`substr(${cleanPathValue}, 2)`;
  return sql`(CASE WHEN instr(${rest}, '/') > 0 THEN substr(${rest}, 1, instr(${rest}, '/') - 1) ELSE ${rest} END)`;
}
