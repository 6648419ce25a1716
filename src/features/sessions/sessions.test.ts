import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { deviceSessions, settings, users } from "../../db/schema.ts";
import { getAs, login, postJson } from "../../../test/support/auth.ts";
import {
  api,
  createUnitFixture,
  readEnvelope,
  TEST_ADMIN_PASSWORD,
  type UnitFixture,
} from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let heidiId: number;
beforeAll(async () => {
  fixture = await createUnitFixture();
  for (const name of ["heidi", "ivan"]) {
    await fixture.db
      .insert(users)
      .values({ username: name, passwordHash: await hashStaticHash(await staticHash(`${name} pw`)), roleIds: [] });
  }
  heidiId = (await fixture.db.select().from(users).where(eq(users.username, "heidi")))[0]!.id;
});
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(deviceSessions);
  await fixture.db.update(settings).set({ value: "0" }).where(eq(settings.key, "max_devices"));
  await fixture.db.update(settings).set({ value: "deny" }).where(eq(settings.key, "device_evict_policy"));
});

const { signIn } = api(() => fixture);
/** `username` signed in on the device `device`; every account's password is `<name> pw` but the admin's. */
const signInOn = (username: string, device: string, extra: Record<string, string> = {}) =>
  signIn(username, username === "admin" ? TEST_ADMIN_PASSWORD : `${username} pw`, { "Client-Id": device, ...extra });
const evict = async (path: string, token: string, body: unknown) =>
  readEnvelope(await postJson(fixture, path, body, { Authorization: token }));
const setting = (key: string, value: string) => fixture.db.update(settings).set({ value }).where(eq(settings.key, key));

describe("GET /api/me/sessions", () => {
  it("lists the caller's active devices with masked addresses, most recent first, and no one else's", async () => {
    const laptop = await signInOn("heidi", "laptop", { "User-Agent": "Firefox", "CF-Connecting-IP": "192.168.1.23" });
    await fixture.db
      .update(deviceSessions)
      .set({ lastActive: 1000 })
      .where(eq(deviceSessions.deviceKey, laptop.device_key));
    const phone = await signInOn("heidi", "phone", {
      "User-Agent": "AListApp",
      "CF-Connecting-IP": "2001:db8:85a3::8a2e:370:7334",
    });
    await signInOn("ivan", "laptop");

    const body = await getAs(fixture, "/api/me/sessions", phone.token, {
      "User-Agent": "AListApp",
      "CF-Connecting-IP": "2001:db8:85a3::8a2e:370:7334",
    });
    expect(body.code).toBe(200);
    expect(body.data).toHaveLength(2);
    expect(body.data[0]).toMatchObject({
      session_id: phone.device_key,
      status: 0,
      ua: "AListApp",
      ip: "2001:*:*::*:*:7334",
    });
    expect(body.data[1]).toEqual({
      session_id: laptop.device_key,
      last_active: 1000,
      status: 0,
      ua: "Firefox",
      ip: "192.*.*.23",
    });
    expect(Object.keys(body.data[0]).sort()).toEqual(["ip", "last_active", "session_id", "status", "ua"]);
  });

  it("stops listing a device after it logs out", async () => {
    const laptop = await signInOn("heidi", "laptop");
    const phone = await signInOn("heidi", "phone");
    await getAs(fixture, "/api/auth/logout", laptop.token);
    const listed = await getAs(fixture, "/api/me/sessions", phone.token);
    expect(listed.data.map((s: { session_id: string }) => s.session_id)).toEqual([phone.device_key]);
  });

  it("answers an empty list for the permanent token, which has no device session", async () => {
    const [{ value }] = (await fixture.db
      .select({ value: settings.value })
      .from(settings)
      .where(eq(settings.key, "token"))) as [{ value: string }];
    expect(await getAs(fixture, "/api/me/sessions", value)).toEqual({ code: 200, message: "success", data: [] });
  });
});

describe("POST /api/me/sessions/evict", () => {
  it("ends another device of the caller: its token is refused, the caller's own goes on", async () => {
    const laptop = await signInOn("heidi", "laptop");
    const phone = await signInOn("heidi", "phone");
    expect(await evict("/api/me/sessions/evict", phone.token, { session_id: laptop.device_key })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await getAs(fixture, "/api/me", laptop.token)).toEqual({
      code: 401,
      message: "session inactive",
      data: null,
    });
    expect((await getAs(fixture, "/api/me", phone.token)).code).toBe(200);
    expect((await getAs(fixture, "/api/me/sessions", phone.token)).data).toHaveLength(1);
  });

  it("can end the caller's own current session", async () => {
    const laptop = await signInOn("heidi", "laptop");
    expect((await evict("/api/me/sessions/evict", laptop.token, { session_id: laptop.device_key })).code).toBe(200);
    expect((await getAs(fixture, "/api/me", laptop.token)).message).toBe("session inactive");
  });

  it("answers someone else's session like a missing one and leaves it alone", async () => {
    const ivan = await signInOn("ivan", "laptop");
    const heidi = await signInOn("heidi", "laptop");
    const notFound = { code: 404, message: "failed find session: record not found", data: null };
    expect(await evict("/api/me/sessions/evict", heidi.token, { session_id: ivan.device_key })).toEqual(notFound);
    expect(await evict("/api/me/sessions/evict", heidi.token, { session_id: "0".repeat(32) })).toEqual(notFound);
    expect((await getAs(fixture, "/api/me", ivan.token)).code).toBe(200);
  });

  it.each([
    ["an empty session_id", { session_id: "" }],
    ["a missing session_id", {}],
    ["a numeric session_id", { session_id: 42 }],
    ["a JSON array", []],
  ])("answers %s with 400", async (_, body) => {
    const heidi = await signInOn("heidi", "laptop");
    const envelope = await evict("/api/me/sessions/evict", heidi.token, body);
    expect(envelope.code).toBe(400);
    expect(envelope.message).toMatch(/session_id|body|json/);
  });
});

describe("administrative sessions", () => {
  it("lists every user's active sessions with user_id, and evicts any of them", async () => {
    const admin = await signInOn("admin", "console");
    const heidi = await signInOn("heidi", "laptop");
    const listed = await getAs(fixture, "/api/admin/session/list", admin.token);
    expect(listed.data).toHaveLength(2);
    expect(listed.data.find((s: { session_id: string }) => s.session_id === heidi.device_key)).toMatchObject({
      user_id: heidiId,
      status: 0,
    });

    expect(await evict("/api/admin/session/evict", admin.token, { session_id: heidi.device_key })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect((await getAs(fixture, "/api/me", heidi.token)).message).toBe("session inactive");
    expect((await getAs(fixture, "/api/admin/session/list", admin.token)).data).toHaveLength(1);
    expect((await evict("/api/admin/session/evict", admin.token, { session_id: "missing" })).code).toBe(404);
  });

  it("refuses ordinary users with 403", async () => {
    const heidi = await signInOn("heidi", "laptop");
    expect(await getAs(fixture, "/api/admin/session/list", heidi.token)).toEqual({
      code: 403,
      message: "You are not an admin",
      data: null,
    });
    expect((await evict("/api/admin/session/evict", heidi.token, { session_id: heidi.device_key })).code).toBe(403);
    expect((await getAs(fixture, "/api/me", heidi.token)).code).toBe(200);
  });
});

describe("paging the session lists", () => {
  // Rows straight into the table: sign-ins would take a PBKDF2 each.
  const seed = async (userId: number, count: number) =>
    fixture.db.insert(deviceSessions).values(
      Array.from({ length: count }, (_, i) => ({
        deviceKey: `paged-${userId}-${String(i).padStart(4, "0")}`,
        userId,
        tokenId: "t",
        lastActive: 10_000 - i,
        status: 0,
      })),
    );
  const keys = (body: { data: { session_id: string }[] }) => body.data.map((s) => s.session_id);

  it("pages /api/me/sessions with page and per_page, most recent first, and stays a bare array", async () => {
    const heidi = await signInOn("heidi", "pager");
    await seed(heidiId, 30);
    const first = await getAs(fixture, "/api/me/sessions?page=1&per_page=10", heidi.token);
    expect(first.code).toBe(200);
    expect(Array.isArray(first.data)).toBe(true);
    expect(keys(first)).toEqual([
      heidi.device_key,
      ...Array.from({ length: 9 }, (_, i) => `paged-${heidiId}-${String(i).padStart(4, "0")}`),
    ]);
    const fourth = await getAs(fixture, "/api/me/sessions?page=4&per_page=10", heidi.token);
    expect(keys(fourth)).toEqual([`paged-${heidiId}-0029`]);
    expect((await getAs(fixture, "/api/me/sessions?page=5&per_page=10", heidi.token)).data).toEqual([]);
    // AList's defaults: page below 1 is the first page; per_page 0 or absent is "all" (here: the whole list).
    expect(keys(await getAs(fixture, "/api/me/sessions?page=0&per_page=10", heidi.token))).toEqual(keys(first));
    expect((await getAs(fixture, "/api/me/sessions?per_page=0", heidi.token)).data).toHaveLength(31);
    expect((await getAs(fixture, "/api/me/sessions", heidi.token)).data).toHaveLength(31);
    expect((await getAs(fixture, "/api/me/sessions?per_page=x", heidi.token)).code).toBe(400);
  });

  it("pages /api/admin/session/list, and never answers more than 1000 rows at once", async () => {
    const admin = await signInOn("admin", "pager");
    const [ivan] = await fixture.db.select().from(users).where(eq(users.username, "ivan"));
    await seed(heidiId, 700);
    await seed(ivan!.id, 700);
    const all = await getAs(fixture, "/api/admin/session/list", admin.token);
    expect(all.data).toHaveLength(1000);
    expect(all.data[0]).toMatchObject({ session_id: admin.device_key, user_id: 1 + 1 });
    expect((await getAs(fixture, "/api/admin/session/list?page=2", admin.token)).data).toHaveLength(401);
    expect((await getAs(fixture, "/api/admin/session/list?per_page=5000", admin.token)).data).toHaveLength(1000);
    const page = await getAs(fixture, "/api/admin/session/list?page=3&per_page=2", admin.token);
    expect(page.data).toEqual([all.data[4], all.data[5]]);
  });
});

describe("max_devices", () => {
  it("with the deny policy refuses a new device over the limit, but lets a known device sign in again", async () => {
    await setting("max_devices", "2");
    await signInOn("heidi", "one");
    await signInOn("heidi", "two");
    expect(await login(fixture, { username: "heidi", password: "heidi pw" }, { "Client-Id": "three" })).toEqual({
      code: 403,
      message: "too many active devices",
      data: null,
    });
    expect((await login(fixture, { username: "heidi", password: "heidi pw" }, { "Client-Id": "two" })).code).toBe(200);
    expect(await fixture.db.select().from(deviceSessions).where(eq(deviceSessions.userId, heidiId))).toHaveLength(2);
  });

  it("with evict_oldest ends the least recently used device to make room", async () => {
    await setting("max_devices", "2");
    await setting("device_evict_policy", "evict_oldest");
    const one = await signInOn("heidi", "one");
    await fixture.db
      .update(deviceSessions)
      .set({ lastActive: 100 })
      .where(eq(deviceSessions.deviceKey, one.device_key));
    const two = await signInOn("heidi", "two");
    const three = await signInOn("heidi", "three");
    expect(await getAs(fixture, "/api/me", one.token)).toEqual({ code: 401, message: "session inactive", data: null });
    const listed = await getAs(fixture, "/api/me/sessions", three.token);
    expect(listed.data.map((s: { session_id: string }) => s.session_id).sort()).toEqual(
      [two.device_key, three.device_key].sort(),
    );
  });

  it("with evict_oldest holds the limit when many new devices sign in at once", async () => {
    await setting("max_devices", "2");
    await setting("device_evict_policy", "evict_oldest");
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        login(
          fixture,
          { username: "heidi", password: "heidi pw" },
          { "Client-Id": `crowd-${i}`, "CF-Connecting-IP": `198.51.100.${i}` },
        ),
      ),
    );
    expect(replies.map((r) => r.code)).toEqual(Array(8).fill(200));
    const active = await fixture.db
      .select()
      .from(deviceSessions)
      .where(and(eq(deviceSessions.userId, heidiId), eq(deviceSessions.status, 0)));
    expect(active).toHaveLength(2);
    const live = await Promise.all(replies.map((r) => getAs(fixture, "/api/me", r.data!.token)));
    expect(live.filter((r) => r.code === 200)).toHaveLength(2);
  });

  it("counts only the user's own active sessions", async () => {
    await setting("max_devices", "1");
    await signInOn("ivan", "one");
    const first = await signInOn("heidi", "one");
    await getAs(fixture, "/api/auth/logout", first.token);
    expect((await login(fixture, { username: "heidi", password: "heidi pw" }, { "Client-Id": "two" })).code).toBe(200);
  });
});
