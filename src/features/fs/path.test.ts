// The one path module of the file side, attacked directly (docs/decisions.md D8.1, D8.3): no
// spelling of a request path leaves the base path, prefixes respect segment boundaries, names are
// checked, download paths are decoded exactly once, a subtree is exactly its range of bytes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeDownloadPath, escapePath, isValidName, isWithin, joinBasePath, subtreeRange } from "./path.ts";

describe("joinBasePath", () => {
  it.each([
    ["/", "/"],
    ["", "/"],
    ["docs", "/docs"],
    ["/docs/", "/docs"],
    ["//docs//a", "/docs/a"],
    ["/./docs/./a", "/docs/a"],
    ["\\docs\\a", "/docs/a"],
    ["%2e%2e/x", "/%2e%2e/x"],
    ["/a..b", "/a..b"],
    ["/...", "/..."],
  ])("joins %j under /home/bo as %j below it", (request, inside) => {
    expect(joinBasePath("/home/bo", request)).toBe(inside === "/" ? "/home/bo" : `/home/bo${inside}`);
  });

  it.each([
    "..",
    "/..",
    "../x",
    "/a/../../x",
    "/a/..",
    "..\\x",
    "/a\\..\\..\\x",
    "a/b/../../..",
    "x\u0000y",
    "x\ny",
    "\u001b[0m",
  ])("refuses %j", (request) => {
    expect(joinBasePath("/home/bo", request)).toBeNull();
  });

  it("leaves paths alone for a base path of /", () => {
    expect(joinBasePath("/", "/x/y")).toBe("/x/y");
    expect(joinBasePath("/", "/")).toBe("/");
  });

  it("never yields a path outside the base path, for any mix of separators and dots", () => {
    const parts = ["a", ".", "..", "", "\\", "b..", "..c", "%2e", "%2f"];
    for (let n = 0; n < 5000; n++) {
      let request = "";
      for (let i = 0; i < 6; i++)
        request += parts[(n * 7 + i * 13 + ((n >> i) & 3)) % parts.length] + (i % 2 ? "/" : "\\");
      const joined = joinBasePath("/home/bo", request);
      if (joined !== null) expect(isWithin(joined, "/home/bo"), request).toBe(true);
    }
  });
});

describe("isWithin", () => {
  it("holds a path below a prefix on a / boundary only", () => {
    expect(isWithin("/a/b", "/a")).toBe(true);
    expect(isWithin("/a", "/a")).toBe(true);
    expect(isWithin("/ab", "/a")).toBe(false);
    expect(isWithin("/a-b/c", "/a")).toBe(false);
    expect(isWithin("/anything", "/")).toBe(true);
  });
});

describe("names", () => {
  it.each(["", ".", "..", "a/b", "a\\b", "x\u0000y", "tab\there"])("refuses %j", (name) =>
    expect(isValidName(name)).toBe(false),
  );
  it.each(["a..b.txt", "...", ".hidden", "100%.txt", "é ü.txt", "a b", "#1?"])("accepts %j", (name) =>
    expect(isValidName(name)).toBe(true),
  );
});

describe("decodeDownloadPath", () => {
  it("decodes once: a literal %, an encoded %, and encoded slashes", () => {
    expect(decodeDownloadPath("/v/100%.txt")).toBe("/v/100%.txt");
    expect(decodeDownloadPath("/v/100%25.txt")).toBe("/v/100%.txt");
    expect(decodeDownloadPath("/v/a%252Fb")).toBe("/v/a%2Fb");
    expect(decodeDownloadPath("/v/a%2Fb")).toBe("/v/a/b");
    expect(decodeDownloadPath("/v/%C3%A9")).toBe("/v/é");
    expect(decodeDownloadPath("/v/%FF")).toBe("/v/%FF");
  });

  it("climbs no higher than the root of the tree, whatever the spelling", () => {
    for (const raw of ["/../../etc/passwd", "/%2e%2e/%2e%2e/x", "/v/..%2f..%2fx", "/v/%2e%2e%5cx", "/..\\..\\x"]) {
      expect(decodeDownloadPath(raw).startsWith("/"), raw).toBe(true);
      expect(decodeDownloadPath(raw).split("/"), raw).not.toContain("..");
    }
  });
});

describe("escapePath", () => {
  it("escapes each segment as Go's url.PathEscape does", () => {
    expect(escapePath("/a b/c+d/é/x?y#z/$&:=@/100%")).toBe("/a%20b/c+d/%C3%A9/x%3Fy%23z/$&:=@/100%25");
  });
});

describe("subtreeRange", () => {
  // SQLite compares text as UTF-8 bytes (BINARY): the range holds a path exactly when the path is
  // below `path`, whatever the characters (non-ASCII, past U+FFFF, "/"'s neighbours "-", "." and "0").
  const bytes = (text: string) => Buffer.from(text, "utf8");
  const inRange = (candidate: string, { prefix, upper }: { prefix: string; upper: string }) =>
    Buffer.compare(bytes(candidate), bytes(prefix)) >= 0 && Buffer.compare(bytes(candidate), bytes(upper)) < 0;
  const segment = fc.string({
    unit: fc.constantFrom("a", "é", "😀", "-", ".", "0", "/", " ", "z"),
    minLength: 1,
    maxLength: 4,
  });
  const path = fc
    .array(segment, { minLength: 1, maxLength: 3 })
    .map((parts) => `/${parts.join("/")}`.replace(/\/+/g, "/"));

  it("holds the paths below a path, and no other", () => {
    fc.assert(
      fc.property(path, path, (folder, candidate) => {
        if (folder === "/" || folder.endsWith("/")) return;
        expect(inRange(candidate, subtreeRange(folder))).toBe(candidate.startsWith(`${folder}/`));
      }),
      { numRuns: 2000 },
    );
  });

  it("holds every absolute path below the root", () => {
    expect(subtreeRange("/")).toEqual({ prefix: "/", upper: "0" });
    fc.assert(fc.property(path, (candidate) => inRange(candidate, subtreeRange("/"))));
  });
});
