// The decisions of share links over plain inputs: which path a request names inside a share (and
// that none leads out), who may share what, ids, expiry and the stored code. The routes themselves
// run in shares.workerd.test.ts against real storages.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../http/errors.ts";
import type { Viewer } from "../fs/rules.ts";
import {
  expiresAt,
  mayShare,
  randomId,
  requireMayShare,
  requireValidId,
  SHARE,
  SHARE_CUSTOM_ID,
  ShareError,
  sharedPaths,
  sharePathOf,
  sharingBits,
  storedCode,
  targetOf,
} from "./rules.ts";
import type { ShareRow } from "./store.ts";

const share = (files: string[]): ShareRow => ({
  id: "abc",
  creatorId: 2,
  files,
  expiresAtMs: null,
  codeHash: "",
  accessed: 0,
  maxAccessed: 0,
  disabled: false,
  remark: "",
  readme: "",
  header: "",
  orderBy: "",
  orderDirection: "",
  extractFolder: "",
});

const viewer = (scopes: Record<string, number>, basePath = "/", userPermission = 0): Viewer => ({
  grants: { scopes: Object.entries(scopes).map(([path, permission]) => ({ path, permission })), userPermission },
  basePath,
});

describe("paths inside a share", () => {
  it("reads the share id and the rest from /@s/<id>/<rest>, and nothing from /@sX", () => {
    expect(sharePathOf("/@s/abc/x/y")).toEqual({ id: "abc", rest: "/x/y" });
    expect(sharePathOf("/@s/abc")).toEqual({ id: "abc", rest: "/" });
    expect(sharePathOf("/@s")).toEqual({ id: "", rest: "/" });
    expect(sharePathOf("/@sabc/x")).toBeNull();
    expect(sharePathOf("/movies/@s/abc")).toBeNull();
  });

  it("maps a one-item share's paths below its item, and refuses every way up", () => {
    const one = share(["/team/a"]);
    expect(targetOf(one, "/")).toEqual({ root: false, path: "/team/a", item: "/team/a" });
    expect(targetOf(one, "/sub//x.txt")).toEqual({ root: false, path: "/team/a/sub/x.txt", item: "/team/a" });
    expect(targetOf(one, "\\sub\\x.txt")).toMatchObject({ path: "/team/a/sub/x.txt" });
    for (const rest of ["/..", "/../ab", "/sub/../../ab", "\\..\\ab", "/..\\ab", "/x\u0000"])
      expect(() => targetOf(one, rest), rest).toThrow(ShareError);
  });

  it("names a multi-item share's items by their names, exactly", () => {
    const many = share(["/team/a", "/docs/report.pdf"]);
    expect(targetOf(many, "/")).toEqual({ root: true });
    expect(targetOf(many, "/report.pdf")).toMatchObject({ path: "/docs/report.pdf" });
    expect(targetOf(many, "/a/x")).toMatchObject({ path: "/team/a/x" });
    expect(() => targetOf(many, "/ab")).toThrow("object not found");
    expect(() => targetOf(many, "/a/../../team/ab")).toThrow("object not found");
  });
});

describe("who may share", () => {
  it("needs the share bit at the path, inside the base path, on a separator", () => {
    const alice = viewer({ "/team/a": SHARE }, "/team");
    expect(mayShare(alice, "/team/a")).toBe(true);
    expect(mayShare(alice, "/team/a/x")).toBe(true);
    expect(mayShare(alice, "/team/ab")).toBe(false);
    expect(mayShare(alice, "/team")).toBe(false);
    expect(mayShare(viewer({ "/": SHARE }, "/team/a"), "/team/ab")).toBe(false);
    expect(mayShare(viewer({ "/team/a": 0xffff & ~SHARE }), "/team/a")).toBe(false);
  });

  it("refuses without the bit anywhere, outside it, and a chosen id without bit 15", () => {
    expect(() => requireMayShare(viewer({ "/": 0 }), ["/x"], false)).toThrow("permission denied");
    expect(() => requireMayShare(viewer({ "/a": SHARE }), ["/b"], false)).toThrow(
      "permission denied to share path [/b]",
    );
    expect(() => requireMayShare(viewer({ "/a": SHARE }), ["/a"], true)).toThrow("permission denied");
    expect(() => requireMayShare(viewer({ "/a": SHARE | SHARE_CUSTOM_ID }), ["/a"], true)).not.toThrow();
  });

  it("reports the sharing bits of any scope for /api/me", () => {
    expect(sharingBits([{ permissionScopes: [{ path: "/a", permission: SHARE | 8 }] }])).toBe(SHARE);
    expect(sharingBits([{ permissionScopes: [{ path: "/", permission: 0xffff }] }])).toBe(SHARE | SHARE_CUSTOM_ID);
    expect(sharingBits([])).toBe(0);
  });
});

describe("what a share is made of", () => {
  it("cleans the paths, needs one, and refuses two items of one name", () => {
    expect(sharedPaths(["/a//b/", "\\c\\d", "/a/b"])).toEqual(["/a/b", "/c/d"]);
    expect(() => sharedPaths([])).toThrow("must add at least 1 object");
    expect(() => sharedPaths([""])).toThrow("must add at least 1 object");
    expect(() => sharedPaths(["/x/a", "/y/a"])).toThrow("two shared items have the same name [a]");
  });

  it("takes chosen ids of letters, digits, _, - and Han characters, up to 64", () => {
    for (const id of ["team-a", "a_b", "共享", "x".repeat(64)]) expect(() => requireValidId(id)).not.toThrow();
    for (const id of ["a/b", "a b", "..", "x".repeat(65), "é"]) expect(() => requireValidId(id), id).toThrow(ApiError);
    expect(randomId(8)).toMatch(/^[A-Za-z0-9]{8}$/);
  });

  it("reads expires as RFC 3339 or null, and refuses anything else", () => {
    expect(expiresAt(null)).toBeNull();
    expect(expiresAt("")).toBeNull();
    expect(expiresAt("0001-01-01T00:00:00Z")).toBeNull();
    expect(expiresAt("2099-01-02T03:04:05.000Z")).toBe(Date.UTC(2099, 0, 2, 3, 4, 5));
    expect(() => expiresAt("tomorrow")).toThrow("expires must be an RFC 3339 time or null");
  });

  it("hashes a new code, keeps a stored one posted back, and forgets it otherwise", async () => {
    const stored = await storedCode("1234", undefined);
    expect(stored).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(stored).not.toContain("1234");
    expect(await storedCode("", stored)).toBe(stored);
    expect(await storedCode("", "1234")).toBe("");
    expect(await storedCode("", undefined)).toBe("");
  });
});
