// The search rows' setup for npm run bench (scripts/bench.ts): 200,000 names written straight to
// the index, the search's own batch timed without the Worker, and an index build through the
// admin routes over a Virtual tree.
import { eq } from "drizzle-orm";
import { runBatch } from "../src/db/plan.ts";
import { settings, storages } from "../src/db/schema.ts";
import { keywordsOf } from "../src/features/search/rules.ts";
import { searchPage, upsertEntries } from "../src/features/search/store.ts";
import { type DatabaseTarget, openNodeDatabase } from "./db.ts";

/** How many names the search rows search. */
export const SEARCH_NAMES = 200_000;

/** A deterministic vocabulary (a fixed seed): the names and the queries draw from it. */
function vocabulary(size: number): string[] {
  let seed = 0x9e3779b9;
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const letters = "abcdefghijklmnopqrstuvwxyz";
  return Array.from({ length: size }, () =>
    Array.from({ length: 5 + Math.floor(next() * 4) }, () => letters[Math.floor(next() * 26)]).join(""),
  );
}

/**
 * `count` names in the index, written straight to the database (as a build would, 400 a statement):
 * `/idx/<folder>/<word>-<word>-<n>.<ext>`, two words of a vocabulary of 2,000, 500 folders. Search
 * is then on: search_index `database`. The vocabulary, for the queries.
 */
export async function insertSearchNames(target: DatabaseTarget, count: number): Promise<string[]> {
  const words = vocabulary(2000);
  const extensions = ["txt", "pdf", "mkv", "jpg", "md"];
  const { db, close } = openNodeDatabase(target);
  try {
    const entries = Array.from({ length: count }, (_, i) => ({
      path: `/idx/${words[i % 500]}/${words[(i * 31) % 2000]}-${words[(i * 17 + 5) % 2000]}-${i}.${extensions[i % 5]}`,
      isDir: false,
      size: i,
    }));
    for (let start = 0; start < count; start += 4000) {
      const batch = upsertEntries(db, entries.slice(start, start + 4000));
      // A kept-alive connection the endpoint closed while this process was busy writing resets the
      // next request: the same upserts again are harmless.
      await runBatch(db, batch).catch(() => runBatch(db, batch));
    }
    await db.update(settings).set({ value: "database" }).where(eq(settings.key, "search_index"));
  } finally {
    close();
  }
  return words;
}

/**
 * The search's one batch (the page of 100 and the count) on its own, straight to the endpoint, one
 * at a time, as the admin sees the index: p50 and p99 of 100 queries of each kind.
 */
export async function timeSearchQueries(target: DatabaseTarget, words: string[]): Promise<string> {
  const { db, close } = openNodeDatabase(target);
  const seen = { under: "/", scopes: null, blocked: [], hides: [], seeHides: null };
  const kinds: [string, (i: number) => string][] = [
    ["a word", (i) => words[i % words.length]!],
    ["two words", (i) => `${words[i % words.length]} ${words[(i * 7 + 3) % words.length]!.slice(0, 4)}`],
    ["2 characters", (i) => words[i % words.length]!.slice(1, 3)],
  ];
  const lines: string[] = [];
  try {
    for (const [kind, keywords] of kinds) {
      const times: number[] = [];
      for (let i = 0; i < 100; i++) {
        const started = performance.now();
        await searchPage(db, { seen, keywords: keywordsOf(keywords(i)), scope: 0, page: 1, perPage: 100 });
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      lines.push(`${kind} p50 ${percentile(times, 0.5).toFixed(1)} ms, p99 ${percentile(times, 0.99).toFixed(1)} ms`);
    }
  } finally {
    close();
  }
  return `Search query alone (page of 100 and count, ${SEARCH_NAMES / 1000}k names, local endpoint): ${lines.join("; ")}.`;
}

/**
 * An index build through the admin routes over a Virtual tree (`/tree`: 40 files and 4 folders in
 * each folder, 5 levels with `/`), the other mounts ignored: entries written per second, from the
 * build request to a progress saying done (polled every 200 ms, as the web UI polls, which also
 * moves the build on).
 */
export async function benchBuild(base: string, token: string, target: DatabaseTarget): Promise<string> {
  const { db, close } = openNodeDatabase(target);
  try {
    await db.insert(storages).values({
      mountPath: "/tree",
      driver: "Virtual",
      status: "work",
      addition: JSON.stringify({ num_file: 40, num_folder: 4, min_file_size: 1, max_file_size: 1000 }),
      modifiedAtMs: Date.now(),
    });
    for (const [key, value] of [
      ["search_index", "database"],
      ["max_index_depth", "5"],
      ["ignore_paths", "/bench\n/wide\n/big\n/s3"],
    ])
      await db.update(settings).set({ value }).where(eq(settings.key, key!));
  } finally {
    close();
  }
  const headers = { Authorization: token, "Content-Type": "application/json" };
  const started = performance.now();
  const built = (await (
    await fetch(`${base}/api/admin/index/build`, { method: "POST", headers, body: "{}" })
  ).json()) as { code: number; message: string };
  if (built.code !== 200) throw new Error(`index build: ${built.message}`);
  const emptied = performance.now() - started;
  for (;;) {
    const progress = (await (await fetch(`${base}/api/admin/index/progress`, { headers })).json()) as {
      data: { obj_count: number; is_done: boolean; error: string };
    };
    if (progress.data.is_done) {
      const seconds = (performance.now() - started) / 1000;
      return (
        `Index build (Virtual tree, 85 folders listed, ${progress.data.obj_count} entries): ${seconds.toFixed(1)} s, ` +
        `${(progress.data.obj_count / seconds).toFixed(0)} entries/s, of which ${(emptied / 1000).toFixed(1)} s for the build request emptying the ${SEARCH_NAMES / 1000}k names before it` +
        `${progress.data.error ? ` (error: ${progress.data.error})` : ""}.`
      );
    }
    if (performance.now() - started > 300_000) throw new Error("the index build did not finish in 5 minutes");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}
