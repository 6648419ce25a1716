// npm run bench: the Worker under wrangler dev against the local libSQL endpoint, on a fresh
// database. For each endpoint it sends a fixed number of requests at a fixed concurrency and
// prints requests per second, p50 and p99 latency, and database round trips per request
// (Hrana pipelines counted at the endpoint). Local latency is not Turso latency: the round-trip
// column is the figure that carries over, each round trip to Turso costing tens of milliseconds.
//
// The web UI rows show the rendered index against /ping, and the front end's files: the "worker
// runs/req" column counts replies carrying X-Request-Id, so files the assets layer serves read 0.
//
// Two bare Hono workers (scripts/bench-baseline) run beside it under the same wrangler, each
// answering /ping: "vs bare" is each endpoint's rate as a share of the one deployed as Gatehouse is
// (the same [assets] routing in front: wrangler dev passes every non-asset request through its
// assets router first, which by itself costs 15-20% of a bare /ping), so it measures the Worker's
// own code; "vs plain" is the share of a bare worker without [assets]. Both measured in the same run.
// The floor row, "bare Hono GET /ping-db (one round trip)", is the bare worker making one database
// round trip (SELECT 1) and nothing else, as every API request makes one: what the round trip
// alone costs (its wrangler CPU column is the bare worker's).
// The Worker runs at its production log level (wrangler.toml's LOG_LEVEL).
//
// On a machine of a few cores every process competes for them, so the rates follow the CPU each
// request costs in all: "wrangler CPU" is what wrangler dev's processes (workerd running the
// Worker, and its proxy) use per request, the bare worker's printed beside it; "bench CPU" is this
// process's own, the load generator and the local libSQL endpoint (which Turso is in production).
// With Chromium installed (see scripts/browser.ts) it also counts the requests and bytes of a
// first load of the sign-in page.
//
//   BENCH_REQUESTS (default 200, per round), BENCH_ROUNDS (default 5) and BENCH_CONCURRENCY
//   (default 8) change the load; each endpoint's figures are medians of its rounds; BENCH_ONLY (a
//   regular expression) runs the endpoints whose names match it, and skips the streaming runs;
//   BENCH_ONLY=startup measures the Worker's startup alone (scripts/bench-startup.ts).
//   BENCH_WRANGLER_LOG=<file> keeps wrangler dev's output (the Worker's own log among it) there.
//   BENCH_TASK_PHASES=1 runs the Worker at LOG_LEVEL=debug, and the copy-pace rows then print each
//   task's phases from its units' debug lines (src/features/tasks/runner.ts). Off by default: at
//   debug every request also writes its log line, which the request rows should not pay for.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipelineUrl } from "../src/db/hrana.ts";
import { benchCopyPace, unitPhases } from "./bench-copy-pace.ts";
import { benchRcloneListing } from "./bench-dav.ts";
import { SEARCH_NAMES, benchBuild, insertSearchNames, percentile, timeSearchQueries } from "./bench-search.ts";
import { treeCpuMs } from "./bench-cpu.ts";
import { keepReplay, replayOf } from "./bench-replay.ts";
import { benchStartup } from "./bench-startup.ts";
import { s3RoundTrip, streamBigFile } from "./bench-streams.ts";
import { benchChunkedUploads, benchS3Transfers, benchTasks } from "./bench-transfers.ts";
import { inspectWorker } from "./inspector.ts";
import { chromiumAvailable, launchChromium, measureLoad, sameOriginContext } from "./browser.ts";
import { FLOOR_ROW, printTargets, targetsOf } from "./bench-targets.ts";
import { insertStorages, migrateAndSeed, projectRoot } from "./db.ts";
import { startLibsqlServer } from "./libsql-server/server.ts";
import { freePort, startWranglerDev, waitForWorker } from "./wrangler-dev.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS || 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const ADMIN_PASSWORD = "bench admin password";
const STORAGES = 10_000;
/** Names in the search index the search rows query. */

interface Scenario {
  name: string;
  /** Sign-in hashes a password on purpose (PBKDF2, 100,000 rounds): fewer requests keep the run short. */
  requests?: number;
  /** `origin` is Gatehouse's unless said: a replayed row's replay sends the same request to the bare worker. */
  request(i: number, origin?: string): Promise<Response>;
  /** A request-path row: a replay of it runs beside it (scripts/bench-replay.ts). */
  replay?: true;
  /** The envelope code every reply must carry. */
  expect?: number;
  /** The HTTP status every reply must have (200 unless said). */
  status?: number;
  /** The wrangler dev whose CPU the row counts: Gatehouse's unless said. */
  server?: () => ChildProcess;
}

const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
// First, before the servers below load the machine.
if (!ONLY || ONLY.test("startup")) console.log(`${benchStartup(projectRoot)}\n`);
if (ONLY?.source === "startup") process.exit(0);

const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-"));
const endpoint = await startLibsqlServer({ path: join(dir, "gatehouse.db"), port: 0 });
const database = { url: endpoint.url, authToken: endpoint.authToken };
await migrateAndSeed(database, { adminPassword: ADMIN_PASSWORD });
// The search index's names, written before the Worker starts: this process serves the database,
// and writing 200,000 rows holds it for a minute. Only when a search row runs.
const searching = !ONLY || ONLY.test("search");
const searchWords = searching ? await insertSearchNames(database, SEARCH_NAMES) : [];
const searchQueries = searching ? await timeSearchQueries(database, searchWords) : null;
const secrets = join(dir, "secrets.vars");
writeFileSync(
  secrets,
  `JWT_SECRET=${randomBytes(48).toString("base64url")}\nOTP_ENCRYPTION_KEY=${randomBytes(48).toString("base64url")}\n`,
  { mode: 0o600 },
);
const port = await freePort();
// The inspector reads the isolate's memory during the transfers (scripts/inspector.ts).
const inspectorPort = await freePort();
// Asked for: the Worker's debug lines say where each copy task's seconds went.
const taskPhases = process.env.BENCH_TASK_PHASES === "1";
const wrangler = startWranglerDev({
  port,
  dataDir: dir,
  database,
  envFiles: [secrets],
  stdio: process.env.BENCH_WRANGLER_LOG || taskPhases ? "pipe" : "ignore",
  trustClientAddress: true,
  logLevel: taskPhases ? "debug" : null,
  testScheduled: false,
  inspectorPort,
  // The transfers download from test/support's server on 127.0.0.1 (docs/configuration.md).
  vars: { OFFLINE_DOWNLOAD_PRIVATE_HOSTS: "127.0.0.1" },
});
if (process.env.BENCH_WRANGLER_LOG) {
  const log = createWriteStream(process.env.BENCH_WRANGLER_LOG);
  wrangler.stdout?.pipe(log);
  wrangler.stderr?.pipe(log);
}
const phases = taskPhases && wrangler.stdout ? unitPhases(wrangler.stdout) : null;
// Read, or wrangler stalls on a full pipe.
if (taskPhases && !process.env.BENCH_WRANGLER_LOG) wrangler.stderr?.resume();
const baselines: ChildProcess[] = [];

/** A bare Hono worker under wrangler dev (scripts/bench-baseline/<config>); its URL once it answers. */
async function startBaseline(config: string): Promise<string> {
  // One at a time, once the Worker is up: wrangler dev sessions starting together race for ports.
  const baselinePort = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(projectRoot, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "--config",
      join(projectRoot, "scripts/bench-baseline", config),
      "--ip",
      "127.0.0.1",
      "--port",
      String(baselinePort),
      "--persist-to",
      join(dir, `baseline-${config}`),
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: projectRoot,
      stdio: "ignore",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    },
  );
  baselines.push(child);
  await waitForWorker(baselinePort);
  return `http://127.0.0.1:${baselinePort}`;
}

try {
  await waitForWorker(port);
  // Started once the Worker is up: two wrangler dev sessions starting together race for their ports.
  const bareUrl = await startBaseline("wrangler.toml");
  const plainUrl = await startBaseline("wrangler.plain.toml");
  const base = `http://127.0.0.1:${port}`;
  const bare: Scenario = { name: "bare Hono GET /ping", request: () => fetch(`${bareUrl}/ping`), expect: undefined };
  const plain: Scenario = {
    name: "bare Hono GET /ping, no [assets]",
    request: () => fetch(`${plainUrl}/ping`),
    expect: undefined,
  };
  const json = (path: string, body: unknown, headers: Record<string, string> = {}, origin = base) =>
    fetch(origin + path, {
      method: "POST",
      headers: { "Content-Type": "application/json;charset=UTF-8", ...headers },
      body: JSON.stringify(body),
    });
  const login = (await (
    await json("/api/auth/login", { username: "admin", password: ADMIN_PASSWORD }, { "Client-Id": "bench" })
  ).json()) as { data: { token: string } };
  const token = login.data.token;
  // The sign-in rows sign in as a user of their own: hundreds of sign-ins would otherwise evict
  // the session above (a user keeps at most 100).
  const signer = await json(
    "/api/admin/user/create",
    { username: "bench-signer", password: ADMIN_PASSWORD },
    { Authorization: token },
  );
  if (((await signer.json()) as { code: number }).code !== 200) throw new Error("could not create the sign-in user");

  await insertStorages(database, STORAGES);
  const index = await (await fetch(`${base}/`)).text();
  const script = /"src":"(\/assets\/index-[\w-]+\.js)"/.exec(index)?.[1];
  const stylesheet = /\/assets\/index-[\w-]+\.css/.exec(index)?.[0];
  if (!script || !stylesheet)
    throw new Error(`GET / is not the web UI's index (is webui/ unpacked? npm run webui):\n${index.slice(0, 300)}`);

  // One folder of 10,000 files for the WebDAV listing (Virtual, generated: no upstream time in it).
  const wide = await json(
    "/api/admin/storage/create",
    {
      mount_path: "/wide",
      driver: "Virtual",
      addition: JSON.stringify({ num_file: 10_000, num_folder: 0, min_file_size: 1024, max_file_size: 1024 }),
    },
    { Authorization: token },
  );
  if (((await wide.json()) as { code: number }).code !== 200) throw new Error("could not mount /wide");
  const davAuth = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString("base64")}`;

  const listed = (await (await json("/api/fs/list", { path: "/bench/0" }, { Authorization: token })).json()) as {
    data: { content: { name: string; sign: string; is_dir: boolean }[] };
  };
  const firstFile = listed.data.content.find((entry) => !entry.is_dir)!;

  const scenarios: Scenario[] = [
    { name: "GET /ping", request: () => fetch(`${base}/ping`), expect: undefined },
    {
      // The floor of every API row: the bare worker with one database round trip and nothing else.
      name: FLOOR_ROW,
      server: () => baselines[0]!,
      request: () =>
        fetch(`${bareUrl}/ping-db?to=${encodeURIComponent(pipelineUrl(endpoint.url))}`, {
          headers: { Authorization: `Bearer ${endpoint.authToken}` },
        }),
      expect: undefined,
    },
    { name: "GET / (web UI index, rendered)", request: () => fetch(`${base}/`), expect: undefined },
    { name: "GET /@manage/storages (deep link)", request: () => fetch(`${base}/@manage/storages`), expect: undefined },
    { name: "GET /assets/index-….js (asset, 440 KiB)", request: () => fetch(base + script), expect: undefined },
    { name: "GET /assets/index-….css (asset)", request: () => fetch(base + stylesheet), expect: undefined },
    { name: "GET /api/public/settings", request: () => fetch(`${base}/api/public/settings`) },
    {
      name: "GET /api/me (JWT)",
      replay: true,
      request: (_, origin = base) => fetch(`${origin}/api/me`, { headers: { Authorization: token } }),
    },
    {
      name: "POST /api/auth/login",
      requests: Math.min(REQUESTS, 60),
      // An address per request too: more than 5 sign-ins at once from one address are refused
      // while the first 5 are being checked (the lockout counts each attempt before its check).
      request: (i) =>
        json(
          "/api/auth/login",
          { username: "bench-signer", password: ADMIN_PASSWORD },
          { "Client-Id": `bench-${i}`, "CF-Connecting-IP": `10.2.${i >> 8}.${i & 255}` },
        ),
    },
    {
      name: "POST /api/auth/login (wrong password)",
      requests: Math.min(REQUESTS, 60),
      // A fresh address per request, so the lockout never kicks in and each one is a real check.
      request: (i) =>
        json(
          "/api/auth/login",
          { username: "bench-signer", password: "wrong" },
          { "CF-Connecting-IP": `10.1.${i >> 8}.${i & 255}` },
        ),
      expect: 400,
    },
    {
      name: "POST /api/fs/list (Virtual, 60 entries)",
      replay: true,
      request: (i, origin) =>
        json("/api/fs/list", { path: `/bench/${i % STORAGES}` }, { Authorization: token }, origin),
    },
    {
      name: "POST /api/fs/get (a file)",
      replay: true,
      request: (_, origin) =>
        json("/api/fs/get", { path: `/bench/0/${firstFile.name}` }, { Authorization: token }, origin),
    },
    {
      name: "GET /p (a file, Range 1 KiB)",
      request: () =>
        fetch(`${base}/p/bench/0/${firstFile.name}?sign=${firstFile.sign}`, { headers: { Range: "bytes=0-1023" } }),
      expect: undefined,
      status: 206,
    },
    {
      name: "PROPFIND /dav Depth 1 (60 entries)",
      replay: true,
      request: (i, origin = base) =>
        fetch(`${origin}/dav/bench/${i % STORAGES}/`, {
          method: "PROPFIND",
          headers: { Authorization: davAuth, Depth: "1" },
        }),
      expect: undefined,
      status: 207,
    },
    {
      name: "PROPFIND /dav Depth 1 (10,000 entries)",
      requests: Math.min(REQUESTS, 40),
      request: () =>
        fetch(`${base}/dav/wide/`, { method: "PROPFIND", headers: { Authorization: davAuth, Depth: "1" } }),
      expect: undefined,
      status: 207,
    },
    {
      name: "GET /dav (a file, Range 1 KiB)",
      request: () =>
        fetch(`${base}/dav/bench/0/${encodeURIComponent(firstFile.name)}`, {
          headers: { Authorization: davAuth, Range: "bytes=0-1023" },
        }),
      expect: undefined,
      status: 206,
    },
    {
      name: `POST /api/fs/search (${SEARCH_NAMES / 1000}k names, a word)`,
      request: (i) =>
        json(
          "/api/fs/search",
          { parent: "/", keywords: searchWords[i % searchWords.length] },
          { Authorization: token },
        ),
    },
    {
      name: `POST /api/fs/search (${SEARCH_NAMES / 1000}k, two words)`,
      request: (i) =>
        json(
          "/api/fs/search",
          {
            parent: "/",
            keywords: `${searchWords[i % searchWords.length]} ${searchWords[(i * 7 + 3) % searchWords.length]!.slice(0, 4)}`,
          },
          { Authorization: token },
        ),
    },
    {
      name: `POST /api/fs/search (${SEARCH_NAMES / 1000}k, 2 characters)`,
      request: (i) =>
        json(
          "/api/fs/search",
          { parent: "/", keywords: searchWords[i % searchWords.length]!.slice(1, 3) },
          { Authorization: token },
        ),
    },
    {
      name: "GET /api/admin/user/list",
      replay: true,
      request: (_, origin = base) => fetch(`${origin}/api/admin/user/list`, { headers: { Authorization: token } }),
    },
    {
      name: "GET /api/me/sessions",
      request: () => fetch(`${base}/api/me/sessions`, { headers: { Authorization: token } }),
    },
    {
      name: `GET /api/admin/storage/list (${STORAGES / 1000}k, 50/page)`,
      replay: true,
      // A different page each time, across all of them.
      request: (i, origin = base) =>
        fetch(`${origin}/api/admin/storage/list?page=${(i % (STORAGES / 50)) + 1}&per_page=50`, {
          headers: { Authorization: token },
        }),
    },
  ];

  /** Each request-path row, and its replay right after it: the bare worker doing the row's recorded work. */
  async function withReplays(selected: Scenario[]): Promise<Scenario[]> {
    const rows: Scenario[] = [];
    for (const scenario of selected) {
      rows.push(scenario);
      if (!scenario.replay) continue;
      const key = String(rows.length);
      await keepReplay(endpoint, bareUrl, key, () => scenario.request(0));
      rows.push({
        ...scenario,
        name: replayOf(scenario.name),
        replay: undefined,
        server: () => baselines[0]!,
        request: (i) => scenario.request(i, `${bareUrl}/replays/${key}`),
      });
    }
    return rows;
  }

  const rows = await withReplays(scenarios.filter((s) => !ONLY || ONLY.test(s.name)));
  const nameWidth = Math.max(40, ...rows.map((row) => row.name.length));
  console.log(
    `Gatehouse bench: ${CONCURRENCY} concurrent, wrangler dev on 127.0.0.1:${port}, libSQL endpoint ${endpoint.url}\n`,
  );
  console.log(
    [
      "endpoint".padEnd(nameWidth),
      "requests",
      "req/s".padStart(8),
      "vs bare".padStart(8),
      "vs plain".padStart(8),
      "p50 ms".padStart(8),
      "p99 ms".padStart(8),
      "round trips/req".padStart(16),
      "worker runs/req".padStart(16),
      "wrangler CPU".padStart(12),
      "bench CPU".padStart(12),
    ].join("  "),
  );
  const shares = new Map<string, number>();
  const bareRates: number[] = [];
  /** wrangler CPU per request of the bare worker, each round. */
  const bareCpuMs: number[] = [];
  const plainRates: number[] = [];
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const bareRate = () => median(bareRates);
  const measured: {
    scenario: Scenario;
    count: number;
    rate: number;
    vsBare: number;
    vsPlain: number;
    latencies: number[];
    trips: number;
    runs: number;
    workerCpu: number;
    benchCpu: number;
  }[] = [];
  for (const scenario of rows) {
    const count = scenario.requests ?? REQUESTS;
    // Unmeasured warm-up: the first requests after startup pay for compiling the Worker's code.
    await run(Math.min(10, count), { ...scenario, request: (i) => scenario.request(count + i) });
    // Interleaved rounds (bare, plain, the endpoint), each endpoint's rate taken as a share of the
    // baselines' in the same round: on a shared machine rates drift within seconds; ratios less.
    const rounds: { rate: number; vsBare: number; vsPlain: number }[] = [];
    const latencies: number[] = [];
    let workerRuns = 0;
    let workerCpuMs = 0;
    let benchCpuMs = 0;
    // The baselines read no database: every pipeline the endpoint counts is the Worker's.
    endpoint.resetStats();
    for (let round = 0; round < ROUNDS; round++) {
      const bareCpuBefore = treeCpuMs(baselines[0]!.pid!);
      const bareRound = REQUESTS / (await run(REQUESTS, bare)).seconds;
      bareCpuMs.push((treeCpuMs(baselines[0]!.pid!) - bareCpuBefore) / REQUESTS);
      const plainRound = REQUESTS / (await run(REQUESTS, plain)).seconds;
      bareRates.push(bareRound);
      plainRates.push(plainRound);
      const server = (scenario.server?.() ?? wrangler).pid!;
      const cpuBefore = [treeCpuMs(server), process.cpuUsage()] as const;
      const result = await run(count, { ...scenario, request: (i) => scenario.request((round + 2) * count + i) });
      workerCpuMs += treeCpuMs(server) - cpuBefore[0];
      const own = process.cpuUsage(cpuBefore[1]);
      benchCpuMs += (own.user + own.system) / 1000;
      latencies.push(...result.latencies);
      workerRuns += result.workerRuns;
      const rate = count / result.seconds;
      rounds.push({ rate, vsBare: rate / bareRound, vsPlain: rate / plainRound });
    }
    const trips = endpoint.stats().pipelines / (count * ROUNDS);
    measured.push({
      scenario,
      count: count * ROUNDS,
      rate: median(rounds.map((r) => r.rate)),
      vsBare: median(rounds.map((r) => r.vsBare)),
      vsPlain: median(rounds.map((r) => r.vsPlain)),
      latencies,
      trips,
      runs: workerRuns / (count * ROUNDS),
      workerCpu: workerCpuMs / (count * ROUNDS),
      benchCpu: benchCpuMs / (count * ROUNDS),
    });
  }
  for (const { scenario, count, rate, vsBare, vsPlain, latencies, trips, runs, workerCpu, benchCpu } of measured) {
    // Shares of the bare worker, each from its own rounds: rates alone drift between endpoints' runs.
    shares.set(scenario.name, vsBare);
    latencies.sort((a, b) => a - b);
    console.log(
      [
        scenario.name.padEnd(nameWidth),
        String(count).padStart(8),
        rate.toFixed(0).padStart(8),
        `${(vsBare * 100).toFixed(0)}%`.padStart(8),
        `${(vsPlain * 100).toFixed(0)}%`.padStart(8),
        percentile(latencies, 0.5).toFixed(1).padStart(8),
        percentile(latencies, 0.99).toFixed(1).padStart(8),
        trips.toFixed(2).padStart(16),
        runs.toFixed(2).padStart(16),
        workerCpu.toFixed(2).padStart(12),
        benchCpu.toFixed(2).padStart(12),
      ].join("  "),
    );
  }
  if (bareRates.length > 0) {
    console.log(
      `${bare.name.padEnd(nameWidth)}  ${String(REQUESTS).padStart(8)}  ${bareRate().toFixed(0).padStart(8)}      100%  (same [assets] routing as Gatehouse; median of ${bareRates.length} runs, interleaved; wrangler CPU ${median(bareCpuMs).toFixed(2)} ms/req)`,
    );
    console.log(
      `${plain.name.padEnd(nameWidth)}  ${String(REQUESTS).padStart(8)}  ${median(plainRates).toFixed(0).padStart(8)}  ${`${((median(plainRates) / bareRate()) * 100).toFixed(0)}%`.padStart(8)}      100%  (median of ${plainRates.length} runs)`,
    );
  }
  // BENCH_ONLY=PROPFIND runs it with the PROPFIND rows.
  if (!ONLY || ONLY.test("PROPFIND /dav Depth 1 (10,000 entries) against rclone serve webdav"))
    console.log(
      `\n${await benchRcloneListing({
        dir,
        load: timed,
        rounds: ROUNDS,
        requests: Math.min(REQUESTS, 40),
        gatehouse: { url: `${base}/dav/wide/`, authorization: davAuth },
        cpuMs: treeCpuMs,
        wranglerPid: wrangler.pid!,
      })}`,
    );
  if (searchQueries) console.log(`\n${searchQueries}`);
  const targets = printTargets(shares, targetsOf(SEARCH_NAMES, STORAGES));
  if (targets) console.log(`\n${targets}`);
  // Last, as it empties the index the search rows read.
  if (!ONLY || ONLY.test("search")) console.log(`\n${await benchBuild(base, token, database)}`);
  if (!ONLY) {
    await streamBigFile(base, token, database);
    await s3RoundTrip(base, token);
    const ratio = shares.get("GET / (web UI index, rendered)")! / shares.get("GET /ping")!;
    console.log(
      `\nGET / serves ${(ratio * 100).toFixed(0)}% of the requests per second of /ping (target: at least 80%).`,
    );
  }

  // The same bytes through /s3 beside /d and fs/put (BENCH_ONLY=s3-transfers alone).
  if (!ONLY || ONLY.test("s3-transfers")) console.log(`\n${(await benchS3Transfers(base, token)).join("\n")}`);

  // The transfers (BENCH_ONLY=multipart, BENCH_ONLY=tasks alone), last: they load the machine.
  if (!ONLY || ONLY.test("multipart upload") || ONLY.test("tasks") || ONLY.test("copy pace")) {
    const inspector = await inspectWorker(inspectorPort);
    try {
      if (!ONLY || ONLY.test("multipart upload"))
        console.log(`\n${(await benchChunkedUploads(base, token, inspector, bareUrl)).join("\n")}`);
      if (!ONLY || ONLY.test("tasks")) console.log(`\n${(await benchTasks(base, token, inspector)).join("\n")}`);
      if (!ONLY || ONLY.test("copy pace")) console.log(`\n${(await benchCopyPace(base, token, phases)).join("\n")}`);
    } finally {
      inspector.close();
    }
  }
  if (ONLY) {
    // The streaming runs and the first load are skipped for a subset.
  } else if (chromiumAvailable()) {
    const browser = await launchChromium();
    try {
      const { context, blocked } = await sameOriginContext(browser, base);
      const load = await measureLoad(context, base, "/", 'input[name="username"]');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const fromWorker = load.byPath.filter((entry) => !/^\/(assets|static|images|streamer)\//.test(entry.path));
      console.log(
        `First load of the sign-in page (cold cache): ${load.requests} requests, ${(load.bytes / 1024).toFixed(0)} KiB ` +
          `(headers and encoded bodies); ${fromWorker.length} of them reach the Worker (${fromWorker.map((entry) => entry.path).join(", ")}); ` +
          `other hosts asked for: ${blocked.length === 0 ? "none" : blocked.join(", ")}.`,
      );
    } finally {
      await browser.close();
    }
  } else {
    console.log("\nNo Chromium (apt-get install chromium, or CHROMIUM_PATH): first-load figures skipped.");
  }
} finally {
  wrangler.kill("SIGINT");
  for (const child of baselines) child.kill("SIGINT");
  await Promise.all(
    [wrangler, ...baselines].map(
      (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve))),
    ),
  );
  await endpoint.close();
  rmSync(dir, { recursive: true, force: true });
}

async function run(
  count: number,
  scenario: Scenario,
): Promise<{ latencies: number[]; seconds: number; workerRuns: number }> {
  let workerRuns = 0;
  const { latencies, seconds } = await timed(count, async (i) => {
    const response = await scenario.request(i);
    const text = await response.text();
    if (response.headers.has("x-request-id")) workerRuns++;
    const code = text.startsWith("{") ? (JSON.parse(text) as { code: number }).code : undefined;
    if (response.status !== (scenario.status ?? 200) || code !== ("expect" in scenario ? scenario.expect : 200)) {
      throw new Error(`${scenario.name}: unexpected reply ${response.status} ${text.slice(0, 200)}`);
    }
  });
  return { latencies, seconds, workerRuns };
}

/** Sends `count` requests, `CONCURRENCY` at a time; how long they took and each one's latency. */
async function timed(count: number, request: (i: number) => Promise<unknown>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await request(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}
