// SQLite connections of the local libSQL endpoint (development tooling), on the `libsql`
// package. Every Hrana stream gets a connection of its own, as with sqld, taken from the
// connections earlier streams left (ConnectionPool).

import Database from "libsql";
import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import {
  type DescribeResult,
  RequestError,
  type SqliteValue,
  type Stmt,
  type StmtResult,
  encodeValue,
  errorCode,
} from "./hrana.ts";
import { type SqlInfo, inspectSql } from "./sql.ts";

/** Opcodes besides a write `Transaction` that make sqlite3_stmt_readonly() false. */
const WRITE_OPCODES = new Set(["Checkpoint", "JournalMode", "Vacuum", "VUpdate"]);

/**
 * Opens the file, switches it to WAL so that readers and a writer on separate connections do not
 * block each other (the mode is stored in the file, later connections inherit it), and returns
 * a connection to keep open for the server's lifetime: without one, SQLite checkpoints and
 * deletes the WAL each time the last per-stream connection closes.
 */
/**
 * Creates the database's folder (0700, if missing) and the file itself (0600): the database holds
 * password hashes and the permanent token, so no other local user may read it. SQLite gives its
 * -wal and -shm files the mode of the database file. An existing file is narrowed to 0600.
 */
export function preparePrivateDatabaseFile(path: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
}

export function openDatabaseFile(path: string): Database.Database {
  const db = new Database(path);
  db.exec("PRAGMA journal_mode = WAL");
  return db;
}

/** A statement whose plan reads a table whole, with those steps (EXPLAIN QUERY PLAN's words) and its runs. */
export interface TableScan {
  sql: string;
  scans: string[];
  runs: number;
}

/**
 * The statements run whose plans read a table whole (`SCAN storages`, or walk one of its indexes
 * whole: `SCAN storages USING INDEX …`); table-valued functions (json_each), subqueries and constant
 * rows are not tables. A connection plans a statement when it prepares it (once, until the schema
 * changes), on a connection of the watch's own: the EXPLAIN of a write stays in progress on its
 * connection, and would keep that connection's transactions from committing. A run costs nothing
 * more unless its statement scans.
 */
export class ScanWatch {
  readonly #planner: Database.Database;
  readonly #seen = new Map<string, TableScan>();

  constructor(path: string) {
    this.#planner = new Database(path, { timeout: 0 });
  }

  /** The steps of `sql`'s plan that read a table whole. */
  plan(sql: string, verb: string | undefined): string[] {
    if (verb !== "SELECT" && verb !== "UPDATE" && verb !== "DELETE" && verb !== "INSERT" && verb !== "REPLACE")
      return [];
    let plan: { detail: string }[];
    try {
      plan = this.#planner.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[];
    } catch {
      // A table only the running transaction has created yet: the planner cannot see it.
      return [];
    }
    return plan
      .map((step) => step.detail)
      .filter((detail) => /^SCAN \w+/.test(detail) && !/^SCAN CONSTANT ROW|VIRTUAL TABLE/.test(detail));
  }

  /** A statement whose plan scans (`plan`) ran, successfully, on some connection. */
  ran(sql: string, scans: string[]): void {
    const seen = this.#seen.get(sql);
    if (seen) seen.runs++;
    else this.#seen.set(sql, { sql, scans, runs: 1 });
  }

  list(): TableScan[] {
    return [...this.#seen.values()].map((scan) => ({ ...scan }));
  }

  clear(): void {
    this.#seen.clear();
  }

  close(): void {
    this.#planner.close();
  }
}

/** Statements a connection keeps prepared, by SQL text; past this many it starts again. */
const KEPT_STATEMENTS = 256;

interface PreparedStatement {
  info: SqlInfo;
  statement: Database.Statement;
  /** Whether it returns rows, read once: `libsql` asks SQLite again at every read of `reader`. */
  reader: boolean;
  cols: { name: string; decltype: string | null }[];
  /** Its plan's whole-table reads, for the ScanWatch (none without one). */
  scans: string[];
}

/**
 * Connections of ended streams, kept for the next ones (as sqld pools its connections): opening
 * one opens the file and reads the schema again, and every HTTP batch of a client is a stream of
 * its own. Only a connection back in autocommit mode, with no failed lock attempt behind it,
 * is kept.
 */
export class ConnectionPool {
  readonly #idle: Connection[] = [];
  readonly #open: () => Connection;
  readonly #max: number;

  constructor(open: () => Connection, max = 8) {
    this.#open = open;
    this.#max = max;
  }

  take(): Connection {
    return this.#idle.pop() ?? this.#open();
  }

  give(connection: Connection): void {
    if (connection.isAutocommit && !connection.isTainted && this.#idle.length < this.#max) this.#idle.push(connection);
    else connection.close();
  }

  close(): void {
    for (const connection of this.#idle.splice(0)) connection.close();
  }
}

export class Connection {
  readonly #db: Database.Database;
  readonly #busyTimeoutMs: number;
  readonly #scans: ScanWatch | undefined;
  /**
   * Each client sends the same few statements again and again: preparing one means parsing it,
   * and a connection's first prepare reads the whole schema. SQLite re-prepares a kept
   * statement by itself when the schema has changed since.
   */
  readonly #prepared = new Map<string, PreparedStatement>();
  #preparedForSchema: bigint | undefined;
  #schemaVersionProbe: Database.Statement | undefined;
  #changesProbe: Database.Statement | undefined;
  #tainted = false;

  /** `scans` plans each statement prepared and hears of the runs of those that scan (the server's `/__scans`). */
  constructor(path: string, busyTimeoutMs: number, scans?: ScanWatch) {
    // No busy timeout inside SQLite: see #retryWhileBusy() for how lock waits are done.
    this.#db = new Database(path, { timeout: 0 });
    this.#db.defaultSafeIntegers(true);
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#scans = scans;
  }

  get isAutocommit(): boolean {
    return !this.#db.inTransaction;
  }

  /**
   * A statement failed to get a lock and was left active (see #retryWhileBusy()). The open
   * transaction can still be rolled back, but nothing may commit on this connection any more:
   * the stream replaces it as soon as it is back in autocommit mode.
   */
  get isTainted(): boolean {
    return this.#tainted;
  }

  async execute(sql: string, stmt: Stmt): Promise<StmtResult> {
    const { info, statement: prepared, reader, cols, scans } = this.#prepare(sql);
    const args = bindArguments(info, stmt);
    const run = reader
      ? () => prepared.all(args) as unknown[][]
      : () => {
          prepared.run(args);
          return [];
        };

    let rows: unknown[][];
    try {
      rows = await this.#retryWhileBusy(run);
    } catch (error) {
      if (errorCode(error)?.startsWith("SQLITE_BUSY")) this.#tainted = true;
      throw error;
    }
    if (scans.length > 0) this.#scans?.ran(sql, scans);

    // Like sqld: the row count only for INSERT/UPDATE/DELETE (sqlite3_changes() keeps the value
    // of the last such statement) and the rowid only for INSERT.
    const isInsert = info.verb === "INSERT" || info.verb === "REPLACE";
    let affectedRowCount = 0;
    let lastInsertRowid: string | null = null;
    if (isInsert || info.verb === "UPDATE" || info.verb === "DELETE") {
      // Both from SQLite rather than from run(), which returns the rowid as a lossy number.
      this.#changesProbe ??= this.#db.prepare("SELECT changes(), last_insert_rowid()").raw(true);
      const [changes, rowid] = this.#changesProbe.get() as [bigint, bigint];
      affectedRowCount = Number(changes);
      if (isInsert) lastInsertRowid = rowid.toString();
    }
    return {
      cols,
      rows: stmt.want_rows ? rows.map((row) => row.map(encodeValue)) : [],
      affected_row_count: affectedRowCount,
      last_insert_rowid: lastInsertRowid,
    };
  }

  #prepare(sql: string): PreparedStatement {
    // A kept statement without result columns (BEGIN, COMMIT, a write without RETURNING) has
    // nothing a schema change could make stale: its text fixes that it returns no columns, and
    // SQLite prepares it again by itself when the schema has changed. No probe for it.
    const keptWithoutColumns = this.#prepared.get(sql);
    if (keptWithoutColumns && keptWithoutColumns.cols.length === 0) return keptWithoutColumns;
    // A schema change (on any connection) can change what a statement returns, and its columns
    // are read when it is prepared: the kept ones go.
    this.#schemaVersionProbe ??= this.#db.prepare("PRAGMA schema_version").raw(true);
    const [version] = this.#schemaVersionProbe.get() as [bigint];
    if (version !== this.#preparedForSchema) {
      this.#prepared.clear();
      this.#preparedForSchema = version;
    }
    const kept = this.#prepared.get(sql);
    if (kept) return kept;
    const info = inspectSingleStatement(sql);
    const statement = this.#db.prepare(sql);
    const reader = statement.reader;
    if (reader) statement.raw(true);
    const prepared = {
      info,
      statement,
      reader,
      cols: statement.columns().map((c) => ({ name: c.name, decltype: c.type })),
      scans: this.#scans?.plan(sql, info.verb) ?? [],
    };
    if (this.#prepared.size >= KEPT_STATEMENTS) this.#prepared.clear();
    this.#prepared.set(sql, prepared);
    return prepared;
  }

  async sequence(sql: string): Promise<void> {
    // exec() stops at the first failing statement, after the earlier ones have run, so it must
    // not be retried. Wait for the write lock first with a transaction that changes nothing;
    // nothing else in this process can take the lock between that and exec().
    if (this.isAutocommit) {
      await this.#retryWhileBusy(() => {
        this.#db.exec("BEGIN IMMEDIATE");
        this.#db.exec("ROLLBACK");
      });
    }
    this.#db.exec(sql);
  }

  describe(sql: string): DescribeResult {
    const info = inspectSingleStatement(sql);
    const prepared = this.#db.prepare(sql);
    const isExplain = info.verb === "EXPLAIN";
    return {
      params: info.paramNames.map((name) => ({ name })),
      cols: prepared.columns().map((c) => ({ name: c.name, decltype: c.type })),
      is_explain: isExplain,
      is_readonly: isExplain || !this.#writes(sql),
    };
  }

  close(): void {
    if (!this.#db.open) return;
    // While statements of `libsql` await garbage collection, close() only marks the connection
    // for closing, and an open transaction would keep its locks until then: roll it back now.
    this.#prepared.clear();
    try {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
    } finally {
      this.#db.close();
    }
  }

  /** sqlite3_stmt_readonly() is not exposed; it is derived from the program, which EXPLAIN lists. */
  #writes(sql: string): boolean {
    const program = this.#db.prepare(`EXPLAIN ${sql}`).all() as { opcode: string; p2: bigint }[];
    return program.some((op) => WRITE_OPCODES.has(op.opcode) || (op.opcode === "Transaction" && Number(op.p2) !== 0));
  }

  /**
   * Runs `step`, retrying while the database is locked by another connection, until the busy
   * timeout. SQLite's own busy timeout cannot be used: every connection lives on this one
   * thread, so while SQLite sleeps in its busy handler, the stream that holds the lock cannot
   * run the statements that would release it. Waiting happens on the event loop instead.
   *
   * A statement that failed with SQLITE_BUSY is left active by `libsql` (it resets statements
   * only before running them). An active write statement keeps every later autocommit statement
   * on the connection from committing and makes COMMIT fail; running it again resets it, which
   * a successful retry does. SQLITE_BUSY_SNAPSHOT is not retried: the transaction read data that
   * another connection has since changed, so it can never write.
   */
  async #retryWhileBusy<T>(step: () => T): Promise<T> {
    const deadline = Date.now() + this.#busyTimeoutMs;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      try {
        return step();
      } catch (error) {
        // A tainted transaction can never commit, so waiting would only delay the error.
        if (errorCode(error) !== "SQLITE_BUSY" || this.#tainted || Date.now() + delay > deadline) {
          throw error;
        }
      }
      await sleep(delay);
    }
  }
}

function inspectSingleStatement(sql: string): SqlInfo {
  const info = inspectSql(sql);
  if (info.statementCount === 0) {
    throw new RequestError("SQL string does not contain any statement", "SQL_NO_STATEMENT");
  }
  if (info.statementCount > 1) {
    throw new RequestError("SQL string contains more than one statement", "SQL_MANY_STATEMENTS");
  }
  return info;
}

/**
 * Orders the arguments by parameter index, with sqld's rules: `?` and `?NNN` take positional
 * arguments, `:name`/`@name`/`$name` take named ones (given with or without the prefix), and
 * every parameter needs a value except in EXPLAIN. Binding by position also keeps named
 * arguments away from `libsql`, which aborts the process if the statement has a nameless `?`.
 */
function bindArguments(info: SqlInfo, stmt: Stmt): SqliteValue[] {
  const { args, named_args: namedArgs } = stmt;
  if (args.length > 0 && namedArgs.length > 0) {
    throw new RequestError(
      "Specifying both positional and named arguments is not supported",
      "ARGS_BOTH_POSITIONAL_AND_NAMED",
    );
  }
  const params = info.paramNames;
  const given = args.length + namedArgs.length;
  if (given > params.length) {
    throw argsInvalid(`the statement has ${params.length} parameters, but ${given} arguments were given`);
  }
  const named = new Map(namedArgs.map((arg) => [arg.name, arg.value]));
  return params.map((name, i) => {
    let value: SqliteValue | undefined;
    if (name === null) value = args[i];
    else if (name.startsWith("?")) value = args[Number(name.slice(1)) - 1];
    else if (named.has(name)) value = named.get(name);
    else value = named.get(name.slice(1));
    if (value !== undefined) return value;
    if (info.verb === "EXPLAIN") return null;
    throw argsInvalid(`no value was given for parameter ${name ?? i + 1}`);
  });
}

function argsInvalid(detail: string): RequestError {
  return new RequestError(`Arguments do not match SQL parameters: ${detail}`, "ARGS_INVALID");
}
