// Test-side access to the local libSQL endpoint from inside workerd: raw SQL through the same
// Hrana client the Worker uses, and the endpoint's round-trip counter.
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
