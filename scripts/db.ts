// Node-side database access for the scripts and the test setup. Migrations read files, so they
// run here, never inside the Worker. @libsql/client/node is named explicitly: under vitest's
// worker conditions the bare import resolves to the web build, which rejects `file:` URLs.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@libsql/client/node";
import { drizzle } from "drizzle-orm/libsql/node";
import { migrate } from "drizzle-orm/libsql/migrator";
import type { Database } from "../src/db/client.ts";
import { seed, type SeedOptions, type SeedReport } from "../src/db/seed.ts";
import { storages } from "../src/db/schema.ts";
import { preparePrivateDatabaseFile } from "./libsql-server/database.ts";

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const migrationsFolder = join(projectRoot, "drizzle");

export interface DatabaseTarget {
  url: string;
  authToken?: string | undefined;
}

/** `TURSO_DATABASE_URL` when set, else the embedded default: `<DATA_DIR>/gatehouse.db`. */
export function databaseTargetFromEnv(env: NodeJS.ProcessEnv = process.env): DatabaseTarget {
  if (env.TURSO_DATABASE_URL) return { url: env.TURSO_DATABASE_URL, authToken: env.TURSO_AUTH_TOKEN };
  return { url: `file:${localDatabaseFile(env)}` };
}

export function localDatabaseFile(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.DATA_DIR || join(projectRoot, ".data"), "gatehouse.db");
}

export function openNodeDatabase(target: DatabaseTarget): { db: Database; close(): void } {
  if (target.url.startsWith("file:")) preparePrivateDatabaseFile(target.url.slice("file:".length));
  const client = createClient({ url: target.url, ...(target.authToken ? { authToken: target.authToken } : {}) });
  // The node client's drizzle is the same API as the Worker's web one, typed apart by its client.
  return { db: drizzle(client) as unknown as Database, close: () => client.close() };
}

export async function migrateAndSeed(target: DatabaseTarget, options: SeedOptions = {}): Promise<SeedReport> {
  const { db, close } = openNodeDatabase(target);
  try {
    await migrate(db, { migrationsFolder });
    return await seed(db, options);
  } finally {
    close();
  }
}

/** Where a URL points, without its credentials, for log lines. */
export function describeTarget(target: DatabaseTarget): string {
  return target.url.replace(/\/\/[^@/]*@/, "//");
}

/** Mounts `count` Virtual storages at /bench/<n> (the bench's), 500 rows per statement. */
export async function insertStorages(target: DatabaseTarget, count: number) {
  const { db, close } = openNodeDatabase(target);
  try {
    for (let start = 0; start < count; start += 500) {
      const rows = Array.from({ length: Math.min(500, count - start) }, (_, i) => ({
        mountPath: `/bench/${start + i}`,
        order: (start + i) % 7,
        driver: "Virtual",
        status: "work",
        addition: '{"num_file":30,"num_folder":30}',
        modifiedAtMs: Date.now(),
      }));
      await db.insert(storages).values(rows);
    }
  } finally {
    close();
  }
}
