// App passwords (/api/me/app_password/*) on their own: names checked, one name once per user, at
// most MAX_APP_PASSWORDS, the password shown once and stored as a hash, someone else's never touched,
// the guest refused, and a password change ending them all.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { appPasswords, users } from "../../db/schema.ts";
import { MAX_APP_PASSWORDS } from "./routes.ts";
import { getAs, login, postJson, signInAdmin } from "../../../test/support/auth.ts";
import { createUnitFixture, readEnvelope, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let alice: string;
let bob: string;
let aliceId: number;
beforeAll(async () => {
  fixture = await createUnitFixture();
  for (const name of ["alice", "bob"]) {
    await fixture.db
      .insert(users)
      .values({ username: name, passwordHash: await hashStaticHash(await staticHash(`${name} pw`)), roleIds: [] });
  }
  aliceId = (await fixture.db.select().from(users).where(eq(users.username, "alice")))[0]!.id;
  alice = (await login(fixture, { username: "alice", password: "alice pw" })).data!.token;
  bob = (await login(fixture, { username: "bob", password: "bob pw" })).data!.token;
});
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(appPasswords);
});

const create = async (token: string, body: unknown) =>
  readEnvelope(await postJson(fixture, "/api/me/app_password/create", body, { Authorization: token }));
const remove = async (token: string, query: string) =>
  readEnvelope(
    await fixture.request(`/api/me/app_password/delete${query}`, { method: "POST", headers: { Authorization: token } }),
  );

describe("app passwords", () => {
  it("shows the password once, stores only its SHA-256, and lists names and use", async () => {
    const made = await create(alice, { name: "  laptop  " });
    expect(made).toEqual({
      code: 200,
      message: "success",
      data: {
        id: expect.any(Number),
        name: "laptop",
        created: expect.any(String),
        last_used: null,
        password: expect.stringMatching(/^gh-app-[A-Za-z0-9]{32}$/),
      },
    });
    const [row] = await fixture.db.select().from(appPasswords);
    expect(row!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.hash).not.toBe((made.data as { password: string }).password);
    const listed = await getAs(fixture, "/api/me/app_password/list", alice);
    expect(listed).toEqual({
      code: 200,
      message: "success",
      data: [{ id: row!.id, name: "laptop", created: expect.any(String), last_used: null }],
    });
    expect(JSON.stringify(listed)).not.toContain(row!.hash);
  });

  it.each([
    [{}, "name: "],
    [{ name: "" }, "name: "],
    [{ name: "   " }, "name: "],
    [{ name: "x".repeat(101) }, "name: "],
    [{ name: 42 }, "name: "],
    [{ name: "a\u0000b" }, "name: "],
  ])("refuses the body %j with code 400 naming the field", async (body, start) => {
    const reply = await create(alice, body);
    expect(reply.code).toBe(400);
    expect(reply.message.startsWith(start)).toBe(true);
    expect(await fixture.db.select().from(appPasswords)).toEqual([]);
  });

  it("refuses malformed JSON and a name the user already has; another user may use it", async () => {
    const malformed = await readEnvelope(
      await fixture.request("/api/me/app_password/create", {
        method: "POST",
        headers: { Authorization: alice, "Content-Type": "application/json" },
        body: '{"name":',
      }),
    );
    expect(malformed.code).toBe(400);
    expect((await create(alice, { name: "phone" })).code).toBe(200);
    expect(await create(alice, { name: "phone" })).toEqual({
      code: 400,
      message: "an app password with this name already exists",
      data: null,
    });
    expect((await create(bob, { name: "phone" })).code).toBe(200);
  });

  it(`stops at ${MAX_APP_PASSWORDS} per user`, async () => {
    await fixture.db.insert(appPasswords).values(
      Array.from({ length: MAX_APP_PASSWORDS }, (_, i) => ({
        userId: aliceId,
        name: `p${i}`,
        hash: i.toString(16).padStart(64, "0"),
        createdAt: 0,
        passwordChangedAt: 0,
      })),
    );
    await fixture.db.run(`UPDATE app_passwords SET pwd_ts = (SELECT pwd_ts FROM users WHERE id = ${aliceId})`);
    expect(await create(alice, { name: "one more" })).toEqual({
      code: 400,
      message: `a user can have at most ${MAX_APP_PASSWORDS} app passwords`,
      data: null,
    });
  });

  it("revokes the caller's own only: someone else's, a missing one and a bad id answer as they should, deleting nothing", async () => {
    const id = ((await create(alice, { name: "tablet" })).data as { id: number }).id;
    expect(await remove(bob, `?id=${id}`)).toEqual({ code: 404, message: "app password not found", data: null });
    expect(await remove(alice, "?id=999999")).toEqual({ code: 404, message: "app password not found", data: null });
    expect((await remove(alice, "?id=0")).code).toBe(400);
    expect((await remove(alice, "")).code).toBe(400);
    expect(await fixture.db.select({ id: appPasswords.id }).from(appPasswords)).toEqual([{ id }]);
    expect(await remove(alice, `?id=${id}`)).toEqual({ code: 200, message: "success", data: null });
    expect(await fixture.db.select().from(appPasswords)).toEqual([]);
  });

  it("ends every app password when the user's password changes", async () => {
    expect((await create(alice, { name: "before" })).code).toBe(200);
    const admin = await signInAdmin(fixture);
    expect(
      (
        await readEnvelope(
          await postJson(
            fixture,
            "/api/admin/user/update",
            { id: aliceId, password: "alice new pw" },
            { Authorization: admin },
          ),
        )
      ).code,
    ).toBe(200);
    const fresh = (await login(fixture, { username: "alice", password: "alice new pw" })).data!.token;
    expect((await getAs(fixture, "/api/me/app_password/list", fresh)).data).toEqual([]);
  });

  it("refuses the guest (when enabled) with AList's message, as for SSH keys", async () => {
    await fixture.db.update(users).set({ disabled: false }).where(eq(users.username, "guest"));
    try {
      expect(await getAs(fixture, "/api/me/app_password/list", "")).toEqual({
        code: 401,
        message: "user invalid",
        data: null,
      });
      expect(await create("", { name: "guest" })).toEqual({ code: 401, message: "user invalid", data: null });
    } finally {
      await fixture.db.update(users).set({ disabled: true }).where(eq(users.username, "guest"));
    }
  });
});
