import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { mountS3Root, s3PendingUploads } from "../../../test/support/upstreams.ts";
import { member, signIn } from "../../../test/support/workerd-client.ts";
import {
  abort,
  clearUploads,
  complete,
  FILE,
  init,
  MIB,
  request,
  s3Bytes,
  sendChunk,
  sha,
  slice,
  status,
} from "./workerd-fixture.ts";

let admin: string;

beforeAll(async () => {
  admin = await signIn("upload-rules");
});
beforeEach(clearUploads);

describe("resuming a chunked upload after the page is lost", () => {
  const hashesOf = async (bytes: Uint8Array, upper = false) => {
    const hex = async (algorithm: string) =>
      [...new Uint8Array(await crypto.subtle.digest(algorithm, bytes))]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join("");
    const hashes = {
      "X-File-Md5": await hex("MD5"),
      "X-File-Sha1": await hex("SHA-1"),
      "X-File-Sha256": await hex("SHA-256"),
    };
    return upper ? Object.fromEntries(Object.entries(hashes).map(([k, v]) => [k, v.toUpperCase()])) : hashes;
  };

  it("init with the same path, size and hashes gets the live session back with its chunks; the rest completes byte-exact", {
    timeout: 30_000,
  }, async () => {
    await mountS3Root(admin, "mp");
    const hashes = await hashesOf(FILE);
    const first = await init(admin, "/s3/again.bin", FILE.length, hashes);
    expect(first.data).toMatchObject({ resumed: false });
    const id = first.data.upload_id as string;
    for (const index of [0, 2]) expect((await sendChunk(admin, id, index, slice(FILE, 5 * MIB, index))).code).toBe(200);
    // The page is reloaded: the UI knows nothing but the file, and asks for another chunk size.
    const again = await init(admin, "/s3/again.bin", FILE.length, {
      ...(await hashesOf(FILE, true)),
      "X-Chunk-Size": String(6 * MIB),
    });
    expect(again).toMatchObject({
      code: 200,
      data: {
        upload_id: id,
        resumed: true,
        state: "receiving",
        chunk_size: 5 * MIB,
        total_chunks: 4,
        received: [
          [0, 0],
          [2, 2],
        ],
        received_bytes: 10 * MIB,
        frontier: 1,
      },
    });
    // Only the hashes the client sent decide: one kind in common that agrees is enough.
    const bySha256 = await init(admin, "/s3/again.bin", FILE.length, { "X-File-Sha256": hashes["X-File-Sha256"]! });
    expect(bySha256.data).toMatchObject({ upload_id: id, resumed: true });
    for (const index of [1, 3]) expect((await sendChunk(admin, id, index, slice(FILE, 5 * MIB, index))).code).toBe(200);
    expect((await complete(admin, id)).code).toBe(200);
    expect(await sha((await s3Bytes("mp/again.bin"))!)).toBe(await sha(FILE));
    expect(await sql("SELECT id, state FROM upload_sessions")).toEqual([[id, "completed"]]);
    expect(await s3PendingUploads("mp/again.bin")).toEqual([]);
    // A completed session is not resumed: the same file again is a new upload.
    expect((await init(admin, "/s3/again.bin", FILE.length, hashes)).data).toMatchObject({ resumed: false });
  });

  it("other hashes, no hashes or another size start a new session and abort the old one upstream; another user's is never touched", {
    timeout: 30_000,
  }, async () => {
    await mountS3Root(admin, "mp");
    const hashes = await hashesOf(FILE);
    const open = async (token: string, size: number, headers: Record<string, string>) => {
      const opened = await init(token, "/s3/replaced.bin", size, headers);
      expect(opened.code, opened.message).toBe(200);
      expect(opened.data).toMatchObject({ resumed: false, received: [] });
      return opened.data.upload_id as string;
    };
    const other = await member(admin, "uploads-resumer", { "/": 0x08 });
    const theirs = await open(other, FILE.length, hashes);
    let id = await open(admin, FILE.length, hashes);
    expect((await sendChunk(admin, id, 0, slice(FILE, 5 * MIB, 0))).code).toBe(200);
    for (const [size, headers] of [
      [FILE.length, { ...hashes, "X-File-Sha256": "0".repeat(64) }],
      [FILE.length, {}],
      [FILE.length + 1, { "X-File-Sha256": hashes["X-File-Sha256"]! }],
      // No kind in common: nothing proves it is the same file.
      [FILE.length + 1, { "X-File-Md5": hashes["X-File-Md5"]! }],
    ] as const) {
      const next = await open(admin, size, headers);
      expect(next).not.toBe(id);
      expect((await status(admin, id)).code).toBe(404);
      expect(await sql("SELECT count(*) FROM upload_chunks WHERE session_id = ?", [id])).toEqual([[0]]);
      id = next;
    }
    // One upload pending upstream for each user: the last of the admin's, and the other user's.
    expect(await s3PendingUploads("mp/replaced.bin")).toHaveLength(2);
    expect((await status(other, theirs)).data).toMatchObject({ upload_id: theirs, state: "receiving" });
    expect((await init(other, "/s3/replaced.bin", FILE.length, hashes)).data).toMatchObject({
      upload_id: theirs,
      resumed: true,
    });
    expect((await abort(admin, id)).code).toBe(200);
    expect((await abort(other, theirs)).code).toBe(200);
    expect(await s3PendingUploads("mp/replaced.bin")).toEqual([]);
    expect(await init(admin, "/s3/replaced.bin", FILE.length, { "X-File-Sha1": "xyz" })).toEqual({
      code: 400,
      message: "X-File-Sha1 must be 40 hex digits",
      data: null,
    });
  });

  it("status?path=&size= finds the caller's live session for that path and size, under the caller's base path", async () => {
    await mountS3Root(admin, "mp");
    const user = await member(admin, "uploads-finder", { "/": 0x08 }, { base_path: "/s3/team" });
    const id = (await init(user, "/found.bin", FILE.length)).data.upload_id as string;
    expect((await sendChunk(user, id, 1, slice(FILE, 5 * MIB, 1))).code).toBe(200);
    const byPath = (token: string, query: string) => request(token, "GET", `/api/fs/multipart/status?${query}`, {});
    const found = await byPath(user, `path=${encodeURIComponent("/found.bin")}&size=${FILE.length}`);
    expect(found).toMatchObject({
      code: 200,
      data: { upload_id: id, path: "/s3/team/found.bin", received: [[1, 1]], received_bytes: 5 * MIB },
    });
    // The id, in the header as in the query, still wins over a path.
    expect(
      (await request(user, "GET", `/api/fs/multipart/status?path=/x.bin&size=1`, { "X-Upload-Id": id })).data,
    ).toMatchObject({ upload_id: id });
    const missing = { code: 404, message: "multipart upload session not found", data: null };
    expect(await byPath(user, `path=/found.bin&size=${FILE.length + 1}`)).toEqual(missing);
    expect(await byPath(user, `path=/other.bin&size=${FILE.length}`)).toEqual(missing);
    expect(await byPath(admin, `path=/s3/team/found.bin&size=${FILE.length}`)).toEqual(missing);
    expect(await byPath(user, "path=/found.bin")).toEqual({
      code: 400,
      message: "status lookup requires upload_id, or path and size",
      data: null,
    });
    expect((await byPath(user, `path=/../found.bin&size=${FILE.length}`)).code).toBe(403);
    expect((await abort(user, id)).code).toBe(200);
    expect(await byPath(user, `path=/found.bin&size=${FILE.length}`)).toEqual(missing);
    expect(await s3PendingUploads("mp/team/found.bin")).toEqual([]);
  });
});

describe("the rules of a chunked upload, each held by its test", () => {
  it("refuses a negative chunk index, and stores nothing for it", async () => {
    await mountS3Root(admin, "mp");
    const id = (await init(admin, "/s3/negative.bin", FILE.length)).data.upload_id as string;
    expect(await sendChunk(admin, id, -1, slice(FILE, 5 * MIB, 0))).toEqual({
      code: 400,
      message: "chunk index -1 out of range [0,4)",
      data: null,
    });
    expect(await sql("SELECT count(*) FROM upload_chunks")).toEqual([[0]]);
    expect((await abort(admin, id)).code).toBe(200);
  });

  it("refuses to complete while the last chunk, or a middle one, is missing, and lands nothing", {
    timeout: 30_000,
  }, async () => {
    await mountS3Root(admin, "mp");
    for (const [name, sent, received] of [
      ["last.bin", [0, 1, 2], [[0, 2]]],
      [
        "middle.bin",
        [0, 1, 3],
        [
          [0, 1],
          [3, 3],
        ],
      ],
    ] as const) {
      const id = (await init(admin, `/s3/${name}`, FILE.length)).data.upload_id as string;
      for (const index of sent) expect((await sendChunk(admin, id, index, slice(FILE, 5 * MIB, index))).code).toBe(200);
      const bytes = sent.reduce<number>((sum, index) => sum + slice(FILE, 5 * MIB, index).length, 0);
      expect(await complete(admin, id)).toMatchObject({
        code: 400,
        message: `cannot complete: ${bytes} of ${FILE.length} bytes received`,
        data: { state: "receiving", received },
      });
      expect(await s3Bytes(`mp/${name}`)).toBeNull();
      expect((await abort(admin, id)).code).toBe(200);
      expect(await s3PendingUploads(`mp/${name}`)).toEqual([]);
    }
  });

  it("chunk, complete and abort re-check the caller's base path: an admin who narrows it stops the upload", async () => {
    await mountS3Root(admin, "mp");
    const user = await member(admin, "uploads-based", { "/": 0x08 }, { base_path: "/s3/team" });
    const opened = await init(user, "/in.bin", FILE.length);
    expect(opened.data).toMatchObject({ path: "/s3/team/in.bin" });
    const id = opened.data.upload_id as string;
    expect((await sendChunk(user, id, 0, slice(FILE, 5 * MIB, 0))).code).toBe(200);
    await sql("UPDATE users SET base_path = '/s3/other' WHERE username = 'uploads-based'");
    const denied = { code: 403, message: "permission denied", data: null };
    expect(await sendChunk(user, id, 1, slice(FILE, 5 * MIB, 1))).toEqual(denied);
    expect(await complete(user, id)).toEqual(denied);
    expect(await abort(user, id)).toEqual(denied);
    expect(await sql("SELECT idx FROM upload_chunks")).toEqual([[0]]);
    // Given back its base path, the user may drop the upload (else the cron job would, a day later).
    await sql("UPDATE users SET base_path = '/s3/team' WHERE username = 'uploads-based'");
    expect((await abort(user, id)).code).toBe(200);
    expect(await s3PendingUploads("mp/team/in.bin")).toEqual([]);
  });

  it("init plans at most 10,000 chunks, and refuses a file that would need chunks over 95 MiB", async () => {
    await mountS3Root(admin, "mp");
    const huge = 200 * 1024 * MIB;
    const opened = await init(admin, "/s3/huge.bin", huge);
    expect(opened.data).toMatchObject({ chunk_size: Math.ceil(huge / 10_000), total_chunks: 10_000 });
    expect((await abort(admin, opened.data.upload_id)).code).toBe(200);
    const tooLarge = 95 * MIB * 10_000 + 1;
    expect(await init(admin, "/s3/too-large.bin", tooLarge)).toEqual({
      code: 400,
      message: `a file of ${tooLarge} bytes needs more than 10000 chunks of ${95 * MIB} bytes`,
      data: null,
    });
    expect(await sql("SELECT count(*) FROM upload_sessions")).toEqual([[0]]);
    expect(await s3PendingUploads("mp/huge.bin")).toEqual([]);
    expect(await s3PendingUploads("mp/too-large.bin")).toEqual([]);
  });
});
