// Queries whose SQL text never changes, built once per isolate. drizzle builds a query's text
// anew at every call, 35-60 µs each (measured in V8), and the guard's four run on every request;
// a kept query builds its text and result mapping once and only binds new values after. Its rows
// are mapped by a mapper built once too (rowMapper): drizzle's finds each column's decoder anew
// for every value of every row.
// It calls drizzle's private `_prepare()` and stands in for a query inside `db.batch`: not a public
// contract, so drizzle-orm is pinned to an exact version and src/db/kept.test.ts fails on an
// upgrade that changes either (run it first when bumping drizzle).
import { Column, fillPlaceholders, is, SQL, sql, type Placeholder } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "./client.ts";
import { valuesOf } from "./hrana.ts";

/** What drizzle's batch asks of each query (libsql/session.js `batch`): its text and values, and how to map its rows. */
interface BuiltQuery {
  getQuery(): { sql: string; params: unknown[] };
  mapResult(result: unknown, isFromBatch?: boolean): unknown;
}

/** What drizzle's select keeps on its prepared query (sqlite-core/session.js, libsql/session.js). */
interface PreparedSelect extends BuiltQuery {
  executeMethod?: unknown;
  fields?: { path: string[]; field: unknown }[];
  customResultMapper?: unknown;
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

/** A batch result as the libSQL clients give it: rows whose columns are read by index. */
type BatchResult = { rows: ArrayLike<unknown>[] };

/**
 * The rows of a select of plain fields (no joins, no nested objects: what the kept queries are)
 * mapped as drizzle's mapResultRow maps them, with each column's name and decoder found once.
 * Null for any other query, and a result holding a blob goes to drizzle's own mapping (which
 * turns it into a Buffer first): both keep drizzle's.
 */
function rowMapper(prepared: PreparedSelect): ((result: BatchResult) => unknown[] | null) | null {
  const { executeMethod, fields, customResultMapper } = prepared;
  if (executeMethod !== "all" || !fields || customResultMapper) return null;
  // A join's tables come as nested objects (paths of two), which drizzle may null as a whole:
  // its own mapping does that. Flat fields are all the rest of what it does.
  if (fields.some(({ path }) => path.length !== 1)) return null;
  const keys = fields.map(({ path }) => path[0]!);
  const decoders = fields.map(({ field }) => decoderOf(field));
  if (decoders.includes(null)) return null;
  const count = keys.length;
  return (result) => {
    // The Worker's client hands the decoded values as they are (its rows are built on demand).
    const rows = valuesOf(result) ?? result.rows;
    const mapped: unknown[] = new Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      const out: Record<string, unknown> = {};
      for (let i = 0; i < count; i++) {
        const raw = row[i];
        if (raw instanceof ArrayBuffer) return null;
        out[keys[i]!] = raw === null ? null : decoders[i]!.mapFromDriverValue(raw);
      }
      mapped[r] = out;
    }
    return mapped;
  };
}

/** The decoder drizzle's mapResultRow picks for a selected field: a column's own, an SQL field's. */
function decoderOf(field: unknown): Decoder | null {
  if (is(field, Column)) return field;
  if (is(field, SQL)) return sqlDecoder(field);
  if (is(field, SQL.Aliased)) return sqlDecoder(field.sql);
  return null;
}

/** An SQL chunk's `decoder` (`sql<T>` or `.mapWith()`), which drizzle's public types leave out. */
function sqlDecoder(chunk: SQL): Decoder | null {
  // Read as drizzle's mapResultRow reads it; the test in kept.test.ts fails should it move.
  const { decoder } = chunk as unknown as { decoder?: Decoder };
  return typeof decoder?.mapFromDriverValue === "function" ? decoder : null;
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
  let mapRows: ((result: BatchResult) => unknown[] | null) | null = null;
  return (db: Database, values: Record<K, unknown>): Q => {
    // Placeholders stand where `build` expects values, and every query drizzle builds has the
    // private `_prepare()` that kept.test.ts checks: two casts drizzle's public types cannot say.
    built ??= (
      build(
        db,
        Object.fromEntries(names.map((name) => [name, sql.placeholder(name)])) as unknown as Record<K, Placeholder>,
      ) as unknown as { _prepare(): BuiltQuery }
    )._prepare();
    mapRows ??= rowMapper(built);
    const { sql: text, params } = built.getQuery();
    const query = { sql: text, params: fillPlaceholders(params, values) };
    const mapping = built;
    const mapper = mapRows;
    const item = {
      _prepare: (): BuiltQuery => ({
        getQuery: () => query,
        mapResult: (result, isFromBatch) =>
          (mapper && isFromBatch && mapper(result as BatchResult)) || mapping.mapResult(result, isFromBatch),
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
