// The admin API of metas (/api/admin/meta/*): their rows and the checks on them. What a meta does
// to listings (passwords, hidden entries, readme and header) is proved with the file API in
// src/features/fs/read.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send, signInAdmin, signInMember } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type Envelope, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let admin: string;

const { post } = api(
  () => fixture,
  () => admin,
);

/** A user with one role of the given scopes, signed in. */
const member = (
  name: string,
  scopes: { path: string; permission: number }[],
  fields: Parameters<typeof signInMember>[3] = {},
) => signInMember(fixture, name, scopes, fields);

beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture.close());

describe("metas", () => {
  const createMeta = (meta: Record<string, unknown>) => post("/api/admin/meta/create", meta);

  it("creates, lists, gets, updates and deletes metas; checks hide patterns; refuses non-admins", async () => {
    expect(await createMeta({ path: "/v/private/", password: "123", p_sub: true, hide: "^\\." })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    const listed = (await (
      await send(fixture, "GET", "/api/admin/meta/list", undefined, { Authorization: admin })
    ).json()) as Envelope;
    expect(listed.data.total).toBe(1);
    const meta = listed.data.content[0];
    expect(meta).toEqual({
      id: meta.id,
      path: "/v/private",
      password: "123",
      p_sub: true,
      write: false,
      w_sub: false,
      hide: "^\\.",
      h_sub: false,
      readme: "",
      r_sub: false,
      header: "",
      header_sub: false,
    });
    expect((await createMeta({ path: "/v/private" })).message).toBe("a meta for /v/private already exists");
    expect((await createMeta({ path: "/x", hide: "ok\n(" })).message).toMatch(/^\( is illegal: /);
    expect((await createMeta({ hide: "" })).code).toBe(400);
    expect(await post("/api/admin/meta/update", { ...meta, readme: "# hi" })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(
      (
        (await (
          await send(fixture, "GET", `/api/admin/meta/get?id=${meta.id}`, undefined, { Authorization: admin })
        ).json()) as Envelope
      ).data.readme,
    ).toBe("# hi");
    expect((await post("/api/admin/meta/update", { ...meta, id: 99999 })).code).toBe(404);
    const reader = await member("mo", [{ path: "/", permission: 0 }]);
    expect((await post("/api/admin/meta/create", { path: "/y" }, reader)).code).toBe(403);
    expect(await post(`/api/admin/meta/delete?id=${meta.id}`, undefined)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect((await post(`/api/admin/meta/delete?id=${meta.id}`, undefined)).code).toBe(404);
  });
});

describe("ids in query strings", () => {
  it("refuses an id past JavaScript's safe integers instead of rounding it to another row", async () => {
    const reply = (await (
      await send(fixture, "GET", "/api/admin/meta/get?id=9007199254740993", undefined, { Authorization: admin })
    ).json()) as Envelope;
    expect(reply).toEqual({ code: 400, message: "id: must be a positive integer", data: null });
  });
});
