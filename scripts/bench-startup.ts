// The Worker's startup, for npm run bench (BENCH_ONLY=startup alone): the work a cold isolate does
// before its first request, which wrangler dev hides (it loads the script before it reports ready).
//
// Method: both Workers are bundled as they deploy (`wrangler deploy --dry-run`, minified), then a
// fresh Node process per sample imports the bundle and reports how long the import took: parsing,
// compiling and running the top level (routes and schemas built), with no code cache. Gatehouse and
// the bare Hono worker (scripts/bench-baseline) alternate, RUNS samples each, and the medians are
// printed: on a shared machine only the two side by side mean much. Node runs V8 as workerd does;
// the absolute figures are Node's, not Cloudflare's.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const RUNS = 9;

/** Times one import of `file` in a new Node process, in milliseconds. */
function importMs(file: string): number {
  const script = "const t = performance.now(); await import(process.argv[1]); console.log(performance.now() - t);";
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script, file], { encoding: "utf8" });
  const ms = Number(child.stdout.trim().split("\n").at(-1));
  if (child.status !== 0 || !Number.isFinite(ms)) throw new Error(`importing ${file} failed:\n${child.stderr}`);
  return ms;
}

/** The deployed bundle of the Worker that `config` describes, written under `outdir`. */
function bundle(projectRoot: string, config: string, outdir: string): string {
  const built = spawnSync(
    process.execPath,
    [
      join(projectRoot, "node_modules/wrangler/bin/wrangler.js"),
      "deploy",
      "--dry-run",
      "--minify",
      "--config",
      config,
      "--outdir",
      outdir,
    ],
    { cwd: projectRoot, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  if (built.status !== 0) throw new Error(`bundling ${config} failed:\n${built.stderr}`);
  // Named after the entry point (index.js, worker.js).
  const script = readdirSync(outdir).find((name) => name.endsWith(".js"));
  if (!script) throw new Error(`bundling ${config} wrote no script`);
  return join(outdir, script);
}

export function benchStartup(projectRoot: string): string {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-startup-"));
  try {
    const gatehouse = bundle(projectRoot, join(projectRoot, "wrangler.toml"), join(dir, "gatehouse"));
    const bare = bundle(
      projectRoot,
      join(projectRoot, "scripts/bench-baseline/wrangler.plain.toml"),
      join(dir, "bare"),
    );
    const samples = { gatehouse: [] as number[], bare: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      samples.gatehouse.push(importMs(gatehouse));
      samples.bare.push(importMs(bare));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const kib = (file: string) => (gzipSync(readFileSync(file), { level: 9 }).length / 1024).toFixed(1);
    return [
      `Startup (module load in a fresh Node process, median of ${RUNS}, interleaved):`,
      `  Gatehouse ${median(samples.gatehouse).toFixed(1)} ms (bundle ${kib(gatehouse)} KiB gzip -9)`,
      `  bare Hono ${median(samples.bare).toFixed(1)} ms (bundle ${kib(bare)} KiB gzip -9)`,
    ].join("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
