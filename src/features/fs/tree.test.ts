// The mount tree's longest match on its own: under nested mounts the deepest mount serves a path,
// whatever order the storage rows come in; a mount path holds only whole segments below it.
import { describe, expect, it } from "vitest";
import { resolveStorage, type StorageRow } from "./tree.ts";

const row = (id: number, mountPath: string, disabled = false) => ({ id, mountPath, disabled }) as StorageRow;

describe("resolveStorage", () => {
  const outer = row(1, "/a");
  const inner = row(2, "/a/b");
  it.each([
    ["outer row first", [outer, inner]],
    ["inner row first", [inner, outer]],
  ])("gives a path under nested mounts to the deepest one (%s)", (_, rows) => {
    expect(resolveStorage(rows, "/a/b/c.txt")).toEqual({ storage: inner, actualPath: "/c.txt" });
    expect(resolveStorage(rows, "/a/b")).toEqual({ storage: inner, actualPath: "/" });
    expect(resolveStorage(rows, "/a/bc")).toEqual({ storage: outer, actualPath: "/bc" });
    expect(resolveStorage(rows, "/a")).toEqual({ storage: outer, actualPath: "/" });
  });

  it("skips a disabled mount for the one above it, and finds none outside every mount", () => {
    expect(resolveStorage([outer, row(3, "/a/b", true)], "/a/b/c.txt")).toEqual({
      storage: outer,
      actualPath: "/b/c.txt",
    });
    expect(resolveStorage([outer, inner], "/ab")).toBeNull();
  });
});
