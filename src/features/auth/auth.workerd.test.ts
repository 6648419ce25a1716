// Authentication in workerd over Hrana/HTTP, with the round trips each step costs counted at the
// database endpoint: the guard one, sign-in two (one read, one write).
import { exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { INTEGRATION_ADMIN_PASSWORD } from "../../../test/support/integration-constants.ts";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";

type Envelope = { code: number; message: string; data: any };
const call = async (path: string, init: RequestInit = {}): Promise<Envelope> =>
  (await exports.default.fetch(new Request(`http://gatehouse.test${path}`, init))).json();
const signIn = (password: string, headers: Record<string, string> = {}) =>
  call("/api/auth/login", {
    method: "POST",
    headers: { "Content-Type": "application/json;charset=UTF-8", ...headers },
    body: JSON.stringify({ username: "admin", password }),
  });

beforeEach(async () => {
  await sql("DELETE FROM login_failures");
});

describe("sign-in and the guard in workerd", () => {
  it("signs in with two round trips and authenticates a request with one", async () => {
    const signInTrips = await roundTrips();
    const login = await signIn(INTEGRATION_ADMIN_PASSWORD, { "Client-Id": "workerd" });
    expect(login.code).toBe(200);
    expect(await signInTrips.count()).toBe(2);

    const guardTrips = await roundTrips();
    const me = await call("/api/me", { headers: { Authorization: login.data.token } });
    expect(me.data).toMatchObject({ username: "admin", role_names: ["admin"] });
    expect(await guardTrips.count()).toBe(1);
  });

  it("records a failed sign-in with one round trip (counted with the read) and refuses a locked-out address with one", async () => {
    const failTrips = await roundTrips();
    expect((await signIn("wrong", { "CF-Connecting-IP": "198.51.100.50" })).code).toBe(400);
    expect(await failTrips.count()).toBe(1);
    for (let i = 0; i < 4; i++) await signIn("wrong", { "CF-Connecting-IP": "198.51.100.50" });
    const lockedTrips = await roundTrips();
    expect((await signIn(INTEGRATION_ADMIN_PASSWORD, { "CF-Connecting-IP": "198.51.100.50" })).code).toBe(429);
    expect(await lockedTrips.count()).toBe(1);
  });

  it("rejects a token on the request after logout", async () => {
    const { data } = await signIn(INTEGRATION_ADMIN_PASSWORD, { "Client-Id": "to-log-out" });
    expect((await call("/api/auth/logout", { headers: { Authorization: data.token } })).code).toBe(200);
    expect(await call("/api/me", { headers: { Authorization: data.token } })).toEqual({
      code: 401,
      message: "session inactive",
      data: null,
    });
    expect(await sql("SELECT status FROM device_sessions WHERE device_key = ?", [data.device_key])).toEqual([[1]]);
  });

  it("accepts the permanent token as the admin", async () => {
    const [[token]] = (await sql("SELECT value FROM settings WHERE key = 'token'")) as [[string]];
    expect((await call("/api/me", { headers: { Authorization: token } })).data.username).toBe("admin");
  });
});
