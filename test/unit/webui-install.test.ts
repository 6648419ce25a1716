// scripts/webui.ts, the install step of the web UI (npm ci's postinstall): it unpacks only a
// tarball that matches the pinned integrity, never leaves half a folder, and skips work already done.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ensureWebUi, WEB_UI_INTEGRITY, WEB_UI_VERSION, webUiDir, WebUiError } from "../../scripts/webui.ts";

let parent: string;
let dir: string;
beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), "gatehouse-webui-"));
  dir = join(parent, "webui");
});
afterEach(() => rmSync(parent, { recursive: true, force: true }));

// Each test runs the install script in a child process (tar, a hash of the tarball): seconds on a
// busy machine, where vitest's 5 s default has cut it off.
describe("the web UI install step", { timeout: 30_000 }, () => {
  it("is already done in this checkout: the pinned version, skipped on a second run", () => {
    const stamp = JSON.parse(readFileSync(join(webUiDir, ".gatehouse-webui.json"), "utf8"));
    expect(stamp).toMatchObject({
      package: "@openlist-frontend/openlist-frontend",
      version: WEB_UI_VERSION,
      integrity: WEB_UI_INTEGRITY,
    });
    expect(readFileSync(join(webUiDir, "VERSION"), "utf8")).toBe(`v${WEB_UI_VERSION}`);
    expect(existsSync(join(webUiDir, "lite"))).toBe(false);
    expect(ensureWebUi()).toBe("present");
  });

  it("refuses a tarball that does not match the pinned integrity, and leaves the old folder whole", () => {
    mkdirSync(dir);
    writeFileSync(join(dir, "index.html"), "previous");
    const wrong = `sha512-${Buffer.alloc(64).toString("base64")}`;
    let error: unknown;
    try {
      ensureWebUi({ dir, integrity: wrong, env: {} });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(WebUiError);
    expect((error as Error).message).toMatch(
      /^@openlist-frontend\/openlist-frontend@4\.2\.6 does not match its pinned integrity\.\n {2}expected sha512-A{86}==\n {2}got {6}sha512-ebWZ.*\nNothing was unpacked\.$/,
    );
    expect(readdirSync(parent)).toEqual(["webui"]);
    expect(readdirSync(dir)).toEqual(["index.html"]);
    expect(readFileSync(join(dir, "index.html"), "utf8")).toBe("previous");
  });

  it("says so when the download fails, and creates nothing", () => {
    expect(() => ensureWebUi({ dir, version: "0.0.0-no-such-version", env: {} })).toThrow(
      /^could not download @openlist-frontend\/openlist-frontend@0\.0\.0-no-such-version from the npm registry \(npm pack exited 1\): [\s\S]*ETARGET/,
    );
    expect(readdirSync(parent)).toEqual([]);
  });

  it("GATEHOUSE_WEB_UI=off leaves an assets folder with only the OpenAPI document and the keys page", () => {
    expect(ensureWebUi({ dir, env: { GATEHOUSE_WEB_UI: "off" } })).toBe("off");
    expect(readdirSync(dir).sort()).toEqual([".assetsignore", ".gatehouse-webui.json", "@keys.html", "api"]);
    expect(readFileSync(join(dir, "@keys.html"), "utf8")).toBe(
      readFileSync("src/features/access-keys/page.html", "utf8"),
    );
    expect(readdirSync(join(dir, "api"))).toEqual(["openapi.json"]);
    expect(JSON.parse(readFileSync(join(dir, "api/openapi.json"), "utf8"))).toEqual(
      JSON.parse(readFileSync("src/generated/openapi.json", "utf8")),
    );
    expect(readFileSync(join(dir, ".assetsignore"), "utf8")).toBe(".gatehouse-webui.json\n");
    expect(ensureWebUi({ dir, env: { GATEHOUSE_WEB_UI: "off" } })).toBe("off");
  });
});
