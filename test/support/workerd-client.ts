// What the tests inside workerd do as a client: sign in, call the JSON API with a token, count a
// request's database round trips, mount a storage, make a user with one role (signed in or not),
// send a body cut short, read what workerd printed. Requests go to the Worker under test through `exports.default.fetch`.
import { exports } from "cloudflare:workers";
import { expect, inject } from "vitest";
import { INTEGRATION_ADMIN_PASSWORD } from "./integration-constants.ts";
import { roundTrips, sql } from "./libsql-http.ts";

export type Envelope = { code: number; message: string; data: any };

/** The Worker's response to `path`, whatever it is (a page, bytes, a redirect). */
export function fetchPath(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(`http://gatehouse.test${path}`, init));
}

/** The envelope the Worker answers `path` with. */
export async function call(path: string, init: RequestInit = {}): Promise<Envelope> {
  return (await fetchPath(path, init)).json();
}

/**
 * A sign-in attempt's envelope, whatever it answers (signInAs insists on success); the admin's
 * password unless told, and a TOTP code when one is given.
 */
export function tryLogin(
  headers: Record<string, string> = {},
  password = INTEGRATION_ADMIN_PASSWORD,
  username = "admin",
  otpCode?: string,
): Promise<Envelope> {
  return call("/api/auth/login", {
    method: "POST",
    headers: { "Content-Type": "application/json;charset=UTF-8", ...headers },
    body: JSON.stringify({ username, password, ...(otpCode ? { otp_code: otpCode } : {}) }),
  });
}

/** A sign-in's data (token, device key); the same password as the admin's unless told (a second account reuses its hash). */
export async function signInAs(
  clientId: string,
  username = "admin",
  password = INTEGRATION_ADMIN_PASSWORD,
): Promise<{ token: string; device_key: string }> {
  const reply = await tryLogin({ "Client-Id": clientId }, password, username);
  expect(reply.code, `sign-in of ${username}: ${reply.message}`).toBe(200);
  return reply.data;
}

/** A login token (see signInAs). */
export async function signIn(
  clientId: string,
  username = "admin",
  password = INTEGRATION_ADMIN_PASSWORD,
): Promise<string> {
  return (await signInAs(clientId, username, password)).token;
}

/** Runs `request` and checks how many round trips it made to the database. */
export async function inTrips<T>(expected: number, request: () => Promise<T>): Promise<T> {
  const trips = await roundTrips();
  const result = await request();
  expect(await trips.count()).toBe(expected);
  return result;
}

/** POST `body` as JSON with `token`, and read the envelope. */
export async function callApi(token: string, path: string, body?: unknown): Promise<Envelope> {
  const headers: Record<string, string> = {
    Authorization: token,
    ...(body === undefined ? {} : { "Content-Type": "application/json" }),
  };
  return (
    await exports.default.fetch(
      new Request(`http://gatehouse.test${path}`, {
        method: "POST",
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    )
  ).json();
}

/** POST `body` (none when undefined) as JSON with `token` as Authorization; the envelope (callApi, path first). */
export function post(path: string, body: unknown, token: string): Promise<Envelope> {
  return callApi(token, path, body);
}

/**
 * `post(path, body?, token?)` as `token()` (the suite's admin, signed in in beforeAll) unless a call
 * names another token: `const { post } = apiAs(() => admin);`.
 */
export function apiAs(token: () => string): { post: (path: string, body?: unknown, as?: string) => Promise<Envelope> } {
  return { post: (path, body, as = token()) => callApi(as, path, body) };
}

/** Mounts a storage through the admin API (its check runs, as for a person). */
export const mountStorage = (
  token: string,
  mountPath: string,
  driver: string,
  addition: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) =>
  callApi(token, "/api/admin/storage/create", {
    mount_path: mountPath,
    driver,
    addition: JSON.stringify(addition),
    ...extra,
  });

/** A user with one role holding `scopes` (path → permission bits); its id. */
export async function makeUser(
  admin: string,
  username: string,
  scopes: Record<string, number>,
  extra: Record<string, unknown> = {},
): Promise<number> {
  const role = await callApi(admin, "/api/admin/role/create", {
    name: `${username}-role`,
    permission_scopes: Object.entries(scopes).map(([path, permission]) => ({ path, permission })),
  });
  expect(role.code, role.message).toBe(200);
  const user = await callApi(admin, "/api/admin/user/create", {
    username,
    password: `${username} password`,
    role: [role.data.id],
    ...extra,
  });
  expect(user.code, user.message).toBe(200);
  return Number((await sql("SELECT id FROM users WHERE username = ?", [username]))[0]![0]);
}

/** A user made by makeUser, signed in as the client `clientId` (its name unless told); its token. */
export async function member(
  admin: string,
  username: string,
  scopes: Record<string, number>,
  extra: Record<string, unknown> = {},
  clientId = username,
): Promise<string> {
  await makeUser(admin, username, scopes, extra);
  return signIn(clientId, username, `${username} password`);
}

/**
 * An upload body that declares itself 200,000 bytes long: 100,000 bytes (enough for webdav-server to
 * start the file), then it fails (`error`) or just ends (`close`).
 */
export function cutBody(how: "error" | "close"): ReadableStream<Uint8Array> {
  let pulls = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulls++ === 0) controller.enqueue(new Uint8Array(100_000).fill(48));
      else if (how === "error") controller.error(new Error(CUT_BODY_ERROR));
      else controller.close();
    },
  });
}
const CUT_BODY_ERROR = "the client went away";
/**
 * What miniflare's R2 logs as uncaught when a put's body is cut: its R2 is a Worker of its own
 * that reads the body it is sent (the R2 binding takes no signal to abort it, D12.8).
 */
export const R2_SIMULATOR_CUT_READ = "Can't read from request stream because client disconnected";

/**
 * What workerd printed from line `from` on (test/support/runtime-log.ts): `next` is the line after
 * the last, `uncaught` the lines that report an uncaught exception. A cutBody that fails is left
 * out: it fails in the test's own isolate, where workerd logs its error whatever the Worker does
 * (a real client that goes away fails the request's body from outside JavaScript).
 */
export async function runtimeLog(from = 0): Promise<{ next: number; uncaught: string[] }> {
  const log: { next: number; lines: string[] } = await (
    await fetch(`${inject("storageServers").runtimeLogUrl}/?from=${from}`)
  ).json();
  return {
    next: log.next,
    uncaught: log.lines.filter((line) => /uncaught/i.test(line) && !line.includes(CUT_BODY_ERROR)),
  };
}
