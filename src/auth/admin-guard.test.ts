// The admin guard every /api/admin/* route puts after `authenticate`, on the shared router factory.
import { createRoute } from "../http/openapi.ts";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticate, requireAdmin } from "./guard.ts";
import { hashStaticHash, staticHash } from "./password.ts";
import { settings, users } from "../db/schema.ts";
import { ok } from "../http/envelope.ts";
import { handleError } from "../http/on-error.ts";
import { createRouter } from "../http/router.ts";
import { login } from "../../test/support/auth.ts";
import { createUnitFixture, TEST_ADMIN_PASSWORD, testEnv, type UnitFixture } from "../../test/support/unit.ts";

let fixture: UnitFixture;
const app = createRouter();
beforeAll(async () => {
  fixture = await createUnitFixture();
  await fixture.db
    .insert(users)
    .values({ username: "gina", passwordHash: await hashStaticHash(await staticHash("gina pw")), roleIds: [] });
  app.use("*", async (c, next) => {
    c.set("db", fixture.db);
    await next();
  });
  app.openapi(
    createRoute({
      method: "get",
      path: "/api/admin/probe",
      middleware: [authenticate, requireAdmin] as const,
    }),
    (c) => ok(c, c.var.caller.user.username),
  );
  app.onError(handleError);
});
afterAll(() => fixture.close());

const probe = async (authorization?: string) =>
  (
    await app.request(
      "/api/admin/probe",
      { headers: authorization === undefined ? {} : { Authorization: authorization } },
      testEnv,
    )
  ).json();

describe("admin-only routes", () => {
  it("refuse an ordinary user with 403", async () => {
    const token = (await login(fixture, { username: "gina", password: "gina pw" })).data!.token;
    expect(await probe(token)).toEqual({ code: 403, message: "You are not an admin", data: null });
  });

  it("refuse the guest with 401 while it is disabled, and with 403 once enabled", async () => {
    expect(await probe()).toEqual({ code: 401, message: "Guest user is disabled, login please", data: null });
    await fixture.db.update(users).set({ disabled: false }).where(eq(users.username, "guest"));
    const enabled = await probe("");
    await fixture.db.update(users).set({ disabled: true }).where(eq(users.username, "guest"));
    expect(enabled).toEqual({ code: 403, message: "You are not an admin", data: null });
  });

  it("let the admin in, by login token and by the permanent token", async () => {
    const token = (await login(fixture, { username: "admin", password: TEST_ADMIN_PASSWORD })).data!.token;
    expect(await probe(token)).toEqual({ code: 200, message: "success", data: "admin" });
    const [{ value }] = (await fixture.db
      .select({ value: settings.value })
      .from(settings)
      .where(eq(settings.key, "token"))) as [{ value: string }];
    expect(await probe(value)).toEqual({ code: 200, message: "success", data: "admin" });
  });
});
