// The Worker's database client: Hrana 3 over HTTP, JSON encoded, the two calls drizzle's libSQL
// session makes (`execute`, `batch`). @libsql/client/http does the same over a stream machine
// that also speaks protobuf, cursors and interactive transactions, none of which a request here
// uses (docs/decisions.md D1.9: batches, not transactions); it weighed about 13 KiB gzip in the
// bundle and built each row with a `defineProperty` per column. docs/decisions.md D26.1.
import type { Client, InArgs, InStatement, InValue, ResultSet, Row, Transaction, Value } from "@libsql/client";

/** A value as Hrana's JSON encoding writes it. */
type WireValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

interface WireStmt {
  sql: string;
  args?: WireValue[];
  named_args?: { name: string; value: WireValue }[];
  want_rows: boolean;
}

type WireCond = { type: "ok"; step: number } | { type: "not"; cond: WireCond } | { type: "is_autocommit" };
type WireCondition = WireCond | { type: "and"; conds: WireCond[] };

interface WireStmtResult {
  cols: { name: string | null; decltype?: string | null }[];
  rows: WireValue[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
}

interface WireError {
  message: string;
  code?: string | null;
}

type WireResult = { type: "ok"; response: { type: string; result?: unknown } } | { type: "error"; error: WireError };

/** A statement the database refused, with its SQLite code (src/db/errors.ts reads both). */
class DatabaseError extends Error {
  readonly code: string;
  constructor(error: WireError) {
    super(error.message);
    this.name = "DatabaseError";
    this.code = error.code ?? "UNKNOWN";
  }
}

/** The database did not answer (no connection, or an HTTP 5xx or 429): a try later may work. */
class DatabaseUnavailable extends Error {
  override name = "DatabaseUnavailable";
  constructor(message: string, cause: unknown) {
    super(message, cause === null ? undefined : { cause });
  }
}

/** `libsql://` means HTTPS (or HTTP with `?tls=0`, as @libsql/client reads it); http(s) stays. */
export function pipelineUrl(url: string): string {
  const parsed = new URL(url);
  let scheme = parsed.protocol;
  // URL's protocol setter cannot turn libsql: (not a special scheme) into https:: rebuilt as text.
  if (scheme === "libsql:") scheme = parsed.searchParams.get("tls") === "0" ? "http:" : "https:";
  else if (scheme !== "http:" && scheme !== "https:")
    throw new TypeError(`The database URL must be libsql:, https: or http:, not ${scheme}`);
  return `${scheme}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}/v3/pipeline`;
}

function unsupported(what: string): never {
  throw new Error(`${what} is not supported by the Worker's database client (docs/decisions.md D1.9)`);
}

export class HranaClient implements Client {
  readonly protocol = "http";
  closed = false;
  readonly #url: string;
  readonly #headers: Record<string, string>;

  constructor(url: string, authToken?: string) {
    this.#url = pipelineUrl(url);
    this.#headers = { "content-type": "application/json" };
    if (authToken) this.#headers.authorization = `Bearer ${authToken}`;
  }

  execute(stmt: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  async execute(stmt: InStatement, args?: InArgs): Promise<ResultSet> {
    const [result] = await this.#pipeline([{ type: "execute", stmt: toWire(stmt, args) }]);
    return resultSet(ok(result).result);
  }

  /**
   * One round trip, one transaction, as @libsql/client builds it: BEGIN, each statement on the
   * success of the one before while the transaction is open, COMMIT, and ROLLBACK unless the
   * commit ran. The first statement that failed is thrown.
   */
  async batch(stmts: (InStatement | [string, InArgs?])[], mode: "write" | "read" | "deferred" = "deferred") {
    const steps: { condition?: WireCondition; stmt: WireStmt }[] = [
      {
        stmt: plain(
          mode === "deferred" ? "BEGIN DEFERRED" : mode === "read" ? "BEGIN TRANSACTION READONLY" : "BEGIN IMMEDIATE",
        ),
      },
    ];
    const open: WireCond = { type: "not", cond: { type: "is_autocommit" } };
    for (const stmt of stmts) {
      const wire = Array.isArray(stmt) ? toWire(stmt[0], stmt[1]) : toWire(stmt);
      steps.push({ condition: { type: "and", conds: [{ type: "ok", step: steps.length - 1 }, open] }, stmt: wire });
    }
    const commit = steps.length;
    steps.push({ condition: { type: "and", conds: [{ type: "ok", step: commit - 1 }, open] }, stmt: plain("COMMIT") });
    steps.push({ condition: { type: "not", cond: { type: "ok", step: commit } }, stmt: plain("ROLLBACK") });

    const [response] = await this.#pipeline([{ type: "batch", batch: { steps } }]);
    const { step_results: results, step_errors: errors } = ok(response).result as {
      step_results: (WireStmtResult | null)[];
      step_errors: (WireError | null)[];
    };
    for (let step = 0; step <= commit; step++) {
      const error = errors[step];
      if (error) throw new DatabaseError(error);
    }
    return stmts.map((_, i) => {
      const result = results[i + 1];
      if (!result) throw new Error("A statement of the batch did not run: the transaction was rolled back");
      return resultSet(result);
    });
  }

  async migrate(): Promise<ResultSet[]> {
    return unsupported("migrate");
  }
  async transaction(): Promise<Transaction> {
    return unsupported("An interactive transaction");
  }
  async executeMultiple(): Promise<void> {
    return unsupported("executeMultiple");
  }
  async sync(): Promise<undefined> {
    return unsupported("sync");
  }
  reconnect(): void {}
  close(): void {
    this.closed = true;
  }

  /** One HTTP request: the given requests on a fresh stream, then closing it. */
  async #pipeline(requests: unknown[]): Promise<WireResult[]> {
    let response: Response;
    try {
      response = await fetch(this.#url, {
        method: "POST",
        headers: this.#headers,
        body: JSON.stringify({ baton: null, requests: [...requests, { type: "close" }] }),
      });
    } catch (error) {
      if (error instanceof Error && error.name === "AbortError") throw error;
      throw new DatabaseUnavailable(`The database could not be reached: ${String(error)}`, error);
    }
    if (!response.ok) {
      const text = await response.text();
      const message = `The database answered HTTP ${response.status}: ${text.slice(0, 200)}`;
      throw response.status >= 500 || response.status === 429
        ? new DatabaseUnavailable(message, null)
        : new Error(message);
    }
    const body: { results: WireResult[] } = await response.json();
    return body.results;
  }
}

function ok(result: WireResult | undefined): { type: string; result?: unknown } {
  if (!result) throw new Error("The database sent no result for a request");
  if (result.type === "error") throw new DatabaseError(result.error);
  return result.response;
}

function plain(sql: string): WireStmt {
  return { sql, want_rows: false };
}

function toWire(stmt: InStatement, extra?: InArgs): WireStmt {
  const sql = typeof stmt === "string" ? stmt : stmt.sql;
  const args = typeof stmt === "string" ? extra : (stmt.args ?? extra);
  const wire: WireStmt = { sql, want_rows: true };
  if (Array.isArray(args)) wire.args = args.map(valueToWire);
  else if (args) wire.named_args = Object.entries(args).map(([name, value]) => ({ name, value: valueToWire(value) }));
  return wire;
}

/** The encoding @libsql/client uses, so the database sees the same values: numbers travel as floats. */
function valueToWire(value: InValue): WireValue {
  if (value === null) return { type: "null" };
  switch (typeof value) {
    case "string":
      return { type: "text", value };
    case "number":
      if (!Number.isFinite(value)) throw new RangeError("Only finite numbers can be passed as arguments");
      return { type: "float", value };
    case "bigint":
      return { type: "integer", value: String(value) };
    case "boolean":
      return { type: "integer", value: value ? "1" : "0" };
  }
  if (value instanceof Date) return { type: "float", value: value.valueOf() };
  if (value instanceof ArrayBuffer) return { type: "blob", base64: toBase64(new Uint8Array(value)) };
  if (value instanceof Uint8Array) return { type: "blob", base64: toBase64(value) };
  throw new TypeError("Unsupported type of value");
}

function valueFromWire(value: WireValue): Value {
  switch (value.type) {
    case "null":
      return null;
    case "integer": {
      const number = Number(value.value);
      if (!Number.isSafeInteger(number))
        throw new RangeError("Received integer which is too large to be safely represented as a JavaScript number");
      return number;
    }
    case "float":
    case "text":
      return value.value;
    case "blob":
      return fromBase64(value.base64).buffer;
  }
}

const VALUES = Symbol("values");
const RESULT_VALUES = Symbol("result values");

/** What the rows of one list of columns share: their prototype, and each name with its first index. */
interface RowShape {
  proto: object;
  named: [string, number][];
}

/**
 * Row shapes by their columns, kept per isolate: a query returns the same columns every time, so
 * its rows share one prototype across requests and V8 keeps their hidden classes and the code
 * that reads them. Building a prototype (a getter defined per column) for every result cost more
 * than everything else the client does for a request's batch. Bounded: a burst of ad-hoc column
 * lists starts the cache over.
 */
const shapes = new Map<string, RowShape>();
const MAX_SHAPES = 512;

function shapeOf(columns: string[]): RowShape {
  const key = JSON.stringify(columns);
  let shape = shapes.get(key);
  if (shape) return shape;
  const proto: object = Object.create(null);
  Object.defineProperty(proto, "length", { value: columns.length });
  const named: [string, number][] = [];
  columns.forEach((name, i) => {
    Object.defineProperty(proto, i, {
      get(this: { [VALUES]: Value[] }) {
        return this[VALUES][i];
      },
    });
    if (!named.some(([seen]) => seen === name)) named.push([name, i]);
  });
  shape = { proto, named };
  if (shapes.size >= MAX_SHAPES) shapes.clear();
  shapes.set(key, shape);
  return shape;
}

/**
 * Rows as @libsql/client shapes them (indexes and `length` not enumerable, column names
 * enumerable, the first of a repeated name wins), built cheaply: the indexes and `length` are
 * getters on one prototype per list of columns (shapeOf), and each row gets its names as plain
 * properties and its values, hidden, as one more. They are built only when `rows` is first read:
 * a kept query (src/db/kept.ts) maps the decoded values straight (valuesOf), and never needs them.
 */
function resultSet(result: unknown): ResultSet {
  const { cols, rows: wireRows, affected_row_count, last_insert_rowid } = result as WireStmtResult;
  const columns = cols.map((col) => col.name ?? "");
  // Decoded now, so a value out of range fails the batch where it always did.
  const values = wireRows.map((wire) => wire.map(valueFromWire));
  let built: Row[] | undefined;
  const set: ResultSet = {
    columns,
    columnTypes: cols.map((col) => col.decltype ?? ""),
    get rows(): Row[] {
      built ??= buildRows(columns, values);
      return built;
    },
    rowsAffected: affected_row_count,
    lastInsertRowid: last_insert_rowid === null ? undefined : BigInt(last_insert_rowid),
    toJSON: () => ({ columns, rows: values.map((row) => Array.from({ length: columns.length }, (_, i) => row[i])) }),
  };
  Object.defineProperty(set, RESULT_VALUES, { value: values });
  return set;
}

function buildRows(columns: string[], values: Value[][]): Row[] {
  const { proto, named } = shapeOf(columns);
  return values.map((rowValues): Row => {
    const row: Row & { [VALUES]: Value[] } = Object.create(proto);
    Object.defineProperty(row, VALUES, { value: rowValues });
    for (const [name, i] of named) row[name] = rowValues[i] ?? null;
    return row;
  });
}

/**
 * A result's rows as arrays of values, one per column, when this client made it (undefined for
 * any other client's): what a kept query reads instead of the rows' getters (D26.6).
 */
export function valuesOf(result: unknown): Value[][] | undefined {
  if (typeof result !== "object" || result === null || !(RESULT_VALUES in result)) return undefined;
  return (result as { [RESULT_VALUES]: Value[][] })[RESULT_VALUES];
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  // Hrana may leave the padding out.
  const binary = atob(text.padEnd(text.length + ((4 - (text.length % 4)) % 4), "="));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
