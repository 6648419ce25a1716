// The settings page's reset button (setting/default) and the cloud-drive tools' Save buttons on the
// Other page (set_115 and the rest), as the web UI calls them.
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settings } from "../../db/schema.ts";
import { settingDefinitionByKey } from "../../db/settings.ts";
import { signInAdmin, signInMember } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type Envelope, type UnitFixture } from "../../../test/support/unit.ts";
import { CLOUD_DRIVE_TOOLS } from "./rules.ts";

let fixture: UnitFixture;
let admin: string;

beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture?.close());

const { post } = api(
  () => fixture,
  () => admin,
);
const stored = async (keys: string[]) =>
  Object.fromEntries(
    (await fixture.db.select().from(settings).where(inArray(settings.key, keys))).map((row) => [row.key, row.value]),
  );

describe("POST /api/admin/setting/default", () => {
  it("answers the group's settings with their default values and writes nothing; Save then writes them", async () => {
    const keys = ["site_title", "announcement", "allow_indexed", "version", "default_role"];
    expect(
      (
        await post("/api/admin/setting/save", [
          { key: "site_title", value: "Changed" },
          { key: "announcement", value: "changed" },
          { key: "allow_indexed", value: "true" },
        ])
      ).code,
    ).toBe(200);
    const before = await stored(keys);

    const reply = await post("/api/admin/setting/default?group=1");
    expect(reply.code).toBe(200);
    const items = new Map((reply.data as { key: string; value: string }[]).map((item) => [item.key, item]));
    expect(items.get("site_title")).toMatchObject({ value: settingDefinitionByKey.get("site_title")!.value, group: 1 });
    expect(items.get("announcement")?.value).toBe(settingDefinitionByKey.get("announcement")!.value);
    expect(items.get("allow_indexed")?.value).toBe("false");
    // Read-only: the stored value. default_role (its default, the guest role's id) shown by name, as the list shows it.
    expect(items.get("version")).toMatchObject({ value: before.version, flag: 2 });
    const list = (await (
      await fixture.request("/api/admin/setting/list?group=1", { headers: { Authorization: admin } })
    ).json()) as Envelope;
    const listed = list.data as { key: string; value: string }[];
    expect(items.get("default_role")).toEqual(listed.find((item) => item.key === "default_role"));
    expect(items.get("default_role")?.value).toBe("guest");
    // Only group 1, in the list's order.
    expect([...items.keys()]).toEqual(listed.map((item) => item.key));
    // Nothing written.
    expect(await stored(keys)).toEqual(before);

    // The page's Save sends the items back: now the defaults are stored.
    expect((await post("/api/admin/setting/save", reply.data)).code).toBe(200);
    expect(await stored(["site_title", "announcement", "allow_indexed"])).toEqual({
      site_title: settingDefinitionByKey.get("site_title")!.value,
      announcement: settingDefinitionByKey.get("announcement")!.value,
      allow_indexed: "false",
    });
  });

  it("keeps the permanent token: its default is drawn per install", async () => {
    const [token] = await fixture.db.select().from(settings).where(eq(settings.key, "token"));
    const reply = await post("/api/admin/setting/default?group=0");
    expect(reply.code).toBe(200);
    expect((reply.data as { key: string; value: string }[]).find((item) => item.key === "token")?.value).toBe(
      token!.value,
    );
  });

  it("takes several groups, and refuses a group list that is not numbers", async () => {
    const reply = await post("/api/admin/setting/default?groups=5,0");
    expect(new Set((reply.data as { group: number }[]).map((item) => item.group))).toEqual(new Set([5, 0]));
    expect(await post("/api/admin/setting/default?group=site")).toMatchObject({ code: 400, data: null });
  });

  it("is for admins only", async () => {
    const member = await signInMember(fixture, "defaults-member", [{ path: "/", permission: 0 }]);
    expect(await post("/api/admin/setting/default?group=1", undefined, member)).toEqual({
      code: 403,
      message: "You are not an admin",
      data: null,
    });
  });
});

describe("the cloud-drive offline-download tools", () => {
  it.each(Object.entries(CLOUD_DRIVE_TOOLS))(
    "%s is refused naming its driver, and saves nothing",
    async (name, tool) => {
      const before = await fixture.db.select().from(settings);
      expect(await post(`/api/admin/setting/${name}`, { temp_dir: "/tmp", callback_url: "" })).toEqual({
        code: 400,
        message: `${tool} offline download is not available: it runs through the ${tool} storage driver, which Gatehouse does not have at the edge`,
        data: null,
      });
      expect(await fixture.db.select().from(settings)).toEqual(before);
    },
  );

  it("answers the Other page's nine tools, and no more, from one table", () => {
    expect(Object.keys(CLOUD_DRIVE_TOOLS).sort()).toEqual(
      [
        "set_115",
        "set_115_open",
        "set_123_open",
        "set_123_pan",
        "set_guangyapan",
        "set_pikpak",
        "set_thunder",
        "set_thunder_browser",
        "set_thunderx",
      ].sort(),
    );
  });
});
