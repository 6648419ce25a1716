// npm run profile: a CPU profile of the Worker in workerd (through wrangler dev's inspector) while
// it answers one kind of request, summed by function and by module: where a request's time goes.
//
//   npm run profile -- /api/me            GET with the admin's token
//   npm run profile -- /api/auth/login    a sign-in (POST)
//   npm run profile -- /dav/wide/         PROPFIND Depth 1 as the admin (Basic) of a Virtual folder
//                                         of PROFILE_WIDE (default 10,000) files mounted at /wide
//   PROFILE_BODY='{"path":"/profile/0"}' npm run profile -- /api/fs/list
//                                         a POST of that JSON with the admin's token
//                                         (storages are mounted at /profile/<n>, Virtual)
//   PROFILE_REQUESTS (default 2000; 200 for sign-ins and listings), PROFILE_STORAGES (default 50)
//   mounted first; PROFILE_BODY is the PROPFIND's body for a /dav path; PROFILE_JSON=<file> keeps
//   the profile itself (Chrome DevTools' Performance panel opens it: callers, call trees), and
//   PROFILE_KEEP=<file> the bundle it was taken of.
import { execSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storages } from "../src/db/schema.ts";
import { inspectWorker } from "./inspector.ts";
import { migrateAndSeed, openNodeDatabase, projectRoot } from "./db.ts";
import { startLibsqlServer } from "./libsql-server/server.ts";
import { freePort, startWranglerDev, waitForWorker } from "./wrangler-dev.ts";

const path = process.argv[2] ?? "/api/me";
const signIn = path === "/api/auth/login";
const listing = path.startsWith("/dav/");
const REQUESTS = Number(process.env.PROFILE_REQUESTS || (signIn || listing ? 200 : 2000));
const WIDE = Number(process.env.PROFILE_WIDE || 10_000);
const STORAGES = Number(process.env.PROFILE_STORAGES || 50);
const CONCURRENCY = 8;
const PASSWORD = "profile admin password";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const dir = mkdtempSync(join(tmpdir(), "gatehouse-profile-"));
const endpoint = await startLibsqlServer({ path: join(dir, "gatehouse.db"), port: 0 });
const database = { url: endpoint.url, authToken: endpoint.authToken };
await migrateAndSeed(database, { adminPassword: PASSWORD });
const { db, close } = openNodeDatabase(database);
const now = Date.now();
for (let i = 0; i < STORAGES; i += 500) {
  await db.insert(storages).values(
    Array.from({ length: Math.min(500, STORAGES - i) }, (_, j) => ({
      mountPath: `/profile/${i + j}`,
      driver: "Virtual",
      status: "work",
      addition: "{}",
      modifiedAtMs: now,
    })),
  );
}
await db.insert(storages).values({
  mountPath: "/wide",
  driver: "Virtual",
  status: "work",
  addition: JSON.stringify({ num_file: WIDE, num_folder: 0, min_file_size: 1024, max_file_size: 1024 }),
  modifiedAtMs: now,
});
close();
const secrets = join(dir, "secrets.vars");
writeFileSync(
  secrets,
  `JWT_SECRET=${randomBytes(48).toString("base64url")}\nOTP_ENCRYPTION_KEY=${randomBytes(48).toString("base64url")}\n`,
  { mode: 0o600 },
);
const [port, inspectorPort] = [await freePort(), await freePort()];
const wrangler = startWranglerDev({
  port,
  dataDir: dir,
  database,
  envFiles: [secrets],
  stdio: "ignore",
  trustClientAddress: true,
  logLevel: null,
  testScheduled: false,
  inspectorPort,
});
try {
  await waitForWorker(port);
  const base = `http://127.0.0.1:${port}`;
  const login = (i: number) =>
    fetch(`${base}/api/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "CF-Connecting-IP": `10.3.${i >> 8}.${i & 255}` },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
  const token = ((await (await login(0)).json()) as { data: { token: string } }).data.token;
  const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString("base64")}`;
  const body = process.env.PROFILE_BODY;
  const request = signIn
    ? login
    : listing
      ? () =>
          fetch(base + path, {
            method: "PROPFIND",
            headers: { Authorization: basic, Depth: "1" },
            body,
          })
      : body
        ? () =>
            fetch(base + path, {
              method: "POST",
              headers: { Authorization: token, "Content-Type": "application/json;charset=UTF-8" },
              body,
            })
        : () => fetch(base + path, { headers: { Authorization: token } });
  await load(200, request); // warm: compiled code, kept keys
  const inspector = await inspectWorker(inspectorPort);
  await inspector("Profiler.enable");
  await inspector("Profiler.setSamplingInterval", { interval: 100 });
  await inspector("Profiler.start");
  const started = performance.now();
  await load(REQUESTS, request);
  const seconds = (performance.now() - started) / 1000;
  const { profile } = (await inspector("Profiler.stop")) as { profile: Profile };
  report(profile, REQUESTS, seconds);
  if (process.env.PROFILE_JSON) writeFileSync(process.env.PROFILE_JSON, JSON.stringify(profile));
  if (process.env.PROFILE_KEEP)
    execSync(`cp "$(ls -td .wrangler/tmp/dev-*/ | head -1)index.js" ${process.env.PROFILE_KEEP}`, { cwd: projectRoot });
} finally {
  wrangler.kill("SIGINT");
  await new Promise((resolve) => (wrangler.exitCode !== null ? resolve(null) : wrangler.once("exit", resolve)));
  await endpoint.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

function report(profile: Profile, requests: number, seconds: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, micros] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    total += micros;
    if (functionName === "(idle)") idle += micros;
    const module =
      url === ""
        ? `(${functionName || "native"})`
        : url
            .replace(/^.*node_modules\//, "")
            .replace(/^(@[^/]+\/[^/]+|[^/]+)\/.*$/, "$1")
            .replace(/^.*\/\.wrangler\/.*$/, "worker bundle");
    const place = `${functionName || "(anonymous)"} ${url.replace(/^.*\//, "")}:${lineNumber + 1}`;
    byFunction.set(place, (byFunction.get(place) ?? 0) + micros);
    byModule.set(module, (byModule.get(module) ?? 0) + micros);
  }
  const busy = total - idle;
  console.log(
    `${requests} requests of ${path} in ${seconds.toFixed(1)} s (${(requests / seconds).toFixed(0)}/s); isolate busy ${(busy / 1000 / requests).toFixed(3)} ms per request\n`,
  );
  const top = (map: Map<string, number>, count: number) =>
    [...map]
      .filter(([name]) => name !== "(idle)" && !name.startsWith("(idle)"))
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(
        ([name, micros]) =>
          `${((micros / busy) * 100).toFixed(1).padStart(5)}%  ${(micros / requests).toFixed(0).padStart(6)} µs/req  ${name}`,
      )
      .join("\n");
  console.log(`by module:\n${top(byModule, 15)}\n\nby function (self time):\n${top(byFunction, 30)}`);
}

async function load(count: number, request: (i: number) => Promise<Response>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const response = await request(i + 1);
        if (response.status !== (listing ? 207 : 200)) throw new Error(`${path}: ${response.status}`);
        await response.arrayBuffer();
      }
    }),
  );
}
