// The task lists (/api/task/* and /api/admin/task/*): always empty, there are no background tasks at the edge.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send, signInAdmin } from "../../../test/support/auth.ts";
import { createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";

type Envelope = { code: number; message: string; data: any };

let fixture: UnitFixture;
let admin: string;

beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture.close());

describe("task lists", () => {
  it("are empty for every kind (no background tasks at the edge); an unknown kind is refused", async () => {
    for (const path of ["/api/task/upload/undone", "/api/task/copy/done", "/api/admin/task/upload/undone"]) {
      expect(await (await send(fixture, "GET", path, undefined, { Authorization: admin })).json(), path).toEqual({
        code: 200,
        message: "success",
        data: [],
      });
    }
    expect(
      (
        (await (
          await send(fixture, "GET", "/api/task/nope/undone", undefined, { Authorization: admin })
        ).json()) as Envelope
      ).code,
    ).toBe(400);
  });
});
