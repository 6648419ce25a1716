// SSH keys in workerd, with round trips counted at the database endpoint: the guard is one, each
// endpoint's own work one more.
import { beforeAll, describe, expect, it } from "vitest";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { call, post, signInAs } from "../../../test/support/workerd-client.ts";

// Made once with `ssh-keygen -t ed25519`; the fingerprint is what `ssh-keygen -lf` printed for it.
const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIF830has9voa3nSKF+gYRCV98EULchtH7fXUcW3jplIh test@gatehouse";
const FINGERPRINT = "SHA256:NmLCfiO0z3fX+xm9bHY/mv7o11XWrlXV0Ov/s9NqO9k";

let phone: { token: string; device_key: string };
beforeAll(async () => {
  await sql("DELETE FROM login_failures");
  phone = await signInAs("sshkeys-phone");
});

describe("SSH keys in workerd", () => {
  it("adds and deletes a key in two round trips each, lists in one", async () => {
    const addTrips = await roundTrips();
    expect(await post("/api/me/sshkey/add", { title: "workerd", key: KEY }, phone.token)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await addTrips.count()).toBe(2);

    const listTrips = await roundTrips();
    const listed = await call("/api/me/sshkey/list", { headers: { Authorization: phone.token } });
    expect(await listTrips.count()).toBe(1);
    expect(listed.data.content).toEqual([expect.objectContaining({ title: "workerd", fingerprint: FINGERPRINT })]);

    const deleteTrips = await roundTrips();
    expect((await post(`/api/me/sshkey/delete?id=${listed.data.content[0].id}`, undefined, phone.token)).code).toBe(
      200,
    );
    expect(await deleteTrips.count()).toBe(2);
    expect(await sql("SELECT count(*) FROM ssh_public_keys")).toEqual([[0]]);
  });
});
