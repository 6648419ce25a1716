// The WebDAV server's protocol pieces on their own: the If header (RFC 4918 §10.4) and the rule a
// lock imposes, the Timeout header, Basic credentials, and the XML reader (well-formedness, no
// DOCTYPE, namespaces resolved whatever the prefix) and writer (a dead property reads back the same),
// and the status each kind of file-side failure is answered with.
import { describe, expect, it } from "vitest";
import { ApiError, FileError, type FileErrorKind } from "../../http/errors.ts";
import { credentialsOf } from "./auth.ts";
import {
  BadIfHeader,
  blockingLock,
  davPathOf,
  DavError,
  depthOf,
  destinationOf,
  ifHolds,
  lockTimeout,
  parseIf,
  submittedTokens,
} from "./rules.ts";
import { errorReply } from "./server.ts";
import type { LockRow } from "./store.ts";
import { BadXml, clarkName, parseXml, serialize } from "./xml.ts";

const lock = (token: string, path: string, depth: 0 | -1, userId = 1): LockRow => ({
  token,
  path,
  depth,
  exclusive: true,
  owner: "",
  userId,
  timeoutSeconds: 60,
  expiresAt: 0,
});

describe("the If header", () => {
  it("reads untagged and tagged lists, Not, state tokens and entity tags", () => {
    expect(parseIf('(<urn:uuid:a> ["e1"]) (Not <DAV:no-lock>)')).toEqual([
      {
        resource: null,
        conditions: [
          { not: false, token: "urn:uuid:a" },
          { not: false, etag: '"e1"' },
        ],
      },
      { resource: null, conditions: [{ not: true, token: "DAV:no-lock" }] },
    ]);
    expect(parseIf("<http://h/dav/a> (<urn:uuid:a>) <http://h/dav/b> (NOT <urn:uuid:b>)")).toEqual([
      { resource: "http://h/dav/a", conditions: [{ not: false, token: "urn:uuid:a" }] },
      { resource: "http://h/dav/b", conditions: [{ not: true, token: "urn:uuid:b" }] },
    ]);
    expect(parseIf(null)).toEqual([]);
  });

  it.each([
    "(<unclosed",
    "()",
    "urn:uuid:a",
    "(<a>) <http://h/x> (<b>)",
    "<http://h/x>",
    "(Nothing <a>)",
    '(["unclosed)',
  ])("refuses %s", (header) => {
    expect(() => parseIf(header)).toThrow(BadIfHeader);
  });

  it("holds when one list holds: tokens of locks covering the resource, entity tags, Not", () => {
    const locks = [lock("urn:uuid:a", "/docs", -1)];
    const holds = (header: string, path = "/docs/f.txt") =>
      ifHolds(
        parseIf(header),
        locks,
        path,
        (href) => new URL(href).pathname,
        () => '"e1"',
      );
    expect(holds("(<urn:uuid:a>)")).toBe(true);
    expect(holds("(<urn:uuid:a>)", "/other")).toBe(false);
    expect(holds('(<urn:uuid:a> ["e2"])')).toBe(false);
    expect(holds('(<urn:uuid:a> ["e1"])')).toBe(true);
    expect(holds("(<urn:uuid:wrong>) (Not <DAV:no-lock>)")).toBe(true);
    expect(holds("(<DAV:no-lock>)")).toBe(false);
    expect(holds("<http://h/docs> (<urn:uuid:a>)", "/elsewhere")).toBe(true);
  });

  it("submits the tokens it names, except under Not", () => {
    expect([
      ...submittedTokens(parseIf("<http://h/y> (<urn:uuid:a>) (Not <urn:uuid:b>) <http://h/x> (<urn:uuid:c>)")),
    ]).toEqual(["urn:uuid:a", "urn:uuid:c"]);
  });
});

describe("what a lock blocks", () => {
  const locks = [lock("urn:uuid:deep", "/a", -1), lock("urn:uuid:flat", "/b", 0), lock("urn:uuid:below", "/c/d/e", 0)];
  it("blocks the locked resource, what lies under a depth-infinity lock, and a tree holding a lock", () => {
    const none = new Set<string>();
    expect(blockingLock(locks, "/a/x/y", false, none, 1)?.token).toBe("urn:uuid:deep");
    expect(blockingLock(locks, "/b", false, none, 1)?.token).toBe("urn:uuid:flat");
    expect(blockingLock(locks, "/b/x", false, none, 1)).toBeNull();
    expect(blockingLock(locks, "/c", false, none, 1)).toBeNull();
    expect(blockingLock(locks, "/c", true, none, 1)?.token).toBe("urn:uuid:below");
    expect(blockingLock(locks, "/ab", true, none, 1)).toBeNull();
  });
  it("lets the owner through with the token, never another user with it", () => {
    expect(blockingLock(locks, "/a/x", false, new Set(["urn:uuid:deep"]), 1)).toBeNull();
    expect(blockingLock(locks, "/a/x", false, new Set(["urn:uuid:deep"]), 2)?.token).toBe("urn:uuid:deep");
  });
});

describe("Timeout", () => {
  it.each([
    [null, 3600],
    ["Second-600", 600],
    ["Infinite, Second-4100000000", 86_400],
    ["Second-99999999", 86_400],
    ["Second-0", 1],
    ["Minutes-5, Second-30", 30],
    ["garbage", 3600],
  ])("%s → %i seconds", (header, seconds) => expect(lockTimeout(header)).toBe(seconds));
});

describe("Basic credentials", () => {
  it("decodes UTF-8 names and passwords with colons, and ignores what is not Basic or Bearer", () => {
    const encode = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
    expect(credentialsOf(`Basic ${encode("zoë:pa:ss")}`)).toEqual({
      kind: "basic",
      username: "zoë",
      password: "pa:ss",
    });
    expect(credentialsOf("Bearer abc")).toEqual({ kind: "bearer", token: "abc" });
    expect(credentialsOf(`Basic ${encode("no-colon")}`)).toEqual({ kind: "none" });
    expect(credentialsOf("Basic !!!")).toEqual({ kind: "none" });
    expect(credentialsOf(`Basic ${btoa("\xff\xfe:x")}`)).toEqual({ kind: "none" });
    expect(credentialsOf(undefined)).toEqual({ kind: "none" });
    expect(credentialsOf("Digest username=x")).toEqual({ kind: "none" });
  });
});

describe("XML", () => {
  it("resolves namespaces whatever the prefix, and reads an empty body as none", () => {
    const a = parseXml('<D:propfind xmlns:D="DAV:"><D:prop><z:x xmlns:z="urn:z"/></D:prop></D:propfind>')!;
    const b = parseXml('<propfind xmlns="DAV:"><prop><x xmlns="urn:z"/></prop></propfind>')!;
    expect(clarkName(a)).toBe("{DAV:}propfind");
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(parseXml("  \n")).toBeNull();
  });

  it.each([
    ["not XML", "hello"],
    ["unclosed", "<a><b></a>"],
    ["a DOCTYPE (no entity expansion, no billion laughs)", '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>'],
    ["an undeclared prefix", "<D:propfind/>"],
    ["two roots", "<a/><b/>"],
  ])("refuses %s", (_, text) => expect(() => parseXml(text)).toThrow(BadXml));

  it("writes a property that stands on its own and reads back the same", () => {
    const property = parseXml(
      '<p:tag xmlns:p="urn:p" xmlns:q="urn:q" q:level="2">a &amp; <q:b>c</q:b><u xmlns="">d</u></p:tag>',
    )!;
    const written = serialize(property);
    expect(written).toBe(
      '<tag xmlns="urn:p" xmlns:a0="urn:q" a0:level="2">a &amp; <b xmlns="urn:q">c</b><u xmlns="">d</u></tag>',
    );
    expect(JSON.stringify(parseXml(written))).toBe(JSON.stringify(property));
  });
});

describe("the API's refusals", () => {
  it("answer with their envelope code as the HTTP status, never as an envelope", async () => {
    for (const code of [400, 403, 404] as const) {
      const reply = errorReply(new ApiError(code, "password is incorrect or you have no permission"));
      expect(reply.status).toBe(code);
      expect(await reply.text()).toBe("password is incorrect or you have no permission\n");
    }
  });
});

describe("file-side failures", () => {
  // The HTTP status of each kind; a kind left out here fails the type check.
  const statuses: Record<FileErrorKind, number> = {
    not_found: 404,
    no_storage: 404,
    not_a_folder: 502,
    not_a_file: 502,
    exists: 409,
    not_implemented: 405,
    forbidden: 403,
    upstream: 502,
    unavailable: 502,
    refused: 502,
  };

  it.each(Object.entries(statuses))("answers %s with %i and its text, whatever the text says", async (kind, status) => {
    // The text of another kind: the status follows the kind alone.
    const reply = errorReply(
      new FileError(kind as FileErrorKind, "failed get objs: failed get dir: object not found; file exists"),
    );
    expect(reply.status).toBe(status);
    expect(reply.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await reply.text()).toBe("failed get objs: failed get dir: object not found; file exists\n");
  });
});

describe("Depth", () => {
  it("means 1 on a PROPFIND without the header, infinity on any other method without it", () => {
    expect(depthOf(undefined, "PROPFIND")).toBe(1);
    expect(depthOf(undefined, "DELETE")).toBe(-1);
    expect(depthOf(undefined, "COPY")).toBe(-1);
    expect([depthOf("0", "PROPFIND"), depthOf(" Infinity ", "PROPFIND")]).toEqual([0, -1]);
    expect(() => depthOf("2", "PROPFIND")).toThrow(DavError);
  });
});

describe("/dav paths", () => {
  it("are /dav and what lies below it, never a longer name that starts the same", () => {
    expect(davPathOf("/dav")).toBe("/");
    expect(davPathOf("/dav/")).toBe("/");
    expect(davPathOf("/dav/a%20b/c")).toBe("/a b/c");
    expect(davPathOf("/davx/a")).toBeNull();
    expect(davPathOf("/davs3/a")).toBeNull();
    expect(davPathOf("/api/fs/list")).toBeNull();
  });

  it("take a Destination on this host under /dav only; elsewhere it is 502", () => {
    const url = new URL("http://h.test/dav/a.txt");
    expect(destinationOf("/dav/b%20c.txt", url)).toBe("/b c.txt");
    expect(destinationOf("http://h.test/dav/b.txt", url)).toBe("/b.txt");
    for (const elsewhere of ["/davx/b.txt", "http://h.test/davb.txt", "http://other.test/dav/b.txt"]) {
      expect(() => destinationOf(elsewhere, url)).toThrow(expect.objectContaining({ status: 502 }));
    }
  });
});
