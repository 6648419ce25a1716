// Every route × every kind of caller → the envelope the caller must get. The routes come from the
// router itself, so a new route without a row in test/support/authorization-matrix.ts fails here.
import { eq } from "drizzle-orm";
import { decodeJwt, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../src/auth/password.ts";
import { sha256Hex } from "../../src/auth/encoding.ts";
import { appPasswords, settings, users, type AccessKeyUsage } from "../../src/db/schema.ts";
import { getAs, postJson } from "../support/auth.ts";
import {
  CALLERS,
  type CallerKind,
  expectedReply,
  ROUTES,
  routeKey,
  type RouteRow,
  servedRoutes,
} from "../support/authorization-matrix.ts";
import {
  api,
  backgroundContext,
  createUnitFixture,
  TEST_ADMIN_PASSWORD,
  testEnv,
  type UnitFixture,
} from "../support/unit.ts";

let fixture: UnitFixture;

/** The Authorization header of each caller; `fresh` asks session callers for a new sign-in. */
type Credential = (fresh: boolean) => Promise<string | undefined>;
const credentials = new Map<CallerKind, Credential>();

// load_all hands its checks to waitUntil, which app.request() only has with an execution context.
const { ctx: executionContext, pending: backgroundWork } = backgroundContext();

async function addUser(username: string): Promise<number> {
  const [user] = await fixture.db
    .insert(users)
    .values({ username, passwordHash: await hashStaticHash(await staticHash(`${username} pw`)), roleIds: [] })
    .returning();
  return user!.id;
}

/** An access key of `userId`'s, stored as the create route would (ended by a password change when `pwdTs` differs). */
async function addKey(
  userId: number,
  key: { usage?: AccessKeyUsage[]; expiresAt?: number; pwdTs?: number } = {},
): Promise<string> {
  const secret = `gh-key-matrix${userId}x${key.usage?.join("") ?? ""}${key.expiresAt ?? 0}${key.pwdTs ?? ""}`;
  const [user] = await fixture.db.select().from(users).where(eq(users.id, userId));
  await fixture.db.insert(appPasswords).values({
    userId,
    name: secret,
    hash: await sha256Hex(secret),
    createdAt: 1,
    passwordChangedAt: key.pwdTs ?? user!.passwordChangedAt,
    path: "/",
    permission: -1,
    expiresAt: key.expiresAt ?? 0,
    usage: key.usage ?? ["api"],
  });
  return secret;
}

const { signIn } = api(() => fixture);
/** `username` signed in (every account's password is `<name> pw` but the admin's), on the device `clientId` if given. */
const signInUser = (username: string, clientId?: string) =>
  signIn(
    username,
    username === "admin" ? TEST_ADMIN_PASSWORD : `${username} pw`,
    clientId ? { "Client-Id": clientId } : {},
  );

/** Runs one setup step through the API and insists it worked, so a dead token is dead for the stated reason. */
async function succeeds(reply: Promise<Response> | Promise<{ code: number; message: string }>) {
  const settled = await reply;
  const body = settled instanceof Response ? ((await settled.json()) as { code: number; message: string }) : settled;
  expect(body, "setup step").toMatchObject({ code: 200 });
}

const permanentToken = async () =>
  (await fixture.db.select({ value: settings.value }).from(settings).where(eq(settings.key, "token")))[0]!.value;

async function setGuest(state: "enabled" | "disabled") {
  await fixture.db
    .update(users)
    .set({ disabled: state === "disabled" })
    .where(eq(users.username, "guest"));
}

beforeAll(async () => {
  fixture = await createUnitFixture();
  const secret = new TextEncoder().encode(testEnv.JWT_SECRET);
  const now = Math.floor(Date.now() / 1000);

  const ursulaId = await addUser("ursula");
  const userToken = (await signInUser("ursula")).token;
  const adminToken = (await signInUser("admin")).token;
  const admin = { Authorization: adminToken };

  // The admin's key is made through the API: read and write on its whole reach, for the API.
  const madeKey = (await (
    await postJson(fixture, "/api/me/access_key/create", { name: "matrix", permission: 0x33ff, usage: ["api"] }, admin)
  ).json()) as { code: number; data: { secret: string } };
  expect(madeKey.code, "the admin makes a key").toBe(200);
  const adminKey = madeKey.data.secret;

  const loggedOut = (await signInUser("admin")).token;
  await succeeds(getAs(fixture, "/api/auth/logout", loggedOut));

  const evicted = await signInUser("ursula", "evicted-device");
  await succeeds(postJson(fixture, "/api/admin/session/evict", { session_id: evicted.device_key }, admin));

  await addUser("pat");
  const beforePasswordChange = (await signInUser("pat")).token;
  const afterPasswordChange = (await signInUser("pat", "changes-password")).token;
  await succeeds(
    postJson(fixture, "/api/me/update", { password: "pat's new pw" }, { Authorization: afterPasswordChange }),
  );

  const patKey = await addKey((await fixture.db.select().from(users).where(eq(users.username, "pat")))[0]!.id, {
    pwdTs: 1,
  });

  const dinaId = await addUser("dina");
  const dinaKey = await addKey(dinaId);
  const disabledUser = (await signInUser("dina")).token;
  await succeeds(postJson(fixture, "/api/admin/user/update", { id: dinaId, disabled: true }, admin));

  const delId = await addUser("del");
  const deletedUser = (await signInUser("del")).token;
  await succeeds(fixture.request(`/api/admin/user/delete?id=${delId}`, { method: "POST", headers: admin }));

  // Forgeries of a live admin token: only the expiry, the key or the algorithm differs.
  const claims = decodeJwt(adminToken);
  const expired = await new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt(now - 120)
    .setNotBefore(now - 120)
    .setExpirationTime(now - 60)
    .sign(secret);
  const otherKey = await new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .sign(new TextEncoder().encode("another-key-another-key-another-key!!"));
  const unsigned = new UnsecuredJWT(claims).encode();

  const fixed =
    (value: string | undefined): Credential =>
    async () =>
      value;
  const entries: [CallerKind, Credential][] = [
    ["no header", fixed(undefined)],
    ["empty header", fixed("")],
    ["guest, no header", fixed(undefined)],
    ["guest, empty header", fixed("")],
    ["ordinary user", async (fresh) => (fresh ? (await signInUser("ursula")).token : userToken)],
    ["admin by login token", async (fresh) => (fresh ? (await signInUser("admin")).token : adminToken)],
    ["admin by permanent token", permanentToken],
    ["expired token", fixed(expired)],
    ["token after logout", fixed(loggedOut)],
    ["token after eviction", fixed(evicted.token)],
    ["token after password change", fixed(beforePasswordChange)],
    ["token of a disabled user", fixed(disabledUser)],
    ["token of a deleted user", fixed(deletedUser)],
    ["token signed with another key", fixed(otherKey)],
    ["alg: none", fixed(unsigned)],
    ["garbage in JWT shape", fixed("abc.def.ghi")],
    ["garbage", fixed("let-me-in")],
    ["access key of an ordinary user", fixed(await addKey(ursulaId))],
    ["access key of the admin", fixed(adminKey)],
    ["access key without API use", fixed(await addKey(ursulaId, { usage: ["webdav", "s3"] }))],
    ["expired access key", fixed(await addKey(ursulaId, { expiresAt: now - 10 }))],
    ["access key after password change", fixed(patKey)],
    ["access key of a disabled user", fixed(dinaKey)],
  ];
  for (const [name, credential] of entries) credentials.set(name, credential);
});

afterAll(async () => {
  await Promise.allSettled(backgroundWork);
  fixture.close();
});

async function call(route: RouteRow, authorization: string | undefined): Promise<Response> {
  const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
  const init: RequestInit = { method: route.method === "ALL" ? "GET" : route.method, headers };
  if (route.body !== undefined) {
    headers["Content-Type"] = "application/json;charset=UTF-8";
    init.body = JSON.stringify(route.body);
  }
  const url = route.url ?? route.path;
  return fixture.app.request(route.query ? `${url}?${route.query}` : url, init, testEnv, executionContext);
}

describe("the matrix's tables", () => {
  it("have exactly one row per route the router serves", () => {
    const served = servedRoutes(fixture.app.routes).map(routeKey);
    const rows = ROUTES.map(routeKey);
    const missing = served.filter((route) => !rows.includes(route));
    const extra = rows.filter((route) => !served.includes(route));
    expect(
      { missing, extra },
      "missing: routes without a row in ROUTES (test/support/authorization-matrix.ts); extra: rows for routes the router does not serve",
    ).toEqual({ missing: [], extra: [] });
    expect(new Set(rows).size, "one row per route").toBe(rows.length);
  });

  it("have a credential for every caller", () => {
    expect([...credentials.keys()].sort()).toEqual(CALLERS.map((caller) => caller.name).sort());
  });
});

describe("near misses of a route's path", () => {
  // Neither reaches a handler around the guard nor claims the method used is the wrong one.
  const variants = (path: string) => [`${path}/`, path.toUpperCase(), `/${path}`];
  it.each(
    ROUTES.filter((route) => !route.url).flatMap((route) =>
      variants(route.path).map((path) => [`${route.method} ${path}`, route, path] as const),
    ),
  )("%s is no route: 404, even for the admin", async (_, route, path) => {
    const method = route.method === "ALL" ? "GET" : route.method;
    const response = await fixture.app.request(
      path,
      { method, headers: { Authorization: await permanentToken() } },
      testEnv,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ code: 404, message: `no route for ${method} ${path}`, data: null });
  });
});

describe.each(CALLERS)("$name (guest $guest)", (caller) => {
  beforeAll(() => setGuest(caller.guest));
  afterAll(() => setGuest("disabled"));

  it.each(ROUTES.map((route) => [routeKey(route), route] as const))("%s", async (_, route) => {
    const response = await call(route, await credentials.get(caller.name)!(route.endsSession === true));
    if (route.reply === "not found") {
      expect(response.status, "HTTP status").toBe(404);
      return;
    }
    expect(response.status, "HTTP status").toBe(200);
    if (route.reply === "text") {
      expect(await response.text()).toBe("pong");
      return;
    }
    const body = (await response.json()) as Record<string, unknown>;
    if (route.reply === "document") {
      expect(body.openapi).toBe("3.1.0");
      return;
    }
    expect(Object.keys(body).sort(), "an envelope").toEqual(["code", "data", "message"]);
    expect(typeof body.message).toBe("string");

    const expected = expectedReply(route, caller);
    if ("passes" in expected) {
      // Past the guard: success, or the route's own answer to the cheap request (bad input, unknown id).
      expect(
        [200, 400, 404, ...(route.alsoAnswers ?? [])],
        `got past the guard: ${body.code} ${body.message}`,
      ).toContain(body.code);
    } else {
      expect(body).toEqual({ code: expected.code, message: expected.message, data: null });
    }
  });
});
