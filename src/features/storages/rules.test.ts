// The storage group's decisions once a storage exists (rules.ts), through app.request(): enable and
// disable, delete and its refusals while a role or a user's base path uses the mount, load_all's
// background re-check, moving a mount path with the role scopes under it, and admins only.
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { roles, storages, users } from "../../db/schema.ts";
import { login, signInAdmin } from "../../../test/support/auth.ts";
import { startSlowWebdav } from "../../../test/support/storage-servers.ts";
import {
  api,
  backgroundContext,
  createUnitFixture,
  type Envelope,
  testEnv,
  type UnitFixture,
} from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let admin: string;
beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(storages);
});

const { post, get } = api(
  () => fixture,
  () => admin,
);
const create = (body: unknown) => post("/api/admin/storage/create", body);
const update = (body: unknown) => post("/api/admin/storage/update", body);
const rows = () => fixture.db.select().from(storages).orderBy(storages.id);
const row = async (id: number) => (await fixture.db.select().from(storages).where(eq(storages.id, id)))[0];
const virtual = (mountPath: string, extra: Record<string, unknown> = {}) => ({
  mount_path: mountPath,
  driver: "Virtual",
  addition: "{}",
  ...extra,
});

describe("storage/enable and storage/disable", () => {
  it("disables (status disabled) and enables (checked again), each once", async () => {
    const { data } = await create(virtual("/v"));
    expect(await post(`/api/admin/storage/disable?id=${data.id}`)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await row(data.id)).toMatchObject({ disabled: true, status: "disabled" });
    expect(await post(`/api/admin/storage/disable?id=${data.id}`)).toEqual({
      code: 400,
      message: "this storage have disabled",
      data: null,
    });
    expect(await post(`/api/admin/storage/enable?id=${data.id}`)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await row(data.id)).toMatchObject({ disabled: false, status: "work" });
    expect(await post(`/api/admin/storage/enable?id=${data.id}`)).toEqual({
      code: 400,
      message: "this storage have enabled",
      data: null,
    });
  });

  it("enables a storage whose check fails: it stays enabled with the error, code 500", async () => {
    const { data } = await create({ mount_path: "/disk", driver: "Local", addition: "{}", disabled: true });
    const reply = await post(`/api/admin/storage/enable?id=${data.id}`);
    expect(reply).toEqual({
      code: 500,
      message: expect.stringMatching(/^failed load storage: Local storage cannot run on Cloudflare Workers/),
      data: null,
    });
    expect(await row(data.id)).toMatchObject({
      disabled: false,
      status: reply.message.replace("failed load storage: ", ""),
    });
  });

  it("answers unknown and bad ids", async () => {
    for (const action of ["enable", "disable"]) {
      expect(await post(`/api/admin/storage/${action}?id=42`)).toEqual({
        code: 404,
        message: "storage not found",
        data: null,
      });
      expect(await post(`/api/admin/storage/${action}?id=0`)).toEqual({
        code: 400,
        message: "id: must be a positive integer",
        data: null,
      });
      expect(await post(`/api/admin/storage/${action}?id=abc`)).toEqual({
        code: 400,
        message: "id: must be a positive integer",
        data: null,
      });
      expect(await post(`/api/admin/storage/${action}`)).toEqual({
        code: 400,
        message: "id: is required",
        data: null,
      });
    }
  });
});

describe("storage/delete", () => {
  beforeAll(async () => {
    await fixture.db.insert(roles).values([
      { name: "editors", permissionScopes: [{ path: "/media/films", permission: 8 }] },
      {
        name: "viewers",
        permissionScopes: [
          { path: "/books", permission: 1 },
          { path: "/media", permission: 1 },
        ],
      },
      { name: "others", permissionScopes: [{ path: "/mediax/a", permission: 1 }] },
    ]);
    const passwordHash = await hashStaticHash(await staticHash("pw"));
    await fixture.db.insert(users).values([
      { username: "bob", passwordHash, basePath: "/media/bob" },
      { username: "carol", passwordHash, basePath: "/elsewhere" },
    ]);
  });

  it("refuses while a role scope or a user's base path uses the first mount segment, naming them", async () => {
    const { data } = await create(virtual("/media/tv"));
    expect(await post(`/api/admin/storage/delete?id=${data.id}`)).toEqual({
      code: 400,
      message: "storage is used by role:editors, role:viewers, user:bob, please cancel usage first",
      data: null,
    });
    expect(await row(data.id)).toBeDefined();
  });

  it("compares whole segments: /mediax is not /media", async () => {
    const { data } = await create(virtual("/mediax"));
    expect(await post(`/api/admin/storage/delete?id=${data.id}`)).toEqual({
      code: 400,
      message: "storage is used by role:others, please cancel usage first",
      data: null,
    });
    const free = await create(virtual("/medi"));
    expect(await post(`/api/admin/storage/delete?id=${free.data.id}`)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await row(free.data.id)).toBeUndefined();
  });

  it("skips the check for the root mount", async () => {
    const { data } = await create(virtual("/"));
    expect(await post(`/api/admin/storage/delete?id=${data.id}`)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await rows()).toHaveLength(0);
  });

  it("answers unknown and bad ids", async () => {
    expect(await post("/api/admin/storage/delete?id=7")).toEqual({
      code: 404,
      message: "storage not found",
      data: null,
    });
    expect(await post("/api/admin/storage/delete?id=0")).toEqual({
      code: 400,
      message: "id: must be a positive integer",
      data: null,
    });
    expect(await post("/api/admin/storage/delete?id=abc")).toEqual({
      code: 400,
      message: "id: must be a positive integer",
      data: null,
    });
    expect(await post("/api/admin/storage/delete")).toEqual({ code: 400, message: "id: is required", data: null });
  });
});

describe("storage/load_all", () => {
  const executionContext = backgroundContext;
  const loadAll = async (ctx: ExecutionContext): Promise<Envelope> =>
    (
      await fixture.app.request(
        "/api/admin/storage/load_all",
        { method: "POST", headers: { Authorization: admin } },
        testEnv,
        ctx,
      )
    ).json();

  it("answers at once and re-checks every enabled storage in the background, 4 at a time", async () => {
    const dav = await startSlowWebdav(150);
    try {
      const davIds = [];
      for (let i = 0; i < 9; i++) {
        davIds.push(
          (
            await create({
              mount_path: `/dav${i}`,
              driver: "WebDav",
              addition: JSON.stringify({ address: dav.url, username: "" }),
            })
          ).data.id,
        );
      }
      const media = (await create(virtual("/media"))).data.id;
      const alias = (await create({ mount_path: "/alias", driver: "Alias", addition: '{"paths":"/media"}' })).data.id;
      const off = (await create(virtual("/off", { disabled: true }))).data.id;
      await fixture.db.update(storages).set({ status: "stale" }).where(eq(storages.disabled, false));
      const gone = (
        await fixture.db.insert(storages).values({ mountPath: "/gone", driver: "Gone", modifiedAtMs: 0 }).returning()
      )[0]!.id;

      const { ctx, pending } = executionContext();
      expect(await loadAll(ctx)).toEqual({ code: 200, message: "success", data: null });
      expect(pending).toHaveLength(1);
      expect((await row(davIds[0]))!.status).toBe("stale"); // still checking
      await Promise.all(pending);

      for (const id of [...davIds, media, alias]) expect((await row(id))!.status).toBe("work");
      expect((await row(gone))!.status).toBe("driver [Gone] not found");
      expect(await row(off)).toMatchObject({ disabled: true, status: "disabled" });
      expect(dav.maxInFlight()).toBe(4);
    } finally {
      await dav.close();
    }
  });

  it("checks Alias after the storages it points into, so it sees their fresh status", async () => {
    const media = (await create(virtual("/media"))).data.id;
    const alias = (await create({ mount_path: "/alias", driver: "Alias", addition: '{"paths":"/media/films"}' })).data
      .id;
    await fixture.db.update(storages).set({ status: "wrong username or password" }).where(eq(storages.id, media));
    await fixture.db.update(storages).set({ status: "stale" }).where(eq(storages.id, alias));
    const { ctx, pending } = executionContext();
    await loadAll(ctx);
    await Promise.all(pending);
    expect((await row(media))!.status).toBe("work");
    expect((await row(alias))!.status).toBe("work");
  });
});

describe("the storage group is for admins only", () => {
  it("answers 403 to a user and 401 without a token", async () => {
    await fixture.db
      .insert(users)
      .values({ username: "dora", passwordHash: await hashStaticHash(await staticHash("dora pw")) });
    const dora = (await login(fixture, { username: "dora", password: "dora pw" })).data!.token;
    for (const path of ["/api/admin/storage/list", "/api/admin/storage/get?id=1"]) {
      expect(await get(path, dora)).toEqual({ code: 403, message: "You are not an admin", data: null });
      expect(await get(path, "")).toEqual({ code: 401, message: "Guest user is disabled, login please", data: null });
    }
    for (const action of ["create", "update", "delete?id=1", "enable?id=1", "disable?id=1", "load_all"]) {
      expect(await post(`/api/admin/storage/${action}`, undefined, dora)).toEqual({
        code: 403,
        message: "You are not an admin",
        data: null,
      });
      expect(await post(`/api/admin/storage/${action}`, undefined, "")).toEqual({
        code: 401,
        message: "Guest user is disabled, login please",
        data: null,
      });
    }
  });
});

describe("moving a storage's mount path", () => {
  const scopesOf = async (name: string) =>
    (await fixture.db.select().from(roles).where(eq(roles.name, name)))[0]!.permissionScopes;

  it("carries role scopes at or inside the old path along, and leaves the rest alone", async () => {
    const { data } = await create(virtual("/media"));
    await fixture.db.insert(roles).values({
      name: "movers",
      permissionScopes: [
        { path: "/media", permission: 1 },
        { path: "/media/tv", permission: 8 },
        { path: "/mediaeval", permission: 2 },
        { path: "/", permission: 4 },
      ],
    });
    expect((await update({ ...virtual("/films"), id: data.id })).code).toBe(200);
    expect(await scopesOf("movers")).toEqual([
      { path: "/films", permission: 1 },
      { path: "/films/tv", permission: 8 },
      { path: "/mediaeval", permission: 2 },
      { path: "/", permission: 4 },
    ]);
    expect(await scopesOf("admin")).toEqual([{ path: "/", permission: 65535 }]);
  });

  it("leaves the admin and guest roles alone, even with scopes under the moved path", async () => {
    const { data } = await create(virtual("/shared"));
    const original = await fixture.db
      .select()
      .from(roles)
      .where(inArray(roles.name, ["admin", "guest"]));
    const pinned = (extra: { path: string; permission: number }) => [{ path: "/", permission: 1 }, extra];
    await fixture.db
      .update(roles)
      .set({ permissionScopes: pinned({ path: "/shared/public", permission: 1 }) })
      .where(eq(roles.name, "guest"));
    await fixture.db
      .update(roles)
      .set({ permissionScopes: pinned({ path: "/shared", permission: 2 }) })
      .where(eq(roles.name, "admin"));
    try {
      expect((await update({ ...virtual("/common"), id: data.id })).code).toBe(200);
      expect(await scopesOf("guest")).toEqual(pinned({ path: "/shared/public", permission: 1 }));
      expect(await scopesOf("admin")).toEqual(pinned({ path: "/shared", permission: 2 }));
    } finally {
      for (const role of original)
        await fixture.db.update(roles).set({ permissionScopes: role.permissionScopes }).where(eq(roles.id, role.id));
    }
  });

  it("changes no role when the move is refused", async () => {
    const { data } = await create(virtual("/music"));
    await create(virtual("/taken"));
    await fixture.db
      .insert(roles)
      .values({ name: "listeners", permissionScopes: [{ path: "/music/jazz", permission: 1 }] });
    expect((await update({ ...virtual("/taken"), id: data.id })).code).toBe(400);
    expect(await scopesOf("listeners")).toEqual([{ path: "/music/jazz", permission: 1 }]);
  });
});
