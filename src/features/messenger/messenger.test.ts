// The web UI's messenger page: it polls message/get every second and shows what it gets; its Send
// button posts message/send and shows the reply's message.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInAdmin, signInMember } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let admin: string;

beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture?.close());

const { post } = api(
  () => fixture,
  () => admin,
);

describe("the messenger", () => {
  it("answers an empty inbox as OpenList does (the page polls past it without a toast or an entry)", async () => {
    expect(await post("/api/admin/message/get", undefined)).toEqual({ code: 404, message: "no message", data: null });
  });

  it("refuses a message, saying why", async () => {
    expect(await post("/api/admin/message/send", { message: "hello" })).toEqual({
      code: 400,
      message:
        "nowhere needed: Gatehouse runs no process that reads messages from the web UI, so a message would be lost",
      data: null,
    });
  });

  it("is for admins only", async () => {
    const member = await signInMember(fixture, "messenger-member", [{ path: "/", permission: 0 }]);
    for (const path of ["/api/admin/message/get", "/api/admin/message/send"])
      expect(await post(path, { message: "x" }, member)).toEqual({
        code: 403,
        message: "You are not an admin",
        data: null,
      });
  });
});
