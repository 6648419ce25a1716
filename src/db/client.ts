import { createClient } from "@libsql/client/web";
import type { LibSQLDatabase } from "drizzle-orm/libsql";
import { drizzle } from "drizzle-orm/libsql/web";
import * as schema from "./schema.ts";

export type Database = LibSQLDatabase<typeof schema>;

/**
 * The Worker's database: Turso, sqld or the local endpoint, over Hrana/HTTP. Node code (scripts,
 * unit tests) opens its own with @libsql/client/node instead, which also accepts `file:` URLs.
 */
export function openDatabase(url: string, authToken?: string): Database {
  return drizzle(createClient({ url, ...(authToken ? { authToken } : {}) }), { schema });
}
