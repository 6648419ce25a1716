// The bench's anchor for WebDAV listings: Debian's `rclone serve webdav` on 127.0.0.1 over a local
// folder of 10,000 files of 1 KiB (the shape of the bench's generated /wide folder on Gatehouse),
// both sent PROPFIND Depth 1 of the whole folder in interleaved rounds. The ratio of the two rates,
// each round's taken within the round, is what the machine's load moves least.
//
// The listings are read by a client that counts their bytes and decodes nothing (node:http), as a
// load generator such as wrk does: on this 2-core machine the client shares the cores with both
// servers, and Node's fetch reading 6 to 7 MB as text cost it 35 to 100 ms of CPU a listing, more
// than the Worker's own 55, which measured the client as much as the servers.
// `BENCH_DAV_CLIENT=fetch` reads them as before (fetch, then the text), for comparison.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { join } from "node:path";
import { freePort } from "./wrangler-dev.ts";

/** Sends `count` requests at the bench's concurrency; how long they took and each one's latency. */
export type Load = (
  count: number,
  request: (i: number) => Promise<unknown>,
) => Promise<{ seconds: number; latencies: number[] }>;

/** A PROPFIND Depth 1's status and the bytes of its reply, read and counted, not decoded. */
type Listing = (url: string, authorization: string) => Promise<{ status: number; bytes: number; head: string }>;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

const readRaw: Listing = (url, authorization) =>
  new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method: "PROPFIND", headers: { Authorization: authorization, Depth: "1" }, agent });
    sent.on("response", (reply) => {
      let bytes = 0;
      let head = "";
      reply.on("data", (chunk: Buffer) => {
        if (bytes === 0) head = chunk.subarray(0, 300).toString("latin1");
        bytes += chunk.length;
      });
      reply.on("end", () => resolve({ status: reply.statusCode ?? 0, bytes, head }));
      reply.on("error", reject);
    });
    sent.on("error", reject);
    sent.end();
  });

const readWithFetch: Listing = async (url, authorization) => {
  const reply = await fetch(url, { method: "PROPFIND", headers: { Authorization: authorization, Depth: "1" } });
  const text = await reply.text();
  return { status: reply.status, bytes: text.length, head: text.slice(0, 300) };
};

const USER = "bench";
const PASSWORD = "bench rclone password";
const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `rclone serve webdav` over `count` files of 1 KiB in `dir`; its folder URL, credentials and a stop. */
async function startRclone(dir: string, count: number) {
  const folder = join(dir, "rclone-wide");
  mkdirSync(folder, { recursive: true });
  const bytes = randomBytes(1024);
  const taken = new Set<string>();
  while (taken.size < count) {
    const name = Array.from(randomBytes(10), (byte) => LETTERS[byte % LETTERS.length]).join("");
    if (taken.has(name)) continue;
    taken.add(name);
    writeFileSync(join(folder, name), bytes);
  }
  const config = join(dir, "rclone.conf");
  writeFileSync(config, "");
  const port = await freePort();
  const child = spawn(
    "rclone",
    ["serve", "webdav", folder, "--addr", `127.0.0.1:${port}`, "--user", USER, "--pass", PASSWORD],
    { stdio: "ignore", env: { ...process.env, RCLONE_CONFIG: config } },
  );
  const url = `http://127.0.0.1:${port}/`;
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(url, { method: "OPTIONS" })).status < 500) break;
    } catch {
      if (attempt > 100 || child.exitCode !== null) throw new Error("rclone serve webdav did not start");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(null);
      child.once("exit", resolve);
      child.kill("SIGINT");
    });
  return { url, auth: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`, pid: child.pid!, stop };
}

/**
 * PROPFIND Depth 1 of 10,000 entries on Gatehouse (`gatehouse`, the bench's /wide request) against
 * rclone serve webdav, `rounds` interleaved rounds of `requests` each; the lines to print.
 */
export async function benchRcloneListing(options: {
  dir: string;
  load: Load;
  rounds: number;
  requests: number;
  /** Gatehouse's /wide folder over /dav, and the Basic credentials the bench signs in with. */
  gatehouse: { url: string; authorization: string };
  /** CPU milliseconds used so far by a process and its children (the bench's /proc reader). */
  cpuMs: (pid: number) => number;
  wranglerPid: number;
}): Promise<string> {
  const { load, rounds, requests } = options;
  const rclone = await startRclone(options.dir, 10_000);
  try {
    const read = process.env.BENCH_DAV_CLIENT === "fetch" ? readWithFetch : readRaw;
    // Each listing is whole: 207, and at least 10,000 entries' worth of bytes.
    const checked = async (url: string, authorization: string) => {
      const reply = await read(url, authorization);
      if (reply.status !== 207 || reply.bytes < 10_000 * 200)
        throw new Error(`PROPFIND of ${url} answered ${reply.status}, ${reply.bytes} bytes: ${reply.head}`);
    };
    const propfind = () => checked(rclone.url, rclone.auth);
    const gatehouse = () => checked(options.gatehouse.url, options.gatehouse.authorization);
    // Warm-up: rclone's first listing reads the folder from disk, later ones its directory cache.
    await propfind();
    await gatehouse();
    const ratios: number[] = [];
    const rates = { gatehouse: [] as number[], rclone: [] as number[] };
    const latencies = { gatehouse: [] as number[], rclone: [] as number[] };
    const cpu = { gatehouse: 0, rclone: 0 };
    for (let round = 0; round < rounds; round++) {
      let before = options.cpuMs(rclone.pid);
      const theirs = await load(requests, propfind);
      cpu.rclone += options.cpuMs(rclone.pid) - before;
      before = options.cpuMs(options.wranglerPid);
      const ours = await load(requests, gatehouse);
      cpu.gatehouse += options.cpuMs(options.wranglerPid) - before;
      rates.rclone.push(requests / theirs.seconds);
      rates.gatehouse.push(requests / ours.seconds);
      ratios.push(theirs.seconds / ours.seconds);
      latencies.rclone.push(...theirs.latencies);
      latencies.gatehouse.push(...ours.latencies);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const line = (name: string, key: "gatehouse" | "rclone") =>
      `  ${name.padEnd(36)} ${median(rates[key]).toFixed(1).padStart(6)} req/s  p50 ${median(latencies[key]).toFixed(0).padStart(5)} ms  CPU ${(cpu[key] / (requests * rounds)).toFixed(0).padStart(4)} ms/req`;
    return [
      `PROPFIND Depth 1 of 10,000 entries against rclone serve webdav over a local folder (${rounds} interleaved rounds of ${requests}, read by ${read === readRaw ? "node:http, bytes counted" : "fetch, as text"}):`,
      line("Gatehouse (wrangler dev, /wide)", "gatehouse"),
      line("rclone serve webdav", "rclone"),
      `  Gatehouse serves ${median(ratios).toFixed(2)}× rclone's rate (median of the rounds' ratios; target: 3×)`,
    ].join("\n");
  } finally {
    await rclone.stop();
  }
}
