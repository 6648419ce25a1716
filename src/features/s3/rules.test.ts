// S3 listings over a tree (rules.ts listPage): key order, folders as common prefixes, pages that
// resume after a key without walking what lies before it, and the operations not built yet.
import { describe, expect, it } from "vitest";
import type { FileObject } from "../../drivers/types.ts";
import { compareKeys, copySourceOf, deleteRequestOf, listPage, operationOf, S3Error } from "./rules.ts";

const file = (name: string): FileObject => ({ name, size: name.length, isDir: false, modified: new Date(0), path: "" });
const dir = (name: string): FileObject => ({ name, size: 0, isDir: true, modified: new Date(0), path: "" });

/** A bucket: `a.txt`, `a/` with `x` and `y/z`, `a-b`, `b`. */
const TREE: Record<string, FileObject[]> = {
  "": [file("b"), dir("a"), file("a.txt"), file("a-b")],
  a: [dir("y"), file("x")],
  "a/y": [file("z")],
};

function lister() {
  const listed: string[] = [];
  const list = async (path: string) => {
    listed.push(path);
    return TREE[path] ?? [];
  };
  return { listed, list };
}

describe("listPage", () => {
  it("walks every folder in S3's key order (a folder `a` sorts as `a/`)", async () => {
    const { list } = lister();
    const page = await listPage({ prefix: "", delimiter: "", maxKeys: 1000, after: "" }, list);
    expect(page.objects.map((o) => o.key)).toEqual(["a-b", "a.txt", "a/x", "a/y/z", "b"]);
    expect(page.truncated).toBe(false);
  });

  it("with delimiter /, one folder: its folders as common prefixes", async () => {
    const { list, listed } = lister();
    const page = await listPage({ prefix: "a", delimiter: "/", maxKeys: 1000, after: "" }, list);
    expect(page.objects.map((o) => o.key)).toEqual(["a-b", "a.txt"]);
    expect(page.prefixes).toEqual(["a/"]);
    expect(listed).toEqual([""]);
  });

  it("pages resume after a key and skip the subtrees before it", async () => {
    const { list, listed } = lister();
    const first = await listPage({ prefix: "", delimiter: "", maxKeys: 2, after: "" }, list);
    expect(first.objects.map((o) => o.key)).toEqual(["a-b", "a.txt"]);
    expect(first).toMatchObject({ truncated: true, last: "a.txt" });
    const second = await listPage({ prefix: "", delimiter: "", maxKeys: 2, after: "a/y/z" }, list);
    expect(second.objects.map((o) => o.key)).toEqual(["b"]);
    listed.length = 0;
    // `a0` sorts after every key under `a/` ("0" follows "/"): that folder is not even listed.
    await listPage({ prefix: "", delimiter: "", maxKeys: 2, after: "a0" }, list);
    expect(listed).toEqual([""]);
  });

  it("a prefix inside a folder walks only that folder", async () => {
    const { list, listed } = lister();
    const page = await listPage({ prefix: "a/y", delimiter: "", maxKeys: 10, after: "" }, list);
    expect(page.objects.map((o) => o.key)).toEqual(["a/y/z"]);
    expect(listed).toEqual(["a", "a/y"]);
  });

  it("compares keys by code point, as S3 compares UTF-8 bytes", () => {
    // U+FF5E sorts before U+1F600 in UTF-8, after it in UTF-16 code units.
    expect(compareKeys("\uff5e", "\u{1f600}")).toBeLessThan(0);
    expect("\uff5e" < "\u{1f600}").toBe(false);
  });
});

describe("operationOf", () => {
  const op = (method: string, bucket: string | null, key: string, query = "", headers: Record<string, string> = {}) =>
    operationOf(method, bucket, key, new URLSearchParams(query), new Headers(headers));
  it("names what is built", () => {
    expect(op("GET", null, "")).toBe("ListBuckets");
    expect(op("GET", "b", "", "list-type=2&prefix=x")).toBe("ListObjectsV2");
    expect(op("GET", "b", "", "marker=x")).toBe("ListObjects");
    expect(op("GET", "b", "k", "x-id=GetObject")).toBe("GetObject");
    expect(op("PUT", "b", "k")).toBe("PutObject");
    expect(op("PUT", "b", "k", "", { "x-amz-copy-source": "/b/j" })).toBe("CopyObject");
    expect(op("POST", "b", "", "delete")).toBe("DeleteObjects");
    expect(op("DELETE", "b", "")).toBe("DeleteBucket");
    // A presigned URL's parameters are its signature: the operation is the method's.
    expect(op("GET", "b", "k", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=00")).toBe("GetObject");
    expect(op("GET", "b", "k", "X-Amz-Signature=00&x-amz-checksum-mode=ENABLED")).toBe("GetObject");
    expect(() => op("PUT", "b", "k", "x-amz-checksum-crc32=AAAAAA%3D%3D")).toThrow(S3Error);
  });
  it("names the multipart operations by method and query (D22.9)", () => {
    expect(op("POST", "b", "k", "uploads")).toBe("CreateMultipartUpload");
    expect(op("PUT", "b", "k", "partNumber=1&uploadId=u")).toBe("UploadPart");
    expect(op("POST", "b", "k", "uploadId=u")).toBe("CompleteMultipartUpload");
    expect(op("DELETE", "b", "k", "uploadId=u")).toBe("AbortMultipartUpload");
    expect(op("GET", "b", "k", "uploadId=u&max-parts=2&part-number-marker=1")).toBe("ListParts");
    expect(op("GET", "b", "", "uploads&prefix=a&max-uploads=3")).toBe("ListMultipartUploads");
  });
  it("refuses what is not, as NotImplemented", () => {
    for (const [method, bucket, key, query, headers] of [
      ["PUT", "b", "k", "partNumber=1&uploadId=u", { "x-amz-copy-source": "/b/j" }],
      ["GET", "b", "k", "partNumber=1", {}],
      ["POST", "b", "", "uploads", {}],
      ["GET", "b", "k", "acl", {}],
    ] as const) {
      expect(() => op(method, bucket, key, query, headers)).toThrow(S3Error);
    }
  });
});

describe("copySourceOf and deleteRequestOf", () => {
  it("reads bucket/key URL-encoded, a leading slash allowed; refuses a bucket alone and a real version", () => {
    expect(copySourceOf("/b/a%20b/c.txt")).toEqual({ bucket: "b", key: "a b/c.txt" });
    expect(copySourceOf("b/k?versionId=null")).toEqual({ bucket: "b", key: "k" });
    expect(() => copySourceOf("b")).toThrow(S3Error);
    expect(() => copySourceOf("b/k?versionId=3")).toThrow(S3Error);
  });
  it("reads the Delete body's keys and Quiet; refuses another root, no key, and more than 1,000", () => {
    const key = (k: string) => ({
      ns: "",
      local: "Object",
      attributes: [],
      children: [{ ns: "", local: "Key", attributes: [], children: [k] }],
    });
    const quiet = { ns: "", local: "Quiet", attributes: [], children: ["true"] };
    expect(
      deleteRequestOf({ ns: "", local: "Delete", attributes: [], children: [quiet, key("a"), "\n", key("b/c")] }),
    ).toEqual({
      keys: ["a", "b/c"],
      quiet: true,
    });
    expect(() => deleteRequestOf({ ns: "", local: "Other", attributes: [], children: [key("a")] })).toThrow(S3Error);
    expect(() => deleteRequestOf({ ns: "", local: "Delete", attributes: [], children: [] })).toThrow(S3Error);
    const many = Array.from({ length: 1001 }, (_, i) => key(String(i)));
    expect(() => deleteRequestOf({ ns: "", local: "Delete", attributes: [], children: many })).toThrow(S3Error);
  });
});
