// A read planned before it runs: its statements and how to read their results. A plan can run on
// its own (one round trip) or travel in another batch: the auth guard takes a route's plan into
// its own batch (auth/guard.ts `reading`), so an authenticated read costs one round trip in all.
import { asc, count } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./client.ts";
import { keptQuery } from "./kept.ts";

export interface Plan<T> {
  reads: readonly BatchItem<"sqlite">[];
  read(results: unknown[]): T;
}

type Batch = [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];

/** A plan of `reads`, read back by `read` (its results in the order of the reads). */
export function plan<const R extends readonly BatchItem<"sqlite">[], T>(
  reads: R,
  read: (results: { [K in keyof R]: Awaited<R[K]> }) => T,
): Plan<T> {
  return { reads, read: (results) => read(results as { [K in keyof R]: Awaited<R[K]> }) };
}

/** Two plans as one: both plans' reads in one batch, read back as the pair of their results. */
export function joined<A, B>(first: Plan<A>, second: Plan<B>): Plan<[A, B]> {
  const split = first.reads.length;
  return {
    reads: [...first.reads, ...second.reads],
    read: (results) => [first.read(results.slice(0, split)), second.read(results.slice(split))],
  };
}

/** Runs a plan on its own: one round trip. */
export async function run<T>(db: Database, planned: Plan<T>): Promise<T> {
  return planned.read(await runBatch(db, planned.reads));
}

/**
 * Runs statements gathered at run time as one batch: one round trip, one transaction. drizzle
 * types `batch` for a tuple written out at the call, so a list of any length is cast here, once;
 * the caller names the shape of the results it reads. No statements, no round trip.
 */
export async function runBatch(db: Database, statements: readonly BatchItem<"sqlite">[]): Promise<unknown[]> {
  if (statements.length === 0) return [];
  // Not empty (checked above), which is all drizzle's tuple type asks of it.
  return db.batch(statements as unknown as Batch);
}

/** The two queries of each table's page (tablePage), built once per isolate. */
const pageQueries = new WeakMap<SQLiteTable, ReturnType<typeof pageQueriesOf>>();

function pageQueriesOf(table: SQLiteTable & { id: SQLiteColumn }) {
  return {
    rows: keptQuery(["limit", "offset"], (db, v) =>
      db
        .select()
        .from(table as SQLiteTable)
        .orderBy(asc(table.id))
        .limit(v.limit)
        .offset(v.offset),
    ),
    total: keptQuery([], (db) => db.select({ total: count() }).from(table as SQLiteTable)),
  };
}

/** One page of a table in id order, and the count of all its rows (the admin lists). */
export function tablePage<T extends SQLiteTable & { id: SQLiteColumn }>(
  db: Database,
  table: T,
  window: { limit: number; offset: number },
) {
  let queries = pageQueries.get(table);
  if (!queries) {
    queries = pageQueriesOf(table);
    pageQueries.set(table, queries);
  }
  return plan(
    [queries.rows(db, { limit: window.limit, offset: window.offset }), queries.total(db, {})],
    ([rows, [total]]) => ({ rows: rows as T["$inferSelect"][], total: total?.total ?? 0 }),
  );
}
