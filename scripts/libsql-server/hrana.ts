// Hrana over HTTP with the JSON encoding (versions 2 and 3): the wire structures, their
// validation, and the conversion of values between the wire and the `libsql` package.
// See docs/HRANA_3_SPEC.md in the tursodatabase/libsql repository.

/** A value as the `libsql` package binds and returns it (with safe integers enabled). */
export type SqliteValue = null | bigint | number | string | Uint8Array;

export type Value =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

/** SQL text given inline or by the id of a text stored with `store_sql`. */
export type SqlRef = { sql: string; sql_id?: undefined } | { sql?: undefined; sql_id: number };

export type Stmt = SqlRef & {
  args: SqliteValue[];
  named_args: { name: string; value: SqliteValue }[];
  want_rows: boolean;
};

export type BatchCond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: BatchCond }
  | { type: "and" | "or"; conds: BatchCond[] }
  | { type: "is_autocommit" };

export interface Batch {
  steps: { condition: BatchCond | undefined; stmt: Stmt }[];
}

export type StreamRequest =
  | { type: "close" | "get_autocommit" }
  | { type: "execute"; stmt: Stmt }
  | { type: "batch"; batch: Batch }
  | ({ type: "sequence" | "describe" } & SqlRef)
  | { type: "store_sql"; sql_id: number; sql: string }
  | { type: "close_sql"; sql_id: number };

export interface PipelineReqBody {
  baton: string | undefined;
  requests: StreamRequest[];
}

export interface CursorReqBody {
  baton: string | undefined;
  batch: Batch;
}

interface Col {
  name: string | null;
  decltype: string | null;
}

// The Hrana spec's StmtResult has exactly these four fields. sqld also sends rows_read, rows_written
// and query_duration_ms, which clients ignore; the `libsql` package cannot measure the first two.
export interface StmtResult {
  cols: Col[];
  rows: Value[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
}

export interface HranaError {
  message: string;
  code: string;
}

export interface BatchResult {
  step_results: (StmtResult | null)[];
  step_errors: (HranaError | null)[];
}

export interface DescribeResult {
  params: { name: string | null }[];
  cols: Col[];
  is_explain: boolean;
  is_readonly: boolean;
}

export type StreamResponse =
  | { type: "close" | "sequence" | "store_sql" | "close_sql" }
  | { type: "execute"; result: StmtResult }
  | { type: "batch"; result: BatchResult }
  | { type: "describe"; result: DescribeResult }
  | { type: "get_autocommit"; is_autocommit: boolean };

export type StreamResult = { type: "ok"; response: StreamResponse } | { type: "error"; error: HranaError };

export type CursorEntry =
  | { type: "step_begin"; step: number; cols: Col[] }
  | { type: "row"; row: Value[] }
  | { type: "step_end"; affected_row_count: number; last_insert_rowid: string | null }
  | { type: "step_error"; step: number; error: HranaError };

/** The request body violates the protocol; the whole HTTP request fails with status 400. */
export class ProtocolError extends Error {
  readonly code = "PROTOCOL_ERROR";
}

/** A request of a pipeline failed; reported in its result, the other requests still run. */
export class RequestError extends Error {
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Maps a failure to the Hrana `Error` structure. SQLite errors are reported like sqld does:
 * the primary result code (SQLITE_CONSTRAINT, not SQLITE_CONSTRAINT_UNIQUE) and the message
 * prefixed with "SQLite error: ", so code that inspects errors behaves the same against Turso.
 */
export function toHranaError(error: unknown): HranaError {
  if (error instanceof RequestError) return { message: error.message, code: error.code };
  const message = error instanceof Error ? error.message : String(error);
  const code = errorCode(error);
  if (code?.startsWith("SQLITE_")) {
    // Extended codes are the primary name plus a suffix; primary names have no underscore.
    return { message: `SQLite error: ${message}`, code: code.split("_").slice(0, 2).join("_") };
  }
  return { message, code: "INTERNAL_ERROR" };
}

/** The `code` of an error thrown by `libsql` (e.g. "SQLITE_CONSTRAINT_UNIQUE"), if any. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

export function encodeValue(value: unknown): Value {
  if (value === null) return { type: "null" };
  if (typeof value === "bigint") return { type: "integer", value: value.toString() };
  if (typeof value === "number") return { type: "float", value };
  if (typeof value === "string") return { type: "text", value };
  if (value instanceof Uint8Array) {
    return { type: "blob", base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  }
  throw new Error(`Unexpected value of type ${typeof value} returned by libsql`);
}

// --- Request validation ---------------------------------------------------------------------

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function fail(path: string, expected: string): never {
  throw new ProtocolError(`Invalid request: ${path} must be ${expected}`);
}

function object(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(path, "an object");
  return value as Record<string, unknown>;
}

function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, "an array");
  return value;
}

function string(value: unknown, path: string): string {
  if (typeof value !== "string") fail(path, "a string");
  return value;
}

function boolean(value: unknown, path: string): boolean {
  if (typeof value !== "boolean") fail(path, "a boolean");
  return value;
}

function int32(value: unknown, path: string): number {
  if (!Number.isInteger(value) || (value as number) < -(2 ** 31) || (value as number) >= 2 ** 31) {
    fail(path, "a 32-bit integer");
  }
  return value as number;
}

/** Absent and null mean the same in the JSON encoding. */
function optional<T>(value: unknown, path: string, decode: (value: unknown, path: string) => T): T | undefined {
  return value === undefined || value === null ? undefined : decode(value, path);
}

export function decodePipelineBody(body: unknown): PipelineReqBody {
  const o = object(body, "body");
  return {
    baton: optional(o.baton, "baton", string),
    requests: array(o.requests, "requests").map((r, i) => decodeRequest(r, `requests[${i}]`)),
  };
}

export function decodeCursorBody(body: unknown): CursorReqBody {
  const o = object(body, "body");
  return { baton: optional(o.baton, "baton", string), batch: decodeBatch(o.batch, "batch") };
}

function decodeRequest(value: unknown, path: string): StreamRequest {
  const o = object(value, path);
  const type = string(o.type, `${path}.type`);
  switch (type) {
    case "close":
    case "get_autocommit":
      return { type };
    case "execute":
      return { type, stmt: decodeStmt(o.stmt, `${path}.stmt`) };
    case "batch":
      return { type, batch: decodeBatch(o.batch, `${path}.batch`) };
    case "sequence":
    case "describe":
      return { type, ...decodeSqlRef(o, path) };
    case "store_sql":
      return { type, sql_id: int32(o.sql_id, `${path}.sql_id`), sql: string(o.sql, `${path}.sql`) };
    case "close_sql":
      return { type, sql_id: int32(o.sql_id, `${path}.sql_id`) };
    default:
      throw new ProtocolError(`Invalid request: ${path}.type ${JSON.stringify(type)} is not a known request type`);
  }
}

function decodeSqlRef(o: Record<string, unknown>, path: string): SqlRef {
  const sql = optional(o.sql, `${path}.sql`, string);
  const sql_id = optional(o.sql_id, `${path}.sql_id`, int32);
  if (sql !== undefined && sql_id === undefined) return { sql };
  if (sql === undefined && sql_id !== undefined) return { sql_id };
  return fail(path, "given exactly one of `sql` and `sql_id`");
}

function decodeStmt(value: unknown, path: string): Stmt {
  const o = object(value, path);
  const namedArgs = optional(o.named_args, `${path}.named_args`, array) ?? [];
  return {
    ...decodeSqlRef(o, path),
    args: (optional(o.args, `${path}.args`, array) ?? []).map((v, i) => decodeValue(v, `${path}.args[${i}]`)),
    named_args: namedArgs.map((v, i) => {
      const arg = object(v, `${path}.named_args[${i}]`);
      return {
        name: string(arg.name, `${path}.named_args[${i}].name`),
        value: decodeValue(arg.value, `${path}.named_args[${i}].value`),
      };
    }),
    want_rows: optional(o.want_rows, `${path}.want_rows`, boolean) ?? true,
  };
}

function decodeBatch(value: unknown, path: string): Batch {
  const steps = array(object(value, path).steps, `${path}.steps`);
  return {
    steps: steps.map((s, i) => {
      const step = object(s, `${path}.steps[${i}]`);
      return {
        condition: optional(step.condition, `${path}.steps[${i}].condition`, decodeCond),
        stmt: decodeStmt(step.stmt, `${path}.steps[${i}].stmt`),
      };
    }),
  };
}

function decodeCond(value: unknown, path: string): BatchCond {
  const o = object(value, path);
  const type = string(o.type, `${path}.type`);
  switch (type) {
    case "ok":
    case "error": {
      const step = int32(o.step, `${path}.step`);
      if (step < 0) fail(`${path}.step`, "a step index");
      return { type, step };
    }
    case "not":
      return { type, cond: decodeCond(o.cond, `${path}.cond`) };
    case "and":
    case "or":
      return { type, conds: array(o.conds, `${path}.conds`).map((c, i) => decodeCond(c, `${path}.conds[${i}]`)) };
    case "is_autocommit":
      return { type };
    default:
      throw new ProtocolError(`Invalid request: ${path}.type ${JSON.stringify(type)} is not a known condition`);
  }
}

/** Integers become bigint and blobs Buffer, so that `libsql` binds them with the right type. */
function decodeValue(value: unknown, path: string): SqliteValue {
  const o = object(value, path);
  switch (o.type) {
    case "null":
      return null;
    case "integer": {
      const text = string(o.value, `${path}.value`);
      const int = /^-?\d+$/.test(text) ? BigInt(text) : undefined;
      if (int === undefined || int < INT64_MIN || int > INT64_MAX) {
        fail(`${path}.value`, "a 64-bit integer in a string");
      }
      return int;
    }
    case "float":
      if (typeof o.value !== "number") fail(`${path}.value`, "a number");
      return o.value;
    case "text":
      return string(o.value, `${path}.value`);
    case "blob":
      return Buffer.from(string(o.base64, `${path}.base64`), "base64");
    default:
      return fail(`${path}.type`, `one of "null", "integer", "float", "text", "blob"`);
  }
}
