// Fixture for the fast layer: the real app through app.request(), on a migrated and seeded
// libSQL file of its own (Node client), so tests see exactly the rows a fresh install has.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { createApp } from "../../src/app.ts";
import type { Database } from "../../src/db/client.ts";
import { hashStaticHash, staticHash } from "../../src/auth/password.ts";
import { roles, users } from "../../src/db/schema.ts";
import type { Env } from "../../src/env.ts";
import { migrateAndSeed, openNodeDatabase } from "../../scripts/db.ts";
import { KEYS_PAGE_ASSET, OPENAPI_ASSET, webUiDir } from "../../scripts/webui.ts";

export const TEST_ADMIN_PASSWORD = "correct horse battery staple";

/**
 * An execution context for app.request() (c.executionCtx throws without one): waitUntil work is
 * collected in `pending` for the test to await. It has only the members the app calls, hence the cast.
 */
export function backgroundContext(): { ctx: ExecutionContext; pending: Promise<unknown>[] } {
  const pending: Promise<unknown>[] = [];
  const ctx = {
    waitUntil: (work: Promise<unknown>) => void pending.push(work),
    passThroughOnException() {},
    props: {},
  };
  return { ctx: ctx as unknown as ExecutionContext, pending };
}

/**
 * The assets binding of an API-only deploy (GATEHOUSE_WEB_UI=off): the OpenAPI document and the
 * access keys page `npm ci` published into webui/, and a 404 for everything else, so the web UI's
 * page stays out of these tests.
 */
// A Fetcher with only `fetch`, the one member the app calls.
const apiOnlyAssets = {
  fetch: async (request: Request) => {
    const asset = new URL(request.url).pathname.slice(1);
    return asset === OPENAPI_ASSET || asset === KEYS_PAGE_ASSET
      ? new Response(readFileSync(join(webUiDir, asset)))
      : new Response(null, { status: 404 });
  },
} as unknown as Fetcher;

export const testEnv: Env = {
  ASSETS: apiOnlyAssets,
  JWT_SECRET: "unit-test-secret-unit-test-secret-0123456789",
  TOKEN_EXPIRES_IN_HOURS: "48",
  MAX_BODY_BYTES: "1048576",
  // As in production (wrangler.toml): tests pick their address with CF-Connecting-IP.
  TRUST_CF_CONNECTING_IP: "true",
};

export interface UnitFixture {
  db: Database;
  app: ReturnType<typeof createApp>;
  /** app.request() with the test bindings, overridable per call. */
  request(path: string, init?: RequestInit, env?: Partial<Env>): Promise<Response>;
  close(): void;
}

export async function createUnitFixture(seedOptions: { defaultStorage?: boolean } = {}): Promise<UnitFixture> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-unit-"));
  const target = { url: `file:${join(dir, "gatehouse.db")}` };
  await migrateAndSeed(target, { adminPassword: TEST_ADMIN_PASSWORD, ...seedOptions });
  const { db, close } = openNodeDatabase(target);
  const app = createApp({ database: () => db });
  return {
    db,
    app,
    request: async (path, init, env) => app.request(path, init, { ...testEnv, ...env }),
    close: () => {
      close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Inserts a role with these permission scopes; its id. */
export async function insertRole(
  fixture: UnitFixture,
  name: string,
  permissionScopes: { path: string; permission: number }[],
): Promise<number> {
  const [role] = await fixture.db.insert(roles).values({ name, permissionScopes }).returning({ id: roles.id });
  return role!.id;
}

/** Inserts a user whose password is `password`, stored as the API stores it; its id. */
export async function insertUser(
  fixture: UnitFixture,
  username: string,
  password: string,
  fields: Partial<typeof users.$inferInsert> = {},
): Promise<number> {
  const [user] = await fixture.db
    .insert(users)
    .values({ username, passwordHash: await hashStaticHash(await staticHash(password)), roleIds: [], ...fields })
    .returning({ id: users.id });
  return user!.id;
}

/** What every JSON route answers; `data` is each route's own. */
export type Envelope = { code: number; message: string; data: any };

export async function readEnvelope(response: Response): Promise<Envelope> {
  return (await response.json()) as Envelope;
}

/** The JSON API as a suite calls it (see api). */
export interface Api {
  /** A request as a client makes it: a JSON body when one is given (none, and no Content-Type, when undefined). */
  send(method: string, path: string, body?: unknown, token?: string): Promise<Envelope>;
  post(path: string, body?: unknown, token?: string): Promise<Envelope>;
  get(path: string, token?: string): Promise<Envelope>;
  /** Signs in and insists it worked: the token and device key. */
  signIn(
    username: string,
    password: string,
    headers?: Record<string, string>,
  ): Promise<{ token: string; device_key: string }>;
}

/**
 * The JSON API on the fixture `fixture()` answers (suites open theirs in beforeAll), as `token()`
 * unless a call names another token; "" sends no Authorization:
 * `const { post, get } = api(() => fixture, () => admin);`. `env` overrides the test bindings.
 */
export function api(fixture: () => UnitFixture, token: () => string = () => "", env: Partial<Env> = {}): Api {
  const request = async (method: string, path: string, body: unknown, as: string, headers = {}) =>
    readEnvelope(
      await fixture().request(
        path,
        {
          method,
          headers: {
            ...headers,
            ...(as ? { Authorization: as } : {}),
            ...(body === undefined ? {} : { "Content-Type": "application/json;charset=UTF-8" }),
          },
          ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
        },
        env,
      ),
    );
  const send: Api["send"] = (method, path, body, as = token()) => request(method, path, body, as);
  return {
    send,
    post: (path, body, as) => send("POST", path, body, as),
    get: (path, as) => send("GET", path, undefined, as),
    signIn: async (username, password, headers = {}) => {
      const reply = await request("POST", "/api/auth/login", { username, password }, "", headers);
      expect(reply.code, `sign-in of ${username}: ${reply.message}`).toBe(200);
      return reply.data;
    },
  };
}
