import { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";
import { LibSQLSession } from "drizzle-orm/libsql/session";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { HranaClient } from "./hrana.ts";

// Queries use the query builder with the tables of schema.ts; no relational queries (`db.query`).
export type Database = LibSQLDatabase;

/**
 * The Worker's database: Turso, sqld or the local endpoint, over Hrana/HTTP with our own small
 * client (src/db/hrana.ts), given to drizzle's libSQL session as drizzle's `drizzle()` would
 * (without a schema, logger or cache; `drizzle()` itself imports @libsql/client's). Node code
 * (scripts, unit tests) opens its own with @libsql/client/node, which also accepts `file:` URLs.
 */
export function openDatabase(url: string, authToken?: string): Database {
  const dialect = new SQLiteAsyncDialect();
  return new LibSQLDatabase(
    "async",
    dialect,
    new LibSQLSession(new HranaClient(url, authToken), dialect, undefined, {}, undefined),
    undefined,
  );
}
