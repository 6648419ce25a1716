// The Alias driver (src/drivers/alias.ts) read through the file API in Node, over Virtual storages:
// one target shown directly, several merged by name, an alias that shows itself, and the metas of
// its targets (passwords, hide patterns, a hidden parent) holding through it.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { settings, storages } from "../../db/schema.ts";
import type { UnitFixture } from "../../../test/support/unit.ts";
import { clearReads, readsAs, setUpReads } from "./unit-fixture.ts";

let fixture: UnitFixture;
let admin: string;
let token: string;

const { post, list, get, mount, member, signOf } = readsAs(
  () => fixture,
  () => admin,
  () => token,
);

beforeAll(async () => {
  ({ fixture, admin, token } = await setUpReads());
});
afterAll(() => fixture.close());
beforeEach(() => clearReads(fixture));

describe("Alias", () => {
  async function alias(mountPath: string, paths: string) {
    await fixture.db.insert(storages).values({
      mountPath,
      driver: "Alias",
      status: "work",
      addition: JSON.stringify({ paths }),
      modifiedAtMs: Date.UTC(2026, 2, 1),
    });
  }

  it("shows one target's content directly, and reaches its files through /d", async () => {
    await mount("/v");
    await alias("/al", "/v");
    const direct = (await list("/v")).data.content.map((e: any) => e.name);
    const through = await list("/al");
    expect(through.data.provider).toBe("Alias");
    expect(through.data.content.map((e: any) => e.name)).toEqual(direct);
    const file = through.data.content.find((e: any) => !e.is_dir);
    expect(file.path).toBe(`/${file.name}`);
    const viaAlias = await fixture.request(`/d/al/${file.name}?sign=${signOf(`/al/${file.name}`)}`);
    const viaTarget = await fixture.request(`/d/v/${file.name}?sign=${signOf(`/v/${file.name}`)}`);
    expect(new Uint8Array(await viaAlias.arrayBuffer())).toEqual(new Uint8Array(await viaTarget.arrayBuffer()));
  });

  it("shows one folder per name with several names, and merges the targets of a name", async () => {
    await mount("/v1", { num_file: 2, num_folder: 0 });
    await mount("/v2", { num_file: 2, num_folder: 0 });
    await alias("/al", "one:/v1\nboth:/v1\nboth:/v2");
    expect((await list("/al")).data.content.map((e: any) => e.name)).toEqual(["one", "both"]);
    expect((await list("/al/both")).data.content).toHaveLength(4);
    expect((await list("/al/none")).code).toBe(500);
  });

  it("stops an alias that shows itself with a clear error", async () => {
    await alias("/loop", "/loop");
    expect(await list("/loop")).toEqual({
      code: 500,
      message: "more than 8 aliases in a row (does an alias show itself?)",
      data: null,
    });
  });
});

describe("Alias: the metas of its targets hold through it", () => {
  const alias = (mountPath: string, paths: string) =>
    fixture.db.insert(storages).values({
      mountPath,
      driver: "Alias",
      status: "work",
      addition: JSON.stringify({ paths }),
      modifiedAtMs: Date.UTC(2026, 2, 1),
    });
  const createMeta = (meta: Record<string, unknown>) => post("/api/admin/meta/create", meta);

  it("refuses a password-guarded target without its password through list, get and dirs, and signs its files", async () => {
    await mount("/v", { num_file: 2, num_folder: 1 });
    await alias("/al", "/v");
    await fixture.db.update(settings).set({ value: "false" }).where(eq(settings.key, "sign_all"));
    try {
      const content = (await list("/v")).data.content;
      const file = content.find((e: any) => !e.is_dir).name as string;
      const folder = content.find((e: any) => e.is_dir).name as string;
      expect((await createMeta({ path: "/v", password: "pw", p_sub: true, readme: "the target's read-me" })).code).toBe(
        200,
      );
      const reader = await member("alias-reader", [{ path: "/", permission: 0 }]);
      const refused = { code: 403, message: "password is incorrect or you have no permission", data: null };
      expect(await list("/al", {}, reader)).toEqual(refused);
      expect(await list(`/al/${folder}`, {}, reader)).toEqual(refused);
      expect(await get(`/al/${file}`, {}, reader)).toEqual(refused);
      expect(await post("/api/fs/dirs", { path: "/al" }, reader)).toEqual(refused);
      // With the target's password: its listing, its read-me, and a sign on each file, as named directly.
      const opened = await list("/al", { password: "pw" }, reader);
      expect(opened.data).toMatchObject({ readme: "the target's read-me", provider: "Alias" });
      expect(opened.data.content.find((e: any) => e.name === file).sign).toBe(signOf(`/al/${file}`));
      const got = await get(`/al/${file}`, { password: "pw" }, reader);
      expect(got.data.sign).toBe(signOf(`/al/${file}`));
      expect(got.data.raw_url).toBe(`http://localhost/p/al/${file}?sign=${signOf(`/al/${file}`)}`);
      // /d needs that sign, as the target's own links do.
      expect(await (await fixture.request(`/d/al/${file}`)).json()).toEqual({
        code: 401,
        message: "expire missing",
        data: null,
      });
      expect(await (await fixture.request(`/d/al/${file}?sign=${signOf(`/al/${folder}`)}`)).json()).toEqual({
        code: 401,
        message: "sign invalid",
        data: null,
      });
      expect((await fixture.request(`/d/al/${file}?sign=${signOf(`/al/${file}`)}`)).headers.get("content-length")).toBe(
        String(content.find((e: any) => e.name === file).size),
      );
      // The admin skips passwords here as on the target.
      expect((await list("/al")).code).toBe(200);
    } finally {
      await fixture.db.update(settings).set({ value: "true" }).where(eq(settings.key, "sign_all"));
    }
  });

  it("hides what the target's metas hide, and refuses a hidden name, except to see-hides holders", async () => {
    await mount("/v", { num_file: 3, num_folder: 0 });
    await alias("/al", "/v");
    const names: string[] = (await list("/v")).data.content.map((e: any) => e.name);
    expect((await createMeta({ path: "/v", hide: `^${names[0]}$` })).code).toBe(200);
    const reader = await member("alias-hal", [{ path: "/", permission: 0 }]);
    expect((await list("/al", {}, reader)).data.content.map((e: any) => e.name)).toEqual(names.slice(1));
    expect((await get(`/al/${names[0]}`, {}, reader)).code).toBe(403);
    const seer = await member("alias-seer", [{ path: "/", permission: 1 }]);
    expect((await list("/al", {}, seer)).data.content).toHaveLength(3);
    expect((await get(`/al/${names[0]}`, {}, seer)).code).toBe(200);
    // /d and /p know no caller: with sign_all off, the hidden target still needs the sign only a
    // see-hides holder is given, through the alias as named directly.
    await fixture.db.update(settings).set({ value: "false" }).where(eq(settings.key, "sign_all"));
    try {
      // (This alias's storage allows no /p; /d serves its bytes.)
      const hidden = await fixture.request(`/d/al/${names[0]}`);
      expect(await hidden.json()).toEqual({ code: 401, message: "expire missing", data: null });
      expect((await fixture.request(`/d/al/${names[1]}`)).status).toBe(200);
      const signed = (await get(`/al/${names[0]}`, {}, seer)).data.sign;
      expect(signed).toBe(signOf(`/al/${names[0]}`));
      expect((await fixture.request(`/d/al/${names[0]}?sign=${signed}`)).status).toBe(200);
    } finally {
      await fixture.db.update(settings).set({ value: "true" }).where(eq(settings.key, "sign_all"));
    }
  });

  it("refuses a target its parent's meta hides, through an alias of an alias too", async () => {
    await mount("/v", { num_file: 2, num_folder: 0 });
    await alias("/al", "/v");
    await alias("/al2", "/al");
    expect((await createMeta({ path: "/", hide: "^v$" })).code).toBe(200);
    const reader = await member("alias-deep", [{ path: "/", permission: 0 }]);
    expect((await list("/al", {}, reader)).code).toBe(403);
    expect((await list("/al2", {}, reader)).code).toBe(403);
    expect((await list("/al2")).data.content).toHaveLength(2);
  });
});
