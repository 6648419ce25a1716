// UrlTree's text format (AList v3.58.0 drivers/url_tree/util.go:36) and its storages through the
// file API: every line shape, nesting, the errors a person can act on, and /d answering 302 to the
// node's URL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storages } from "../db/schema.ts";
import { CheckFailed } from "./types.ts";
import { parseUrlTree } from "./url-tree.ts";
import { signInAdmin } from "../../test/support/auth.ts";
import { api, createUnitFixture, type UnitFixture } from "../../test/support/unit.ts";

describe("the url_structure text", () => {
  it("reads bare URLs, name:URL, name:size:URL, name:size:modified:URL and nested folders", () => {
    const tree = parseUrlTree(
      [
        "https://h.test/a/readme%20first.md",
        "docs:",
        "  b.txt:https://h.test:8443/b?x=1",
        "  c.bin:10:https://h.test/c",
        "  deep:",
        "    d.bin:5:1700000000:http://h.test/d",
        "top.txt:7:https://h.test/t",
        "",
      ].join("\r\n"),
    );
    expect(tree.children.map((n) => n.name)).toEqual(["readme first.md", "docs", "top.txt"]);
    const docs = tree.children[1]!;
    expect(docs.children.map((n) => [n.name, n.size, n.modified, n.url])).toEqual([
      ["b.txt", 0, 0, "https://h.test:8443/b?x=1"],
      ["c.bin", 10, 0, "https://h.test/c"],
      ["deep", 5, 0, undefined],
    ]);
    expect(docs.size).toBe(15);
    expect(docs.children[2]!.children[0]).toMatchObject({
      name: "d.bin",
      size: 5,
      modified: 1700000000,
      url: "http://h.test/d",
    });
    expect(tree.size).toBe(22);
  });

  it.each([
    [" odd.txt:https://h.test/x", "url_structure line 1: indented by 1 spaces, not a multiple of 2"],
    ["no-url-here", "url_structure line 1: a file needs an http:// or https:// URL"],
    ["a:b:https://h.test/x", "url_structure line 1: the size must be an integer"],
    ["a:1:soon:https://h.test/x", "url_structure line 1: the modified time (Unix seconds) must be an integer"],
    ["x.txt https://h.test/x", "url_structure line 1: write [name:][size:][modified:]URL"],
    [
      "f:\n    too-deep.txt:https://h.test/x",
      "url_structure line 2: indented deeper than a folder below the line above",
    ],
  ])("refuses %j: %s", (text, message) => {
    expect(() => parseUrlTree(text)).toThrow(new CheckFailed(message));
  });
});

describe("a UrlTree storage", () => {
  let fixture: UnitFixture;
  let admin: string;
  beforeAll(async () => {
    fixture = await createUnitFixture();
    admin = await signInAdmin(fixture);
    await fixture.db.insert(storages).values({
      mountPath: "/links",
      driver: "UrlTree",
      status: "work",
      addition: JSON.stringify({ url_structure: "docs:\n  guide.pdf:2048:1700000000:https://files.example/guide.pdf" }),
      modifiedAtMs: Date.now(),
    });
  });
  afterAll(() => fixture.close());
  const { post } = api(
    () => fixture,
    () => admin,
  );

  it("lists its folders and files, and /d sends the client to the node's URL", async () => {
    const docs = await post("/api/fs/list", { path: "/links/docs" });
    expect(docs.data.content).toEqual([
      expect.objectContaining({
        name: "guide.pdf",
        size: 2048,
        modified: "2023-11-14T22:13:20Z",
        is_dir: false,
        path: "/docs/guide.pdf",
      }),
    ]);
    expect((await post("/api/fs/list", { path: "/links" })).data.content).toEqual([
      expect.objectContaining({ name: "docs", size: 2048, is_dir: true }),
    ]);
    const got = await post("/api/fs/get", { path: "/links/docs/guide.pdf" });
    expect(got.data.raw_url).toBe("https://files.example/guide.pdf");
    const redirect = await fixture.request(`/d/links/docs/guide.pdf?sign=${docs.data.content[0].sign}`);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe("https://files.example/guide.pdf");
    expect(redirect.headers.get("referrer-policy")).toBe("no-referrer");
    expect((await post("/api/fs/list", { path: "/links/docs/guide.pdf" })).message).toBe(
      "failed get objs: not a folder",
    );
    expect((await post("/api/fs/get", { path: "/links/nope" })).message).toBe("object not found");
  });
});
