// Device sessions in workerd, with round trips counted at the database endpoint: the guard is one,
// each endpoint's own work one more. (SSH keys: src/features/sshkeys/sshkeys.workerd.test.ts.)
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { INTEGRATION_ADMIN_PASSWORD } from "../../../test/support/integration-constants.ts";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";

type Envelope = { code: number; message: string; data: any };
const call = async (path: string, init: RequestInit = {}): Promise<Envelope> =>
  (await exports.default.fetch(new Request(`http://gatehouse.test${path}`, init))).json();
const post = (path: string, token: string, body?: unknown) =>
  call(path, {
    method: "POST",
    headers: { Authorization: token, ...(body === undefined ? {} : { "Content-Type": "application/json;charset=UTF-8" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

let laptop: { token: string; device_key: string };
let phone: { token: string; device_key: string };
beforeAll(async () => {
  await sql("DELETE FROM login_failures");
  const signIn = async (device: string) =>
    (
      await call("/api/auth/login", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Client-Id": device },
        body: JSON.stringify({ username: "admin", password: INTEGRATION_ADMIN_PASSWORD }),
      })
    ).data;
  laptop = await signIn("sessions-laptop");
  phone = await signIn("sessions-phone");
});

describe("device sessions in workerd", () => {
  it("lists the caller's sessions in one round trip (the list travels in the guard's batch)", async () => {
    const trips = await roundTrips();
    const listed = await call("/api/me/sessions", { headers: { Authorization: phone.token } });
    expect(listed.data.map((s: { session_id: string }) => s.session_id)).toEqual(expect.arrayContaining([laptop.device_key, phone.device_key]));
    expect(await trips.count()).toBe(1);
  });

  it("evicts in two round trips, and the evicted token is refused at once", async () => {
    const trips = await roundTrips();
    expect(await post("/api/me/sessions/evict", phone.token, { session_id: laptop.device_key })).toEqual({ code: 200, message: "success", data: null });
    expect(await trips.count()).toBe(2);
    expect((await call("/api/me", { headers: { Authorization: laptop.token } })).message).toBe("session inactive");
  });
});
