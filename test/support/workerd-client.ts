// What the tests inside workerd do as a client: sign in, call the JSON API with a token, count a
// request's database round trips, mount a storage. Requests go to the Worker under test through
// `exports.default.fetch`.
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { INTEGRATION_ADMIN_PASSWORD } from "./integration-constants.ts";
import { roundTrips } from "./libsql-http.ts";

export type Envelope = { code: number; message: string; data: any };

/** The envelope the Worker answers `path` with. */
export async function call(path: string, init: RequestInit = {}): Promise<Envelope> {
  return (await exports.default.fetch(new Request(`http://gatehouse.test${path}`, init))).json();
}

/** A sign-in's data (token, device key); the same password as the admin's unless told (a second account reuses its hash). */
export async function signInAs(
  clientId: string,
  username = "admin",
  password = INTEGRATION_ADMIN_PASSWORD,
): Promise<{ token: string; device_key: string }> {
  const reply = await call("/api/auth/login", {
    method: "POST",
    headers: { "Content-Type": "application/json", "Client-Id": clientId },
    body: JSON.stringify({ username, password }),
  });
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
