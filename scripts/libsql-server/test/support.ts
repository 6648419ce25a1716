// Helpers for the tests of the local libSQL endpoint: a server on a temporary file, and raw
// Hrana requests for what @libsql/client does not expose.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { type LibsqlServer, type LibsqlServerOptions, startLibsqlServer } from "../server.ts";

export interface TestServer {
  server: LibsqlServer;
  /** The SQLite file. */
  path: string;
  /** Closes the server and deletes the temporary directory. */
  stop(): Promise<void>;
}

/** The bearer token of test servers unless a test picks its own; `post()` sends it by default. */
const TEST_AUTH_TOKEN = "libsql-test-token";
export const authorized = { authorization: `Bearer ${TEST_AUTH_TOKEN}` };

export async function startTestServer(options: Omit<LibsqlServerOptions, "path"> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-libsql-"));
  const path = join(dir, "test.db");
  const server = await startLibsqlServer({ path, port: 0, authToken: TEST_AUTH_TOKEN, ...options });
  return {
    server,
    path,
    stop: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface HttpReply {
  status: number;
  contentType: string | null;
  /** Protocol JSON, asserted field by field in the tests. */
  body: any;
}

/** POSTs `body` (JSON-encoded unless already a string) with TEST_AUTH_TOKEN, and parses a JSON reply. */
export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpReply> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...authorized, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const contentType = response.headers.get("content-type");
  return { status: response.status, contentType, body: contentType === "application/json" ? JSON.parse(text) : text };
}

/** Sends one pipeline to `/v2/pipeline` and expects HTTP 200. */
export async function pipeline(server: LibsqlServer, baton: string | null, requests: unknown[]) {
  const reply = await post(`${server.url}/v2/pipeline`, { baton, requests });
  if (reply.status !== 200) throw new Error(`pipeline failed with ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body as { baton: string | null; base_url: string | null; results: any[] };
}

/** An `execute` stream request. */
export function execute(sql: string, extra: Record<string, unknown> = {}) {
  return { type: "execute", stmt: { sql, ...extra } };
}

export const int = (value: bigint | number) => ({ type: "integer", value: String(value) });
export const text = (value: string) => ({ type: "text", value });
