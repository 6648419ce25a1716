// presaveSplit decides which values of a save the guard's batch may write before the stored values
// are known (store.ts settingsSave): only those valid whatever is stored.
import { describe, expect, it } from "vitest";
import { SETTING_DEFINITIONS } from "../../db/settings.ts";
import { presaveSplit, settingChanges } from "./validate.ts";

describe("presaveSplit", () => {
  it("writes at once the values valid whatever is stored; the rest must stand as stored, the default role is checked apart", () => {
    expect(
      presaveSplit([
        { key: "site_title", value: "Mine" },
        { key: "allow_indexed", value: "true" },
        { key: "allow_mounted", value: "maybe" }, // refused unless it is what is stored
        { key: "version", value: "v3.58.0" }, // read-only: accepted unchanged only
        { key: "default_role", value: "general" }, // a role name, checked against the roles in SQL
      ]),
    ).toEqual({
      sure: [
        { key: "site_title", value: "Mine" },
        { key: "allow_indexed", value: "true" },
      ],
      mustStand: [
        { key: "allow_mounted", value: "maybe" },
        { key: "version", value: "v3.58.0" },
      ],
      defaultRole: "general",
    });
  });

  it("writes nothing at once for an unknown or repeated key, or for too many values that must stand", () => {
    expect(
      presaveSplit([
        { key: "site_title", value: "a" },
        { key: "no_such_key", value: "b" },
      ]),
    ).toBeNull();
    expect(
      presaveSplit([
        { key: "site_title", value: "a" },
        { key: "site_title", value: "b" },
      ]),
    ).toBeNull();
    const refused = SETTING_DEFINITIONS.filter(({ type }) => type === "bool" || type === "number").map(({ key }) => ({
      key,
      value: "neither",
    }));
    expect(refused.length).toBeGreaterThan(32);
    expect(presaveSplit(refused.slice(0, 32))).toEqual({
      sure: [],
      mustStand: refused.slice(0, 32),
      defaultRole: undefined,
    });
    expect(presaveSplit(refused.slice(0, 33))).toBeNull();
  });
});

describe("multipart_chunk_size", () => {
  it("takes a whole number of MiB from 1 to 95 (under Cloudflare's 100 MB body limit), and refuses the rest naming the key", () => {
    const stored = new Map([["multipart_chunk_size", "16"]]);
    for (const value of ["1", "5", "95"])
      expect(settingChanges([{ key: "multipart_chunk_size", value }], stored, [])).toEqual([
        { key: "multipart_chunk_size", value },
      ]);
    expect(() => settingChanges([{ key: "multipart_chunk_size", value: "ten" }], stored, [])).toThrow(
      "multipart_chunk_size: must be a number",
    );
    for (const value of ["0", "96", "1.5", "-1"])
      expect(() => settingChanges([{ key: "multipart_chunk_size", value }], stored, [])).toThrow(
        "multipart_chunk_size: must be a whole number of MiB from 1 to 95",
      );
  });
});
