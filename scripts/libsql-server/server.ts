// Local libSQL endpoint: Hrana over HTTP (protocol versions 2 and 3, JSON encoding) on a SQLite
// file, through the `libsql` npm package.
//
// DEVELOPMENT TOOLING ONLY. It serves `wrangler dev` and the test suites because sqld cannot be
// installed everywhere; production uses Turso (or sqld). It implements what @libsql/client and
// drizzle-orm use (execute, batch with conditions, interactive transactions over batons,
// sequences, stored SQL, describe, cursors) and counts round trips for tests and benchmarks
// (GET /__stats, POST /__stats/reset) and the statements that read a table whole (GET /__scans).
// It does not implement WebSockets or the Protobuf encoding.
//
// It runs any SQL for whoever gets in, so every request needs the bearer token (random unless one
// is given), a Host naming this loopback address and port (DNS rebinding) and no Origin header
// (browsers send one; libSQL clients do not), so neither other local users nor a web page open in
// the developer's browser can read the database.

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

import {
  Connection,
  ConnectionPool,
  ScanWatch,
  type TableScan,
  openDatabaseFile,
  preparePrivateDatabaseFile,
} from "./database.ts";
import { ProtocolError, decodeCursorBody, decodePipelineBody } from "./hrana.ts";
import { type Counters, runCursor, runPipeline } from "./pipeline.ts";
import { BatonError, StreamRegistry } from "./streams.ts";

export interface LibsqlServer {
  /** Base URL for @libsql/client, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  /** The bearer token every request needs (clients: `authToken`). */
  authToken: string;
  /** Pipeline (and cursor) HTTP requests, and SQL statements, since start or the last reset. */
  stats(): { pipelines: number; statements: number };
  resetStats(): void;
  /**
   * The statements run since start or the last reset whose plans read a table whole, with how many
   * times each ran. Tests hold the request path to its indexes with it: on Turso, a read that
   * grows with the deployment is latency and billed rows.
   */
  scans(): TableScan[];
  /**
   * Keeps the body of every pipeline that arrives from now on; the function it returns stops and
   * hands them over. The bench records the one pipeline of a request to replay it (bench-replay.ts).
   */
  record(): () => unknown[];
  /** Stops the HTTP server (dropping keep-alive sockets) and closes every database connection. */
  close(): Promise<void>;
}

export interface LibsqlServerOptions {
  /** SQLite file; it and its directory are created if missing, private to this user. */
  path: string;
  /** 0 picks a free port. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Requests need `Authorization: Bearer <authToken>`. Default: a random token (see `LibsqlServer.authToken`). */
  authToken?: string;
  log?: (line: string) => void;
  /** A stream without requests for this long is closed, rolling back its transaction. Default 10 s. */
  streamIdleTimeoutMs?: number;
}

export async function startLibsqlServer(options: LibsqlServerOptions): Promise<LibsqlServer> {
  const { path, port = 0, host = "127.0.0.1", log = () => {}, streamIdleTimeoutMs = 10_000 } = options;
  const authToken = options.authToken || randomBytes(32).toString("base64url");
  const expectedAuthorization = digest(`Bearer ${authToken}`);
  let allowedHosts = new Set<string>();

  preparePrivateDatabaseFile(path);
  const anchor = openDatabaseFile(path);
  // A stream holding a lock without requests expires within the idle timeout of anyone starting
  // to wait for it, so a writer queued behind a transaction that a client abandoned gets the lock
  // instead of failing first.
  const busyTimeoutMs = streamIdleTimeoutMs + 1_000;
  const scans = new ScanWatch(path);
  const registry = new StreamRegistry(
    new ConnectionPool(() => new Connection(path, busyTimeoutMs, scans)),
    streamIdleTimeoutMs,
    log,
  );
  const counters: Counters = { pipelines: 0, statements: 0 };
  let recorded: unknown[] | null = null;

  function resetStats(): void {
    counters.pipelines = 0;
    counters.statements = 0;
    scans.clear();
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { pathname } = new URL(req.url ?? "/", "http://localhost");
    const endpoint = `${req.method} ${pathname}`;
    if (!allowedHosts.has((req.headers.host ?? "").toLowerCase())) {
      return sendError(
        res,
        403,
        "FORBIDDEN_HOST",
        "The Host header must name this endpoint's loopback address and port",
      );
    }
    if (req.headers.origin !== undefined) {
      return sendError(res, 403, "FORBIDDEN_ORIGIN", "Requests from web pages (with an Origin header) are refused");
    }
    switch (endpoint) {
      case "GET /health":
        return sendText(res, 200, "ok\n");
      // Version probes. `GET /v3-protobuf` gets a 404, so clients fall back to JSON.
      case "GET /v2":
      case "GET /v3":
        return sendText(res, 200, "Hrana over HTTP (JSON), local libSQL endpoint for development\n");
    }

    if (!timingSafeEqual(digest(req.headers.authorization ?? ""), expectedAuthorization)) {
      return sendError(res, 401, "UNAUTHORIZED", "Missing or wrong `Authorization: Bearer <token>` header");
    }
    switch (endpoint) {
      case "POST /v2/pipeline":
      case "POST /v3/pipeline": {
        counters.pipelines++;
        const json = await readJson(req);
        recorded?.push(json);
        return sendJson(res, 200, await runPipeline(registry, decodePipelineBody(json), counters));
      }
      case "POST /v3/cursor": {
        counters.pipelines++;
        const body = decodeCursorBody(await readJson(req));
        const { baton, entries } = await runCursor(registry, body, counters);
        // One JSON value per line: the CursorRespBody, then the entries.
        const lines = [{ baton, base_url: null }, ...entries].map((item) => `${JSON.stringify(item)}\n`);
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        res.end(lines.join(""));
        return;
      }
      case "GET /__stats":
        return sendJson(res, 200, { ...counters });
      case "GET /__scans":
        return sendJson(res, 200, scans.list());
      case "POST /__stats/reset":
        resetStats();
        return sendJson(res, 200, { ...counters });
      default:
        return sendError(res, 404, "NOT_FOUND", `No endpoint ${endpoint}`);
    }
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (error instanceof ProtocolError || error instanceof BatonError) {
        sendError(res, 400, error.code, error.message);
      } else {
        log(`libSQL endpoint: internal error on ${req.method} ${req.url}: ${(error as Error)?.stack ?? error}`);
        sendError(res, 500, "INTERNAL_ERROR", error instanceof Error ? error.message : String(error));
      }
    });
  });

  try {
    await new Promise<void>((resolveListen, rejectListen) => {
      server.once("error", rejectListen);
      server.listen(port, host, () => {
        server.off("error", rejectListen);
        resolveListen();
      });
    });
  } catch (error) {
    scans.close();
    anchor.close();
    throw error;
  }

  const actualPort = (server.address() as AddressInfo).port;
  const hostNames = new Set(["127.0.0.1", "localhost", "[::1]", host.includes(":") ? `[${host}]` : host]);
  allowedHosts = new Set(
    [...hostNames].flatMap((name) => [`${name}:${actualPort}`, ...(actualPort === 80 ? [name] : [])]),
  );
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${actualPort}`,
    port: actualPort,
    authToken,
    stats: () => ({ ...counters }),
    resetStats,
    scans: () => scans.list(),
    record: () => {
      const bodies: unknown[] = [];
      recorded = bodies;
      return () => {
        if (recorded === bodies) recorded = null;
        return bodies;
      };
    },
    close: () => {
      closing ??= new Promise<void>((resolveClose) => {
        server.close(() => {
          registry.closeAll();
          scans.close();
          anchor.close();
          resolveClose();
        });
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Fixed-length digests, so that comparing them takes the same time whatever the input. */
function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  // Events rather than `for await`: the stream's async iterator is set up for every request.
  const chunks = await new Promise<Buffer[]>((resolveBody, rejectBody) => {
    const received: Buffer[] = [];
    let ended = false;
    req.on("data", (chunk: Buffer) => received.push(chunk));
    req.once("end", () => {
      ended = true;
      resolveBody(received);
    });
    req.once("error", rejectBody);
    // Closed before its end: the client went away mid-body (what `for await` threw for).
    req.once("close", () => ended || rejectBody(new Error("The request body ended early")));
  });
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (error) {
    throw new ProtocolError(`Invalid request: the body is not valid JSON (${(error as Error).message})`);
  }
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(text);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * `message` and `code` form the Hrana `Error` structure, which @libsql/client turns into a
 * LibsqlError with that code (it reads the body only with exactly this content type); `error`
 * repeats the message for people reading the response with curl.
 */
function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { error: message, message, code });
}
