// Device sessions in workerd, with round trips counted at the database endpoint: the guard is one,
// each endpoint's own work one more. (SSH keys: src/features/sshkeys/sshkeys.workerd.test.ts.)
import { beforeAll, describe, expect, it } from "vitest";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { call, post, signInAs } from "../../../test/support/workerd-client.ts";

let laptop: { token: string; device_key: string };
let phone: { token: string; device_key: string };
beforeAll(async () => {
  await sql("DELETE FROM login_failures");
  laptop = await signInAs("sessions-laptop");
  phone = await signInAs("sessions-phone");
});

describe("device sessions in workerd", () => {
  it("lists the caller's sessions in one round trip (the list travels in the guard's batch)", async () => {
    const trips = await roundTrips();
    const listed = await call("/api/me/sessions", { headers: { Authorization: phone.token } });
    expect(listed.data.map((s: { session_id: string }) => s.session_id)).toEqual(
      expect.arrayContaining([laptop.device_key, phone.device_key]),
    );
    expect(await trips.count()).toBe(1);
  });

  it("evicts in two round trips, and the evicted token is refused at once", async () => {
    const trips = await roundTrips();
    expect(await post("/api/me/sessions/evict", { session_id: laptop.device_key }, phone.token)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await trips.count()).toBe(2);
    expect((await call("/api/me", { headers: { Authorization: laptop.token } })).message).toBe("session inactive");
  });
});
