// What read and alias .test.ts share: a fresh libSQL file with the admin signed in and the sign
// key read, a clean slate of storages and metas before each test, Virtual storages (generated,
// deterministic files) mounted straight into the table, and the calls both make as the admin.
import { createHmac } from "node:crypto";
import { eq } from "drizzle-orm";
import { metas, settings, storages } from "../../db/schema.ts";
import { signInAdmin, signInMember } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";

/** beforeAll: a fresh fixture, the admin's token and the key signs are made with. */
export async function setUpReads(): Promise<{ fixture: UnitFixture; admin: string; token: string }> {
  const fixture = await createUnitFixture();
  const admin = await signInAdmin(fixture);
  const [row] = await fixture.db.select().from(settings).where(eq(settings.key, "token"));
  return { fixture, admin, token: row!.value };
}

/** beforeEach: no storages, no metas. */
export async function clearReads(fixture: UnitFixture): Promise<void> {
  await fixture.db.delete(storages);
  await fixture.db.delete(metas);
}

/** The calls on `fixture()` as the admin `admin()`; signs made with `token()` unless told. */
export function readsAs(fixture: () => UnitFixture, admin: () => string, token: () => string) {
  const { post } = api(fixture, admin);
  const list = (path: string, extra: Record<string, unknown> = {}, auth = admin()) =>
    post("/api/fs/list", { path, ...extra }, auth);
  const get = (path: string, extra: Record<string, unknown> = {}, auth = admin()) =>
    post("/api/fs/get", { path, ...extra }, auth);

  /** A Virtual storage at `mountPath`. */
  async function mount(
    mountPath: string,
    addition: Record<string, unknown> = {},
    extra: Partial<typeof storages.$inferInsert> = {},
  ) {
    const { db } = fixture();
    await db.insert(storages).values({
      mountPath,
      driver: "Virtual",
      status: "work",
      addition: JSON.stringify({ num_file: 3, num_folder: 2, min_file_size: 100, max_file_size: 5000, ...addition }),
      modifiedAtMs: Date.UTC(2026, 2, 1, 8),
      ...extra,
    });
  }

  /** A user with one role of the given scopes, signed in. */
  const member = (
    name: string,
    scopes: { path: string; permission: number }[],
    fields: Parameters<typeof signInMember>[3] = {},
  ) => signInMember(fixture(), name, scopes, fields);

  /** The sign of AList's format (AList v3.58.0 pkg/sign/hmac.go:17-26), computed here with Node's HMAC. */
  function signOf(path: string, expiry = 0, key = token()) {
    const mac = createHmac("sha256", key)
      .update(`${path}:${expiry}`)
      .digest("base64")
      .replace(/\+/g, "-")
      .replace(/\//g, "_");
    return `${mac}:${expiry}`;
  }

  return { post, list, get, mount, member, signOf };
}
