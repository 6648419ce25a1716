// Names and paths with control characters or unpaired surrogates are refused before anything is
// stored: a NUL cuts text short in the local driver, and sqld refuses broken UTF-16.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roles, sshPublicKeys, storages, users } from "../../src/db/schema.ts";
import { postJson, signInAdmin } from "../support/auth.ts";
import { createUnitFixture, readEnvelope, TEST_ADMIN_PASSWORD, type UnitFixture } from "../support/unit.ts";

let fixture: UnitFixture;
let admin: string;
beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture.close());

const MESSAGE = "must not contain control characters or unpaired surrogates";

describe("names and paths must be well-formed text", () => {
  it.each([
    ["a username with NUL", "/api/admin/user/create", { username: "a\u0000b", password: "pw" }, "username"],
    [
      "a username with a lone surrogate",
      "/api/admin/user/create",
      { username: "a\uD800b", password: "pw" },
      "username",
    ],
    [
      "a base path with a newline",
      "/api/admin/user/create",
      { username: "valid", password: "pw", base_path: "/a\nb" },
      "base_path",
    ],
    ["a role name with a tab", "/api/admin/role/create", { name: "ed\titors" }, "name"],
    [
      "a scope path with DEL",
      "/api/admin/role/create",
      { name: "ok", permission_scopes: [{ path: "/a\u007f", permission: 1 }] },
      "permission_scopes.0.path",
    ],
    [
      "a mount path with NUL",
      "/api/admin/storage/create",
      { mount_path: "/m\u0000", driver: "Virtual", addition: "{}" },
      "mount_path",
    ],
    [
      "an SSH key title with a lone low surrogate",
      "/api/me/sshkey/add",
      { title: "t\uDC00", key: "ssh-ed25519 AAAA" },
      "title",
    ],
    [
      "a sign-in username with NUL",
      "/api/auth/login",
      { username: "admin\u0000", password: TEST_ADMIN_PASSWORD },
      "username",
    ],
  ])("refuses %s with 400 and stores nothing", async (_, path, body, field) => {
    const before = await Promise.all(
      [users, roles, storages, sshPublicKeys].map((table) => fixture.db.select().from(table)),
    );
    const reply = await readEnvelope(await postJson(fixture, path, body, { Authorization: admin }));
    expect(reply).toEqual({ code: 400, message: `${field}: ${MESSAGE}`, data: null });
    expect(
      await Promise.all([users, roles, storages, sshPublicKeys].map((table) => fixture.db.select().from(table))),
    ).toEqual(before);
  });

  it("still takes ordinary non-ASCII names", async () => {
    const reply = await readEnvelope(
      await postJson(
        fixture,
        "/api/admin/user/create",
        { username: "Zoë 山田 🚀", password: "pw" },
        { Authorization: admin },
      ),
    );
    expect(reply.code).toBe(200);
  });
});
