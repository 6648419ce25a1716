// What users and rules .test.ts share: the admin API of a fresh libSQL file, signed in as the
// admin, and the calls both make (a user created, its row read, the rows counted). Every request
// comes from one address, so each test starts with no failed sign-ins on record.
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { loginFailures, users } from "../../db/schema.ts";
import {
  api,
  createUnitFixture,
  type Envelope,
  TEST_ADMIN_PASSWORD,
  type UnitFixture,
} from "../../../test/support/unit.ts";

/** beforeAll: a fresh fixture and the admin's token. */
export async function setUpUsers(): Promise<{ fixture: UnitFixture; adminToken: string }> {
  const fixture = await createUnitFixture();
  const { signIn } = api(() => fixture);
  return { fixture, adminToken: (await signIn("admin", TEST_ADMIN_PASSWORD)).token };
}

/** beforeEach: failed sign-ins on purpose must not lock later tests out. */
export async function forgetFailedSignIns(fixture: UnitFixture): Promise<void> {
  await fixture.db.delete(loginFailures);
}

/** The API as the admin `adminToken()`, and the user rows of `fixture()`. */
export function usersAs(fixture: () => UnitFixture, adminToken: () => string) {
  const { post, get, signIn } = api(fixture, adminToken);
  /** A user made through the API (which must accept it); its data. */
  async function createUser(fields: Record<string, unknown>): Promise<Envelope["data"]> {
    const body = await post("/api/admin/user/create", { password: "pw of a user", ...fields });
    expect(body, `create ${String(fields.username)}`).toMatchObject({ code: 200, message: "success" });
    return body.data;
  }
  const userRow = async (id: number) => (await fixture().db.select().from(users).where(eq(users.id, id)))[0];
  const userCount = async () => (await fixture().db.select().from(users)).length;
  return { post, get, signIn, createUser, userRow, userCount };
}
