import { createClient } from "@libsql/client/http";
import type { LibSQLDatabase } from "drizzle-orm/libsql";
import { drizzle } from "drizzle-orm/libsql/http";

// Queries use the query builder with the tables of schema.ts; no relational queries (`db.query`).
export type Database = LibSQLDatabase;

/**
 * The Worker's database: Turso, sqld or the local endpoint, over Hrana/HTTP (the HTTP-only client:
 * the WebSocket one would add its code to the bundle for URLs we never use). Node code (scripts,
 * unit tests) opens its own with @libsql/client/node instead, which also accepts `file:` URLs.
 */
export function openDatabase(url: string, authToken?: string): Database {
  return drizzle(createClient({ url, concurrency: NO_QUEUE, ...(authToken ? { authToken } : {}) }));
}

/**
 * The client queues requests past its `concurrency` (20 by default) behind others in flight. One
 * client serves every request of an isolate, and workerd cancels a request waiting on a promise
 * another request settles ("Promise will never complete"): more than 20 concurrent requests hung.
 * So nothing queues; each request's own statements are few.
 */
const NO_QUEUE = 1_000_000;
