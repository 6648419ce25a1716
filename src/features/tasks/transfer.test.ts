// How a folder's listing becomes units: subfolders and big files one unit each, small files in
// groups of at most TASK_GROUP_FILES (docs/decisions.md D23.1).
import { describe, expect, it } from "vitest";
import type { Env } from "../../env.ts";
import { childrenOf } from "./transfer.ts";

const MiB = 1024 * 1024;
const copy = { from: "/a/photos", toDir: "/b", name: "photos" };
const entries = [
  { name: "albums", isDir: true, size: 0 },
  { name: "big.mov", isDir: false, size: 9 * MiB },
  ...Array.from({ length: 7 }, (_, i) => ({ name: `p${i}.jpg`, isDir: false, size: 1000 + i })),
];

describe("childrenOf", () => {
  it("puts small files in groups of TASK_GROUP_FILES, subfolders and big files in units of their own", () => {
    const units = childrenOf({ TASK_GROUP_FILES: "3" } as Env, copy, "/b/photos", entries);
    expect(units.map((unit) => unit.kind)).toEqual(["copy", "copy", "files", "files", "files"]);
    expect(units[0]!.payload).toEqual({ from: "/a/photos/albums", toDir: "/b/photos", name: "albums", isDir: true });
    expect(units[1]!.payload).toEqual({
      from: "/a/photos/big.mov",
      toDir: "/b/photos",
      name: "big.mov",
      isDir: false,
      size: 9 * MiB,
    });
    const groups = units
      .slice(2)
      .map((unit) => (unit.payload as { files: { name: string }[] }).files.map((f) => f.name));
    expect(groups).toEqual([["p0.jpg", "p1.jpg", "p2.jpg"], ["p3.jpg", "p4.jpg", "p5.jpg"], ["p6.jpg"]]);
  });

  it("keeps a folder's small files in one group under the default of 50", () => {
    const units = childrenOf({} as Env, copy, "/b/photos", entries);
    expect(units.map((unit) => unit.kind)).toEqual(["copy", "copy", "files"]);
    expect(units[2]!.payload).toMatchObject({ fromDir: "/a/photos", toDir: "/b/photos" });
    expect((units[2]!.payload as { files: unknown[] }).files).toHaveLength(7);
  });

  it("counts a file over the part size as big, whatever its size against 8 MiB", () => {
    const units = childrenOf({ TASK_PART_BYTES: String(5 * MiB) } as Env, copy, "/b/photos", [
      { name: "six.bin", isDir: false, size: 6 * MiB },
    ]);
    expect(units.map((unit) => unit.kind)).toEqual(["copy"]);
  });
});
