// Authentication in workerd over Hrana/HTTP, with the round trips each step costs counted at the
// database endpoint: the guard one, sign-in two (one read, one write).
import { beforeEach, describe, expect, it } from "vitest";
import { INTEGRATION_ADMIN_PASSWORD } from "../../../test/support/integration-constants.ts";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { call, tryLogin } from "../../../test/support/workerd-client.ts";

beforeEach(async () => {
  await sql("DELETE FROM login_failures");
});

describe("sign-in and the guard in workerd", () => {
  it("signs in with two round trips and authenticates a request with one", async () => {
    const signInTrips = await roundTrips();
    const login = await tryLogin({ "Client-Id": "workerd" }, INTEGRATION_ADMIN_PASSWORD);
    expect(login.code).toBe(200);
    expect(await signInTrips.count()).toBe(2);

    const guardTrips = await roundTrips();
    const me = await call("/api/me", { headers: { Authorization: login.data.token } });
    expect(me.data).toMatchObject({ username: "admin", role_names: ["admin"] });
    expect(await guardTrips.count()).toBe(1);
  });

  it("records a failed sign-in with one round trip (counted with the read) and refuses a locked-out address with one", async () => {
    const failTrips = await roundTrips();
    expect((await tryLogin({ "CF-Connecting-IP": "198.51.100.50" }, "wrong")).code).toBe(400);
    expect(await failTrips.count()).toBe(1);
    for (let i = 0; i < 4; i++) await tryLogin({ "CF-Connecting-IP": "198.51.100.50" }, "wrong");
    const lockedTrips = await roundTrips();
    expect((await tryLogin({ "CF-Connecting-IP": "198.51.100.50" }, INTEGRATION_ADMIN_PASSWORD)).code).toBe(429);
    expect(await lockedTrips.count()).toBe(1);
  });

  it("rejects a token on the request after logout", async () => {
    const { data } = await tryLogin({ "Client-Id": "to-log-out" }, INTEGRATION_ADMIN_PASSWORD);
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
