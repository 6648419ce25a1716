// Test-side access to the local libSQL endpoint from inside workerd: raw SQL through the same
// Hrana client the Worker uses, the endpoint's round-trip counter and its list of table scans.
import { createClient, type InValue } from "@libsql/client/web";
import { env } from "cloudflare:test";

const client = createClient({ url: env.TURSO_DATABASE_URL!, authToken: env.TURSO_AUTH_TOKEN! });

/** Runs one statement and returns its rows as arrays. */
export async function sql(statement: string, args: InValue[] = []): Promise<unknown[][]> {
  const result = await client.execute({ sql: statement, args });
  return result.rows.map((row) => Array.from(row));
}

/** Starts counting pipelines (round trips) at the endpoint; `count()` reads the difference. */
export async function roundTrips(): Promise<{ count(): Promise<number> }> {
  const read = async () =>
    (
      (await (
        await fetch(`${env.TURSO_DATABASE_URL}/__stats`, {
          headers: { Authorization: `Bearer ${env.TURSO_AUTH_TOKEN}` },
        })
      ).json()) as { pipelines: number }
    ).pipelines;
  const start = await read();
  return { count: async () => (await read()) - start };
}

interface TableScan {
  sql: string;
  scans: string[];
  runs: number;
}

/**
 * Starts watching the statements whose plans read a table whole (the endpoint's `/__scans`);
 * `since()` lists those that ran after the start, with the plan steps that read whole.
 */
export async function tableScans(): Promise<{ since(): Promise<{ sql: string; scans: string[] }[]> }> {
  const read = async () =>
    (await (
      await fetch(`${env.TURSO_DATABASE_URL}/__scans`, {
        headers: { Authorization: `Bearer ${env.TURSO_AUTH_TOKEN}` },
      })
    ).json()) as TableScan[];
  const before = new Map((await read()).map((scan) => [scan.sql, scan.runs]));
  return {
    since: async () =>
      (await read())
        .filter((scan) => scan.runs > (before.get(scan.sql) ?? 0))
        .map(({ sql, scans }) => ({ sql, scans })),
  };
}
