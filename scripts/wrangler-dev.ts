// Starts `wrangler dev` for this project: used by npm start and npm run bench.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { projectRoot, type DatabaseTarget } from "./db.ts";

export interface WranglerDevOptions {
  port: number;
  /** Folder for this instance's bindings file and wrangler's local state. */
  dataDir: string;
  database: DatabaseTarget;
  /** Files of further bindings (JWT_SECRET …), before this instance's own. */
  envFiles: string[];
  /** "pipe": the caller reads wrangler's output. */
  stdio: "inherit" | "ignore" | "pipe";
  /**
   * LOG_LEVEL for this instance; null keeps wrangler.toml's. Default "warn": wrangler prints a line
   * for every request already, so the access log adds one only for refusals and failures, with the
   * envelope code and request id that wrangler's line lacks.
   */
  logLevel?: string | null;
  /** Believe the client's CF-Connecting-IP (bench only: it picks addresses to stay clear of the lockout). Default false. */
  trustClientAddress?: boolean;
  /**
   * wrangler's `--test-scheduled` (GET /__scheduled runs the cron), on unless false. It wraps the
   * Worker in a facade that looks at every request, so the bench, measuring the Worker as deployed,
   * turns it off.
   */
  testScheduled?: boolean;
  /** A port for the DevTools inspector (npm run profile reads the Worker's CPU profile there). */
  inspectorPort?: number;
  /** Further vars over wrangler.toml's (npm start: TASK_PART_BYTES and OFFLINE_DOWNLOAD_PRIVATE_HOSTS from its environment). */
  vars?: Record<string, string>;
}

/**
 * Per-instance bindings go in a file of their own, so a database token never appears on a
 * command line and two instances with different data folders do not share a database.
 */
export function startWranglerDev(options: WranglerDevOptions): ChildProcess {
  const instanceVars = join(options.dataDir, "wrangler.vars");
  const { url, authToken } = options.database;
  // Locally nothing sets CF-Connecting-IP but the client itself: believing it would let anyone
  // pick the address the sign-in lockout counts against.
  const trust = options.trustClientAddress === true;
  const logLevel = options.logLevel === undefined ? "warn" : options.logLevel;
  const extra = Object.entries(options.vars ?? {}).map(([name, value]) => `${name}=${value}\n`);
  const vars = `TURSO_DATABASE_URL=${url}\n${authToken ? `TURSO_AUTH_TOKEN=${authToken}\n` : ""}TRUST_CF_CONNECTING_IP=${trust}\n${logLevel === null ? "" : `LOG_LEVEL=${logLevel}\n`}${extra.join("")}`;
  writeFileSync(instanceVars, vars, { mode: 0o600 });
  chmodSync(instanceVars, 0o600); // writeFileSync's mode only applies to a new file
  return spawn(
    process.execPath,
    [
      join(projectRoot, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(options.port),
      ...[...options.envFiles, instanceVars].flatMap((file) => ["--env-file", file]),
      "--persist-to",
      join(options.dataDir, "wrangler"),
      ...(options.testScheduled === false ? [] : ["--test-scheduled"]),
      // Profiles read better with the functions' own names.
      ...(options.inspectorPort === undefined
        ? []
        : ["--inspector-port", String(options.inspectorPort), "--minify=false"]),
      "--show-interactive-dev-session=false",
    ],
    // No telemetry, a placeholder request.cf instead of fetching it from Cloudflare at startup, and
    // no banner: its update check offers a wrangler other than the one package-lock.json pins.
    {
      cwd: projectRoot,
      stdio: options.stdio === "pipe" ? ["ignore", "pipe", "pipe"] : options.stdio,
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
        WRANGLER_HIDE_BANNER: "true",
      },
    },
  );
}

/** Resolves once the Worker answers /ping, or fails after `timeoutMs`. */
export async function waitForWorker(port: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await (await fetch(`http://127.0.0.1:${port}/ping`)).text()) === "pong") return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`wrangler dev did not answer on port ${port} within ${timeoutMs} ms`);
}

/** Whether `port` on 127.0.0.1 can be listened on right now (nothing else holds it). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A TCP port free on 127.0.0.1 right now, for a server about to start. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}
