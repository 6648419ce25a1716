// Gatehouse started the README way, `npm start`, on a free port and a fresh DATA_DIR (or a given
// one: a restart on the same database): for tests that need the whole thing (wrangler dev, the
// assets layer, the local database) from outside.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { unusedPort } from "./storage-servers.ts";

const projectRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface NpmStart {
  origin: string;
  adminPassword: string;
  /** Its DATA_DIR: the database and wrangler's local state. */
  dataDir: string;
  /** What npm start printed so far (for failure messages). */
  output(): string;
  /** Stops it (SIGTERM, as Ctrl-C) and removes its DATA_DIR. */
  stop(): Promise<void>;
  /** Kills it at once (SIGKILL to npm, wrangler, workerd and the local endpoint), DATA_DIR kept: a crash. Answers once they are gone. */
  kill(): Promise<void>;
}

export async function npmStart(
  adminPassword: string,
  options: {
    /** An existing DATA_DIR (a restart); a fresh one by default. */
    dataDir?: string;
    /** More of npm start's environment (TASK_PART_BYTES). */
    env?: Record<string, string>;
    timeoutMs?: number;
  } = {},
): Promise<NpmStart> {
  const { dataDir = mkdtempSync(join(tmpdir(), "gatehouse-npm-start-")), timeoutMs = 90_000 } = options;
  const port = await unusedPort();
  let output = "";
  // Its own process group, so stopping it reaches wrangler and workerd too.
  const child: ChildProcess = spawn("npm", ["start"], {
    cwd: projectRoot,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      ...options.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      ADMIN_PASSWORD: adminPassword,
      LIBSQL_PORT: "",
    },
  });
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const origin = `http://127.0.0.1:${port}`;

  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (running()) {
      process.kill(-child.pid!, "SIGTERM");
      const timer = setTimeout(() => child.exitCode === null && process.kill(-child.pid!, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const kill = async () => {
    if (running()) {
      process.kill(-child.pid!, "SIGKILL");
      await exited;
    }
    // npm goes first; wrangler, workerd and the libSQL endpoint die a moment later, and the
    // database stays locked until they have. Up to 5 s (a zombie never leaves the group).
    for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
      try {
        process.kill(-child.pid!, 0);
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      if ((await (await fetch(`${origin}/ping`)).text()) === "pong")
        return { origin, adminPassword, dataDir, output: () => output, stop, kill };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  await stop();
  throw new Error(`npm start did not answer /ping on ${origin}:\n${output}`);
}

/** An API call to a running `npm start` as `token`: GET without a body, POST with a JSON one; the envelope. */
export async function callApi(
  origin: string,
  token: string,
  path: string,
  body?: unknown,
): Promise<{ code: number; message: string; data: any }> {
  const response = await fetch(origin + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { Authorization: token, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return response.json() as Promise<{ code: number; message: string; data: any }>;
}
