// Queries whose SQL text never changes, built once per isolate. drizzle builds a query's text
// anew at every call, 35-60 µs each (measured in V8), and the guard's four run on every request;
// a kept query builds its text and result mapping once and only binds new values after.
// It calls drizzle's private `_prepare()` and stands in for a query inside `db.batch`: not a public
// contract, so drizzle-orm is pinned to an exact version and src/db/kept.test.ts fails on an
// upgrade that changes either (run it first when bumping drizzle).
import { fillPlaceholders, sql, type Placeholder } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "./client.ts";

/** What drizzle's batch asks of each query (libsql/session.js `batch`): its text and values, and how to map its rows. */
interface BuiltQuery {
  getQuery(): { sql: string; params: unknown[] };
  mapResult(result: unknown, isFromBatch?: boolean): unknown;
}

/**
 * A query built once from `build`, given placeholders for `names`, and run with values each
 * time. The result is a batch item like the query it stands for, with the same result type: it
 * goes into `db.batch` or a plan (src/db/plan.ts); awaiting it alone runs it in a batch of one.
 */
export function keptQuery<const K extends string, Q extends BatchItem<"sqlite">>(
  names: readonly K[],
  build: (db: Database, values: Record<K, Placeholder>) => Q,
) {
  let built: BuiltQuery | undefined;
  return (db: Database, values: Record<K, unknown>): Q => {
    // Placeholders stand where `build` expects values, and every query drizzle builds has the
    // private `_prepare()` that kept.test.ts checks: two casts drizzle's public types cannot say.
    built ??= (
      build(
        db,
        Object.fromEntries(names.map((name) => [name, sql.placeholder(name)])) as unknown as Record<K, Placeholder>,
      ) as unknown as { _prepare(): BuiltQuery }
    )._prepare();
    const { sql: text, params } = built.getQuery();
    const query = { sql: text, params: fillPlaceholders(params, values) };
    const mapping = built;
    const item = {
      _prepare: (): BuiltQuery => ({
        getQuery: () => query,
        mapResult: (result, isFromBatch) => mapping.mapResult(result, isFromBatch),
      }),
      // biome-ignore lint/suspicious/noThenProperty: awaited alone, a kept query runs, as a drizzle query does
      then: (resolve: (value: unknown) => unknown, reject: (reason: unknown) => unknown) =>
        // `item` has the two members drizzle's batch reads (see BuiltQuery), not its whole type.
        db
          .batch([item as unknown as BatchItem<"sqlite">])
          .then(([result]) => result)
          .then(resolve, reject),
    };
    // It stands in for Q wherever drizzle's batch takes Q: the members above are all it reads.
    return item as unknown as Q;
  };
}
