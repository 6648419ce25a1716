// The S3 backend's requests as it builds them, with fetch replaced by a recorder: CopyObject's
// copy source is the bucket and key URL-encoded segment by segment, as S3 decodes it. The round
// trip against s3rver (copies and renames) is in src/features/fs/s3.workerd.test.ts.
import { afterEach, describe, expect, it, vi } from "vitest";
import { readAddition } from "./addition.ts";
import { s3 } from "./s3.ts";
import { s3Files } from "./s3-files.ts";
import type { StorageFs } from "./types.ts";

const sent: Request[] = [];

function backend() {
  vi.stubGlobal("fetch", async (request: Request) => {
    sent.push(request);
    // Every HEAD finds a file; every PUT (the copy) succeeds.
    if (request.method === "HEAD")
      return new Response(null, {
        status: 200,
        headers: { "Content-Length": "3", "Last-Modified": "Sun, 01 Mar 2026 08:00:00 GMT" },
      });
    return new Response("<CopyObjectResult></CopyObjectResult>", { status: 200 });
  });
  const addition = readAddition(
    s3,
    JSON.stringify({
      endpoint: "http://127.0.0.1:9",
      bucket: "my bucket",
      access_key_id: "KEY",
      secret_access_key: "secret",
      root_folder_path: "/root dir",
    }),
  );
  return s3Files({ id: 1, mountPath: "/s3", modified: new Date(0), addition, fs: {} as StorageFs });
}

afterEach(() => {
  sent.length = 0;
  vi.unstubAllGlobals();
});

describe("CopyObject's copy source", () => {
  it("escapes the bucket and every segment of the key: spaces, %, +, non-ASCII; slashes stay", async () => {
    await backend().copy!("/in/a b+%é.txt", "/to");
    const copy = sent.find((request) => request.method === "PUT")!;
    expect(copy.headers.get("x-amz-copy-source")).toBe("/my%20bucket/root%20dir/in/a%20b%2B%25%C3%A9.txt");
    expect(copy.url).toBe("http://127.0.0.1:9/my%20bucket/root%20dir/to/a%20b%2B%25%C3%A9.txt");
  });
});
