// What the file-side tests inside workerd do as a client: sign in, call the JSON API with a token,
// mount a storage. Requests go to the Worker under test through `exports.default.fetch`.
import { exports } from "cloudflare:workers";
import { INTEGRATION_ADMIN_PASSWORD } from "./integration-constants.ts";

export type Envelope = { code: number; message: string; data: any };

/** A login token; the same password as the admin's unless told (a second account reuses its hash). */
export async function signIn(clientId: string, username = "admin", password = INTEGRATION_ADMIN_PASSWORD): Promise<string> {
  const reply = await (
    await exports.default.fetch(
      new Request("http://gatehouse.test/api/auth/login", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Client-Id": clientId },
        body: JSON.stringify({ username, password }),
      }),
    )
  ).json<Envelope>();
  return reply.data.token;
}

/** POST `body` as JSON with `token`, and read the envelope. */
export async function callApi(token: string, path: string, body?: unknown): Promise<Envelope> {
  const headers: Record<string, string> = { Authorization: token, ...(body === undefined ? {} : { "Content-Type": "application/json" }) };
  return (await exports.default.fetch(new Request(`http://gatehouse.test${path}`, { method: "POST", headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }))).json();
}

/** Mounts a storage through the admin API (its check runs, as for a person). */
export const mountStorage = (token: string, mountPath: string, driver: string, addition: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  callApi(token, "/api/admin/storage/create", { mount_path: mountPath, driver, addition: JSON.stringify(addition), ...extra });
