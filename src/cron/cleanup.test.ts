import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanUp, sessionTtlSeconds } from "./cleanup.ts";
import {
  davLocks,
  deviceSessions,
  loginFailures,
  pendingOtpEnrolments,
  settings,
  ssoStates,
  webauthnChallenges,
} from "../db/schema.ts";
import { createUnitFixture, type UnitFixture } from "../../test/support/unit.ts";

const NOW = 1_800_000_000;
const ADMIN = 2;
let fixture: UnitFixture;
beforeAll(async () => (fixture = await createUnitFixture()));
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(deviceSessions);
  await fixture.db.delete(loginFailures);
  await fixture.db.delete(pendingOtpEnrolments);
  await fixture.db.delete(davLocks);
  await fixture.db.delete(ssoStates);
  await fixture.db.delete(webauthnChallenges);
  await fixture.db.update(settings).set({ value: "86400" }).where(eq(settings.key, "device_session_ttl"));
});

function session(deviceKey: string, lastActive: number) {
  return { deviceKey, userId: ADMIN, tokenId: "t", lastActive };
}

describe("scheduled cleanup", () => {
  it("removes sessions idle past device_session_ttl, expired lockouts, stale 2FA enrolments, expired WebDAV locks, SSO states and passkey challenges, and nothing else", async () => {
    await fixture.db.insert(deviceSessions).values([session("old", NOW - 86_401), session("fresh", NOW - 86_399)]);
    await fixture.db.insert(loginFailures).values([
      { scope: "ip", subject: "192.0.2.1", count: 5, expiresAt: NOW - 1 },
      { scope: "user", subject: "admin", count: 2, expiresAt: NOW + 60 },
    ]);
    await fixture.db.insert(pendingOtpEnrolments).values({ userId: ADMIN, secret: "x", createdAt: NOW - 601 });
    const lock = (token: string, expiresAt: number) => ({
      token,
      path: "/a",
      depth: 0,
      exclusive: true,
      userId: ADMIN,
      timeoutSeconds: 60,
      expiresAt,
    });
    await fixture.db.insert(davLocks).values([lock("urn:uuid:gone", NOW), lock("urn:uuid:live", NOW + 1)]);

    const state = (name: string, expiresAt: number) => ({
      state: name,
      method: "sso_get_token" as const,
      nonce: "n",
      codeVerifier: "v",
      expiresAt,
    });
    await fixture.db.insert(ssoStates).values([state("gone", NOW), state("live", NOW + 1)]);
    const challenge = (handle: string, expiresAt: number) => ({
      handle,
      challenge: "c",
      ceremony: "login" as const,
      expiresAt,
    });
    await fixture.db.insert(webauthnChallenges).values([challenge("gone", NOW - 5), challenge("live", NOW + 300)]);

    const report = await cleanUp(fixture.db, NOW);
    expect(report).toEqual({
      deviceSessions: 1,
      loginFailures: 1,
      otpEnrolments: 1,
      davLocks: 1,
      ssoStates: 1,
      passkeyChallenges: 1,
      incomplete: false,
    });
    expect((await fixture.db.select().from(ssoStates)).map((row) => row.state)).toEqual(["live"]);
    expect((await fixture.db.select().from(webauthnChallenges)).map((row) => row.handle)).toEqual(["live"]);
    expect((await fixture.db.select().from(davLocks)).map((row) => row.token)).toEqual(["urn:uuid:live"]);
    expect((await fixture.db.select().from(deviceSessions)).map((s) => s.deviceKey)).toEqual(["fresh"]);
    expect(await fixture.db.select().from(loginFailures)).toEqual([
      { scope: "user", subject: "admin", count: 2, expiresAt: NOW + 60 },
    ]);
    expect(await fixture.db.select().from(pendingOtpEnrolments)).toEqual([]);

    expect(await cleanUp(fixture.db, NOW)).toEqual({
      deviceSessions: 0,
      loginFailures: 0,
      otpEnrolments: 0,
      davLocks: 0,
      ssoStates: 0,
      passkeyChallenges: 0,
      incomplete: false,
    });
  });

  it("leaves sessions alone when device_session_ttl is 0", async () => {
    await fixture.db.update(settings).set({ value: "0" }).where(eq(settings.key, "device_session_ttl"));
    await fixture.db.insert(deviceSessions).values(session("ancient", 1));
    expect((await cleanUp(fixture.db, NOW)).deviceSessions).toBe(0);
    expect(await fixture.db.select().from(deviceSessions)).toHaveLength(1);
  });

  it("works through a backlog larger than one chunk", async () => {
    const rows = Array.from({ length: 1_234 }, (_, i) => session(`stale-${i}`, NOW - 100_000));
    for (let i = 0; i < rows.length; i += 200) await fixture.db.insert(deviceSessions).values(rows.slice(i, i + 200));
    const report = await cleanUp(fixture.db, NOW);
    expect(report).toMatchObject({ deviceSessions: 1_234, incomplete: false });
    expect(await fixture.db.select().from(deviceSessions)).toEqual([]);
  });
});

describe("device_session_ttl parsing", () => {
  it.each([
    ["86400", 86_400],
    ["60", 60],
    ["0", 0],
    ["-5", -5],
    ["soon", 86_400],
    [undefined, 86_400],
  ])("%s → %s", (raw, expected) => expect(sessionTtlSeconds(raw)).toBe(expected));
});
