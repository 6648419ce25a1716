// The offline-download services the settings tests talk to, on 127.0.0.1: a real aria2c with its
// JSON-RPC interface, a real qbittorrent-nox with a Web UI password we choose, a real
// transmission-daemon with an RPC username and password we choose, and a server that
// accepts connections but never answers. Each process lives at most LIFETIME_SECONDS (coreutils
// `timeout`) even if the test run dies, and is stopped in teardown.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { pbkdf2Sync, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { freePort } from "../../scripts/wrangler-dev.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LIFETIME_SECONDS = 300;
const READY_TIMEOUT_MS = 20_000;

export interface RunningService {
  /** Where a client reaches it (for qBittorrent: with the Web UI credentials in the URL). */
  url: string;
  stop(): Promise<void>;
}

// freePort: a port nothing listens on right now (also what "connection refused" tests point at).
export { freePort };

/** `aria2c --enable-rpc` with a secret; Debian package `aria2`. */
export async function startAria2(secret: string): Promise<RunningService> {
  requireProgram("aria2c", "aria2");
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-aria2-"));
  const port = await freePort();
  const child = spawnBounded("aria2c", [
    "--enable-rpc",
    `--rpc-listen-port=${port}`,
    `--rpc-secret=${secret}`,
    "--rpc-listen-all=false",
    "--disable-ipv6=true",
    "--no-conf",
    "--quiet=true",
    `--dir=${dir}`,
    `--stop-with-process=${process.pid}`,
  ]);
  const url = `http://127.0.0.1:${port}/jsonrpc`;
  await untilAnswering(child, url, {
    method: "POST",
    body: JSON.stringify({ jsonrpc: "2.0", id: "ready", method: "system.listMethods" }),
  });
  return { url, stop: () => stopAndRemove(child, dir) };
}

/**
 * qbittorrent-nox 4.5 with a profile of its own: the legal notice accepted, the Web UI on
 * 127.0.0.1 with `username`/`password` (stored as qBittorrent does: PBKDF2-HMAC-SHA512, 100,000
 * iterations, 16-byte salt), authentication required from localhost too unless `openToLocalhost`,
 * BitTorrent bound to the loopback interface with DHT, LSD, PeX and port forwarding off.
 */
export async function startQbittorrent(
  credentials: { username: string; password: string },
  options: { openToLocalhost?: boolean } = {},
): Promise<RunningService> {
  requireProgram("qbittorrent-nox", "qbittorrent-nox");
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-qbittorrent-"));
  const [webUiPort, torrentingPort] = [await freePort(), await freePort()];
  const salt = randomBytes(16);
  const hash = pbkdf2Sync(credentials.password, salt, 100_000, 64, "sha512");
  mkdirSync(join(dir, "qBittorrent", "config"), { recursive: true });
  writeFileSync(
    join(dir, "qBittorrent", "config", "qBittorrent.conf"),
    [
      "[LegalNotice]",
      "Accepted=true",
      "",
      "[BitTorrent]",
      "Session\\DHTEnabled=false",
      "Session\\LSDEnabled=false",
      "Session\\PeXEnabled=false",
      "Session\\Interface=lo",
      "Session\\InterfaceName=lo",
      "Session\\InterfaceAddress=127.0.0.1",
      "",
      "[Network]",
      "PortForwardingEnabled=false",
      "",
      "[Preferences]",
      "Connection\\ResolvePeerCountries=false",
      "WebUI\\Address=127.0.0.1",
      `WebUI\\Username=${credentials.username}`,
      `WebUI\\Password_PBKDF2="@ByteArray(${salt.toString("base64")}:${hash.toString("base64")})"`,
      `WebUI\\LocalHostAuth=${options.openToLocalhost ? "false" : "true"}`,
      "WebUI\\MaxAuthenticationFailCount=1000",
      "",
    ].join("\n"),
  );
  const child = spawnBounded("qbittorrent-nox", [
    `--profile=${dir}`,
    `--webui-port=${webUiPort}`,
    `--torrenting-port=${torrentingPort}`,
  ]);
  const base = `http://127.0.0.1:${webUiPort}/`;
  await untilAnswering(child, `${base}api/v2/app/version`, { method: "POST" });
  const userinfo = `${encodeURIComponent(credentials.username)}:${encodeURIComponent(credentials.password)}`;
  return { url: `http://${userinfo}@127.0.0.1:${webUiPort}/`, stop: () => stopAndRemove(child, dir) };
}

export interface RunningTransmission extends RunningService {
  /** Where the daemon stores downloads (a torrent whose data is already there verifies as complete). */
  downloadDir: string;
}

/**
 * transmission-daemon 3.00 in the foreground with a config directory of its own: RPC on 127.0.0.1
 * with `username`/`password` (HTTP Basic), peers on the loopback only, DHT, LPD, uTP and port
 * mapping off. `url` is the RPC URI with the credentials in it, as set_transmission takes it.
 */
export async function startTransmission(credentials: {
  username: string;
  password: string;
}): Promise<RunningTransmission> {
  requireProgram("transmission-daemon", "transmission-daemon");
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-transmission-"));
  const downloadDir = join(dir, "downloads");
  mkdirSync(downloadDir);
  const [rpcPort, peerPort] = [await freePort(), await freePort()];
  const child = spawnBounded("transmission-daemon", [
    "--foreground",
    `--config-dir=${join(dir, "config")}`,
    `--port=${rpcPort}`,
    "--rpc-bind-address=127.0.0.1",
    "--allowed=127.0.0.1",
    "--auth",
    `--username=${credentials.username}`,
    `--password=${credentials.password}`,
    `--peerport=${peerPort}`,
    "--bind-address-ipv4=127.0.0.1",
    "--no-dht",
    "--no-lpd",
    "--no-utp",
    "--no-portmap",
    `--download-dir=${downloadDir}`,
    "--log-error",
  ]);
  const endpoint = `127.0.0.1:${rpcPort}/transmission/rpc`;
  await untilAnswering(child, `http://${endpoint}`, { method: "POST" });
  const userinfo = `${encodeURIComponent(credentials.username)}:${encodeURIComponent(credentials.password)}`;
  return { url: `http://${userinfo}@${endpoint}`, downloadDir, stop: () => stopAndRemove(child, dir) };
}

/** Accepts connections and never answers: what a hung service looks like. */
export async function startSilentServer(): Promise<RunningService> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function requireProgram(program: string, debianPackage: string) {
  if (spawnSync("sh", ["-c", `command -v ${program}`]).status !== 0) {
    throw new Error(`${program} is not installed: apt-get install -y ${debianPackage} (.ci/run does this)`);
  }
}

function spawnBounded(program: string, args: string[]): ChildProcess {
  const child = spawn("timeout", ["--kill-after=5", String(LIFETIME_SECONDS), program, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  child.on("exit", (code) => {
    if (code !== 0 && code !== null && code !== 124) console.error(`${program} exited with ${code}: ${stderr}`);
  });
  return child;
}

/** Polls until the service answers HTTP at all (any status), or fails if it exits or takes too long. */
async function untilAnswering(child: ChildProcess, url: string, init: RequestInit) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${child.spawnargs.join(" ")} exited with ${child.exitCode} before answering`);
    try {
      await (await fetch(url, { ...init, signal: AbortSignal.timeout(1000) })).arrayBuffer();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill("SIGKILL");
  throw new Error(`${url} did not answer within ${READY_TIMEOUT_MS} ms`);
}

async function stopAndRemove(child: ChildProcess, dir: string) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
