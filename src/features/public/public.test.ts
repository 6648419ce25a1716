import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PUBLIC_SETTINGS_TTL_MS } from "../settings/store.ts";
import { postJson, signInAdmin } from "../../../test/support/auth.ts";
import { settings } from "../../db/schema.ts";
import { SETTING_DEFINITIONS } from "../../db/settings.ts";
import { createUnitFixture, readEnvelope, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
beforeAll(async () => (fixture = await createUnitFixture()));
afterAll(() => fixture.close());

describe("GET /ping", () => {
  it("answers plain pong", async () => {
    const response = await fixture.request("/ping");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await response.text()).toBe("pong");
  });
});

describe("GET /api/public/settings", () => {
  it("returns every public and read-only setting as strings, with AList's version and page size", async () => {
    const response = await fixture.request("/api/public/settings");
    expect(response.status).toBe(200);
    const body = await readEnvelope(response);
    expect(body.code).toBe(200);
    expect(body.message).toBe("success");
    const data = body.data as Record<string, string>;

    const expectedKeys = SETTING_DEFINITIONS.filter((d) => d.flag === 0 || d.flag === 2)
      .map((d) => d.key)
      .sort();
    expect(Object.keys(data)).toEqual(expectedKeys);
    // 43 public keys on a fresh AList v3.58.0 install (internal/bootstrap/data/setting.go:87), and
    // OpenList's for the chunked upload API and the share dialog that the served web UI reads.
    const openListKeys = [
      "multipart_chunk_size",
      "multipart_enabled",
      "share_summary_content",
      "share_preview",
      "share_archive_preview",
      "share_force_proxy",
      "share_preview_download_by_default",
      "share_preview_archives_by_default",
    ];
    expect(expectedKeys.filter((key) => !openListKeys.includes(key))).toHaveLength(43);
    expect(expectedKeys).toEqual(expect.arrayContaining(openListKeys));
    expect(Object.values(data).every((value) => typeof value === "string")).toBe(true);
    expect(data.version).toBe("v3.58.0");
    expect(data.default_page_size).toBe("50");
    expect(data.thumbnail_size).toBe("144");
    expect(data.site_title).toBe("AList");
    expect(data.device_session_ttl).toBe("86400");
    expect(JSON.parse(data.iframe_previews!)).toHaveProperty("pdf");
  });

  it("gives the web UI OpenList's share settings with OpenList's defaults", async () => {
    const data = (await readEnvelope(await fixture.request("/api/public/settings"))).data as Record<string, string>;
    expect({
      share_preview: data.share_preview,
      share_archive_preview: data.share_archive_preview,
      share_force_proxy: data.share_force_proxy,
      share_preview_download_by_default: data.share_preview_download_by_default,
      share_preview_archives_by_default: data.share_preview_archives_by_default,
    }).toEqual({
      share_preview: "false",
      share_archive_preview: "false",
      share_force_proxy: "true",
      share_preview_download_by_default: "true",
      share_preview_archives_by_default: "false",
    });
  });

  it("never shows private settings such as the permanent token", async () => {
    const data = (await readEnvelope(await fixture.request("/api/public/settings"))).data as Record<string, string>;
    for (const key of [
      "token",
      "aria2_uri",
      "aria2_secret",
      "qbittorrent_url",
      "privacy_regs",
      "customize_head",
      "sso_client_secret",
    ]) {
      expect(data).not.toHaveProperty(key);
    }
    const [token] = await fixture.db.select().from(settings).where(eq(settings.key, "token"));
    expect(JSON.stringify(data)).not.toContain(token!.value);
  });

  const siteTitle = async () =>
    ((await readEnvelope(await fixture.request("/api/public/settings"))).data as Record<string, string>).site_title;

  it("shows a setting saved through the API on the next request", async () => {
    expect(await siteTitle()).not.toBe("Saved Files");
    const admin = await signInAdmin(fixture);
    expect(
      await readEnvelope(
        await postJson(fixture, "/api/admin/setting/save", [{ key: "site_title", value: "Saved Files" }], {
          Authorization: admin,
        }),
      ),
    ).toMatchObject({ code: 200 });
    expect(await siteTitle()).toBe("Saved Files");
  });

  it("is kept by the isolate for a few seconds: a change made behind its back shows once they pass", async () => {
    expect(await siteTitle()).toBe("Saved Files");
    await fixture.db.update(settings).set({ value: "My Files" }).where(eq(settings.key, "site_title"));
    expect(await siteTitle()).toBe("Saved Files");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + PUBLIC_SETTINGS_TTL_MS + 1 });
    try {
      expect(await siteTitle()).toBe("My Files");
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("web UI bootstrap lists", () => {
  it("/api/public/archive_extensions lists what Gatehouse can open: ZIP only", async () => {
    expect(await readEnvelope(await fixture.request("/api/public/archive_extensions"))).toEqual({
      code: 200,
      message: "success",
      data: [".zip"],
    });
  });

  it("/api/public/offline_download_tools answers the HTTP tool, whatever path is asked", async () => {
    expect(await readEnvelope(await fixture.request("/api/public/offline_download_tools?path=%2Fs3"))).toEqual({
      code: 200,
      message: "success",
      data: ["SimpleHttp"],
    });
  });
});
