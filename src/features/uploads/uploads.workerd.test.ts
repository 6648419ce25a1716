// Chunked uploads inside workerd against s3rver (each chunk one UploadPart) and webdav-server (the
// chunks staged beside the target, joined by one upload): the file lands byte-exact and listed
// with its size, nothing stays pending upstream, a lost client resumes from `status`, and every
// refusal is a clear envelope that leaves no file behind. rules.workerd.test.ts has resuming from a
// new init with the same file's hashes and each rule of a chunked upload.
import { env } from "cloudflare:test";
import { openDatabase } from "../../db/client.ts";
import { databaseUrl } from "../../env.ts";
import { sweepUploads } from "./sweep.ts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import {
  davAddition,
  mountS3Root,
  s3Addition,
  s3Object,
  s3PendingUploads,
  s3Put,
  upstreamDav,
  upstreamDavText,
} from "../../../test/support/upstreams.ts";
import {
  callApi,
  member,
  mountStorage,
  R2_SIMULATOR_CUT_READ,
  runtimeLog,
  signIn,
} from "../../../test/support/workerd-client.ts";
import {
  abort,
  clearUploads,
  complete,
  FILE,
  fileOf,
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
  admin = await signIn("uploads");
});
beforeEach(clearUploads);

describe("chunked uploads to S3", () => {
  it("sends 3 chunks of 5 MiB and a tail as UploadParts, out of order, and completes byte-exact with nothing pending", {
    timeout: 30_000,
  }, async () => {
    await mountS3Root(admin, "mp");
    const opened = await init(admin, "/s3/films/big.bin", FILE.length);
    expect(opened).toMatchObject({
      code: 200,
      data: {
        state: "receiving",
        path: "/s3/films/big.bin",
        size: FILE.length,
        chunk_size: 5 * MIB,
        total_chunks: 4,
        received: [],
        received_bytes: 0,
        resumed: false,
      },
    });
    const id = opened.data.upload_id as string;
    for (const index of [3, 1, 0, 2]) {
      const sent = await sendChunk(admin, id, index, slice(FILE, 5 * MIB, index));
      expect(sent.code, sent.message).toBe(200);
    }
    expect((await status(admin, id)).data).toMatchObject({
      received: [[0, 3]],
      received_bytes: FILE.length,
      frontier: 4,
    });
    // Nothing visible under the name before completion.
    expect(await s3Bytes("mp/films/big.bin")).toBeNull();
    const done = await complete(admin, id);
    expect(done).toMatchObject({ code: 200, data: { state: "completed", received: [[0, 3]], storage_progress: 100 } });
    expect(await sha((await s3Bytes("mp/films/big.bin"))!)).toBe(await sha(FILE));
    const listed = await callApi(admin, "/api/fs/list", { path: "/s3/films" });
    expect(listed.data.content.map((e: any) => [e.name, e.size])).toEqual([["big.bin", FILE.length]]);
    expect(await s3PendingUploads("mp/films/")).toEqual([]);
    // Completed sessions still answer, so a client that lost the answer learns it landed.
    expect((await status(admin, id)).data.state).toBe("completed");
    expect((await complete(admin, id)).code).toBe(200);
  });

  it("resumes after the client is gone: status lists exactly the chunks stored, the rest completes byte-exact", {
    timeout: 30_000,
  }, async () => {
    await mountS3Root(admin, "mp");
    const id = (await init(admin, "/s3/resume.bin", FILE.length)).data.upload_id as string;
    expect((await sendChunk(admin, id, 0, slice(FILE, 5 * MIB, 0))).code).toBe(200);
    expect((await sendChunk(admin, id, 2, slice(FILE, 5 * MIB, 2))).code).toBe(200);
    // A chunk cut off midway is not stored.
    const cut = await sendChunk(admin, id, 1, slice(FILE, 5 * MIB, 1).subarray(0, MIB));
    expect(cut).toMatchObject({ code: 400, message: `chunk 1 must be ${5 * MIB} bytes, got ${MIB}` });
    // The page is gone; a new one knows only the id.
    const seen = await status(admin, id);
    expect(seen.data).toMatchObject({
      received: [
        [0, 0],
        [2, 2],
      ],
      received_bytes: 10 * MIB,
      frontier: 1,
    });
    const missing: number[] = [];
    const have = new Set<number>();
    for (const [from, to] of seen.data.received) for (let i = from; i <= to; i++) have.add(i);
    for (let i = 0; i < seen.data.total_chunks; i++) if (!have.has(i)) missing.push(i);
    expect(missing).toEqual([1, 3]);
    for (const index of missing)
      expect((await sendChunk(admin, id, index, slice(FILE, 5 * MIB, index))).code).toBe(200);
    expect((await complete(admin, id)).code).toBe(200);
    expect(await sha((await s3Bytes("mp/resume.bin"))!)).toBe(await sha(FILE));
    expect(await s3PendingUploads("mp/resume.bin")).toEqual([]);
  });

  it("accepts a chunk sent again with the same bytes, and refuses other bytes for it, before and after completion", {
    timeout: 30_000,
  }, async () => {
    await mountS3Root(admin, "mp");
    const id = (await init(admin, "/s3/twice.bin", FILE.length)).data.upload_id as string;
    const first = slice(FILE, 5 * MIB, 0);
    expect((await sendChunk(admin, id, 0, first)).data.received).toEqual([[0, 0]]);
    expect((await sendChunk(admin, id, 0, first)).data).toMatchObject({ received: [[0, 0]], received_bytes: 5 * MIB });
    // 400, not 409: the web UI resends a chunk answered 409 (up to 400 times), and these bytes never fit.
    const other = fileOf(5 * MIB, 7);
    expect(await sendChunk(admin, id, 0, other)).toEqual({
      code: 400,
      message: "chunk 0 was already stored with different bytes; abort the upload to start over",
      data: null,
    });
    expect(await sql("SELECT idx, size FROM upload_chunks")).toEqual([[0, 5 * MIB]]);
    for (const index of [1, 2, 3])
      expect((await sendChunk(admin, id, index, slice(FILE, 5 * MIB, index))).code).toBe(200);
    expect((await complete(admin, id)).code).toBe(200);
    // A straggler after completion: the same bytes are absorbed, other bytes are not the file's.
    expect((await sendChunk(admin, id, 3, slice(FILE, 5 * MIB, 3))).data).toMatchObject({ state: "completed" });
    expect(await sendChunk(admin, id, 1, other)).toEqual({
      code: 400,
      message: "chunk 1 differs from the bytes the completed upload holds",
      data: null,
    });
    expect(await sha((await s3Bytes("mp/twice.bin"))!)).toBe(await sha(FILE));
  });

  it("refuses a bad index, a wrong size, an early complete, someone else's session and an expired one", async () => {
    await mountS3Root(admin, "mp");
    const id = (await init(admin, "/s3/refused.bin", FILE.length)).data.upload_id as string;
    expect(await sendChunk(admin, id, 4, new Uint8Array(10))).toMatchObject({
      code: 400,
      message: "chunk index 4 out of range [0,4)",
    });
    expect(
      (await request(admin, "PUT", "/api/fs/multipart/chunk", { "X-Upload-Id": id, "X-Chunk-Index": "x" }, "a"))
        .message,
    ).toBe("invalid X-Chunk-Index header");
    expect((await sendChunk(admin, id, 3, new Uint8Array(10))).message).toBe(`chunk 3 must be 123457 bytes, got 10`);
    // A body without Content-Length is held to the chunk's length as it streams.
    const streamed = (bytes: number) =>
      request(
        admin,
        "PUT",
        "/api/fs/multipart/chunk",
        { "X-Upload-Id": id, "X-Chunk-Index": "3" },
        new ReadableStream({
          start(controller) {
            controller.enqueue(new Uint8Array(bytes));
            controller.close();
          },
        }),
      );
    expect(await streamed(123_456)).toMatchObject({ code: 400, message: "incomplete chunk 3: expected 123457 bytes" });
    expect(await streamed(123_458)).toMatchObject({ code: 400, message: "chunk 3 larger than expected 123457 bytes" });
    expect((await status(admin, id)).data).toMatchObject({ received: [], received_bytes: 0 });
    expect((await sendChunk(admin, id, 0, slice(FILE, 5 * MIB, 0))).code).toBe(200);
    const early = await complete(admin, id);
    expect(early).toMatchObject({
      code: 400,
      message: `cannot complete: ${5 * MIB} of ${FILE.length} bytes received`,
      data: { received: [[0, 0]] },
    });
    expect(await s3Bytes("mp/refused.bin")).toBeNull();

    const other = await member(admin, "uploads-other", { "/": 0xffff });
    for (const reply of [await status(other, id), await complete(other, id), await abort(other, id)])
      expect(reply).toEqual({ code: 404, message: "multipart upload session not found", data: null });
    expect((await sendChunk(other, id, 1, slice(FILE, 5 * MIB, 1))).code).toBe(404);

    await sql("UPDATE upload_sessions SET last_active = last_active - 2 * 86400");
    expect(await sendChunk(admin, id, 1, slice(FILE, 5 * MIB, 1))).toEqual({
      code: 410,
      message: "multipart upload session expired",
      data: null,
    });
    expect((await request(admin, "GET", "/api/fs/multipart/status?upload_id=nope", {})).code).toBe(404);
  });

  it("holds every step to /api/fs/put's checks: a lost write permission stops chunk and complete", async () => {
    await mountS3Root(admin, "mp");
    const writer = await member(admin, "uploads-writer", { "/": 0x08 });
    const reader = await member(admin, "uploads-reader", { "/": 0 });
    expect(await init(reader, "/s3/no.bin", FILE.length)).toEqual({
      code: 403,
      message: "permission denied",
      data: null,
    });
    expect((await init(admin, "/s3/../x.bin", FILE.length)).message).toBe("access using relative path is not allowed");
    expect((await init(admin, "/s3/x.bin", 0)).message).toBe(
      "multipart upload requires a positive X-File-Size; upload empty files via /fs/put",
    );
    expect((await init(admin, "/s3/x.bin", Number.NaN)).message).toBe(
      "multipart upload requires a valid X-File-Size header",
    );
    const id = (await init(writer, "/s3/w.bin", FILE.length)).data.upload_id as string;
    expect((await sendChunk(writer, id, 0, slice(FILE, 5 * MIB, 0))).code).toBe(200);
    await sql(
      'UPDATE roles SET permission_scopes = \'[{"path":"/","permission":0}]\' WHERE name = \'uploads-writer-role\'',
    );
    expect((await sendChunk(writer, id, 1, slice(FILE, 5 * MIB, 1))).message).toBe("permission denied");
    expect((await complete(writer, id)).message).toBe("permission denied");
    expect((await status(writer, id)).message).toBe("permission denied");
  });

  it("honours Overwrite: false at completion, and leaves nothing upstream", async () => {
    await mountS3Root(admin, "mp");
    const small = fileOf(6 * MIB, 3);
    const id = (await init(admin, "/s3/late.bin", small.length, { Overwrite: "false" })).data.upload_id as string;
    for (const index of [0, 1])
      expect((await sendChunk(admin, id, index, slice(small, 5 * MIB, index))).code).toBe(200);
    await s3Object("mp/late.bin", { method: "PUT", body: "someone else" });
    expect(await complete(admin, id)).toEqual({ code: 403, message: "file exists", data: null });
    expect(new TextDecoder().decode((await s3Bytes("mp/late.bin"))!)).toBe("someone else");
    expect(await s3PendingUploads("mp/late.bin")).toEqual([]);
    expect((await status(admin, id)).code).toBe(404);
  });

  it("abort drops the parts upstream and the session", async () => {
    await mountS3Root(admin, "mp");
    const id = (await init(admin, "/s3/dropped.bin", FILE.length)).data.upload_id as string;
    expect((await sendChunk(admin, id, 0, slice(FILE, 5 * MIB, 0))).code).toBe(200);
    expect(await s3PendingUploads("mp/dropped.bin")).toHaveLength(1);
    expect(await abort(admin, id)).toEqual({ code: 200, message: "success", data: null });
    expect(await s3PendingUploads("mp/dropped.bin")).toEqual([]);
    expect(await sql("SELECT count(*) FROM upload_sessions")).toEqual([[0]]);
    expect(await s3Bytes("mp/dropped.bin")).toBeNull();
  });

  it("raises a chunk size below S3's 5 MiB part minimum, and answers 403 while the setting is off", async () => {
    await mountS3Root(admin, "mp");
    const opened = await init(admin, "/s3/min.bin", FILE.length, { "X-Chunk-Size": String(MIB) });
    expect(opened.data).toMatchObject({ chunk_size: 5 * MIB, total_chunks: 4 });
    expect((await abort(admin, opened.data.upload_id)).code).toBe(200);
    await sql("UPDATE settings SET value = 'false' WHERE key = 'multipart_enabled'");
    try {
      expect(await init(admin, "/s3/off.bin", FILE.length)).toEqual({
        code: 403,
        message: "multipart upload is disabled",
        data: null,
      });
    } finally {
      await sql("UPDATE settings SET value = 'true' WHERE key = 'multipart_enabled'");
    }
  });
});

describe("chunked uploads to WebDAV (staged)", () => {
  // The WebDAV root is shared with the other suites, which list it: leave it as found.
  afterAll(async () => {
    for (const folder of ["mp", "mp2"]) await upstreamDav("DELETE", `/library/${folder}`);
  });
  const mountDav = async () => {
    const made = await mountStorage(admin, "/dav", "WebDav", davAddition("/library"));
    expect(made.code, made.message).toBe(200);
  };

  it("stages the chunks hidden beside the target and joins them into one byte-exact file, leaving no staging", async () => {
    await mountDav();
    const file = fileOf(2 * MIB + 77, 5);
    const opened = await init(admin, "/dav/mp/joined.bin", file.length, { "X-Chunk-Size": String(MIB) });
    expect(opened.data).toMatchObject({ chunk_size: MIB, total_chunks: 3 });
    const id = opened.data.upload_id as string;
    for (const index of [2, 0, 1]) expect((await sendChunk(admin, id, index, slice(file, MIB, index))).code).toBe(200);
    // The staging folder exists upstream but no listing shows it.
    const [[staging]] = (await sql("SELECT upstream_id FROM upload_sessions")) as [[string]];
    expect((await upstreamDav("PROPFIND", `/library/mp/${staging}`, { headers: { Depth: "0" } })).status).toBe(207);
    expect((await callApi(admin, "/api/fs/list", { path: "/dav/mp" })).data.content).toBeNull();
    expect((await complete(admin, id)).code).toBe(200);
    const landed = await upstreamDav("GET", "/library/mp/joined.bin");
    expect(await sha(await landed.arrayBuffer())).toBe(await sha(file));
    expect(
      (await callApi(admin, "/api/fs/list", { path: "/dav/mp" })).data.content.map((e: any) => [e.name, e.size]),
    ).toEqual([["joined.bin", file.length]]);
    expect((await upstreamDav("PROPFIND", `/library/mp/${staging}`, { headers: { Depth: "0" } })).status).toBe(404);
  });

  it("abort removes the staging folder", async () => {
    await mountDav();
    const file = fileOf(2 * MIB, 6);
    const id = (await init(admin, "/dav/mp2/gone.bin", file.length, { "X-Chunk-Size": String(MIB) })).data.upload_id;
    expect((await sendChunk(admin, id, 0, slice(file, MIB, 0))).code).toBe(200);
    const [[staging]] = (await sql("SELECT upstream_id FROM upload_sessions")) as [[string]];
    expect((await abort(admin, id)).code).toBe(200);
    expect((await upstreamDav("PROPFIND", `/library/mp2/${staging}`, { headers: { Depth: "0" } })).status).toBe(404);
    expect(await upstreamDavText("/library/mp2/gone.bin")).toBeNull();
  });
});

describe("chunked uploads to R2 (the Worker's binding)", () => {
  it("sends the chunks as R2 multipart parts, out of order, and completes byte-exact under the name", {
    timeout: 30_000,
  }, async () => {
    const created = await callApi(admin, "/api/admin/storage/create", {
      mount_path: "/r2",
      driver: "R2 Binding",
      addition: JSON.stringify({ root_folder_path: "/chunked" }),
    });
    expect(created.code, created.message).toBe(200);
    const opened = await init(admin, "/r2/films/big.bin", FILE.length);
    expect(opened).toMatchObject({ code: 200, data: { chunk_size: 5 * MIB, total_chunks: 4 } });
    const id = opened.data.upload_id as string;
    for (const index of [2, 0, 3, 1]) {
      const sent = await sendChunk(admin, id, index, slice(FILE, 5 * MIB, index));
      expect(sent.code, sent.message).toBe(200);
    }
    // Nothing under the name before completion.
    expect(await env.BUCKET!.head("chunked/films/big.bin")).toBeNull();
    expect((await complete(admin, id)).data.state).toBe("completed");
    const object = await env.BUCKET!.get("chunked/films/big.bin");
    expect(await sha(await object!.arrayBuffer())).toBe(await sha(FILE));
    const listed = await callApi(admin, "/api/fs/list", { path: "/r2/films" });
    expect(listed.data.content.map((e: any) => [e.name, e.size])).toEqual([["big.bin", FILE.length]]);
  });
});

describe("a chunk whose body ends before its Content-Length", () => {
  /** Leaves out what miniflare's R2, a Worker of its own reading the part's body, logs of the cut read. */
  const ours = (uncaught: string[]) => uncaught.filter((line) => !line.includes(R2_SIMULATOR_CUT_READ));

  /** Chunk `index` declared `declared` bytes long, of which `sent` arrive before the body ends. */
  const cutChunk = (id: string, index: number, declared: number, sent: number) =>
    request(
      admin,
      "PUT",
      "/api/fs/multipart/chunk",
      { "X-Upload-Id": id, "X-Chunk-Index": String(index), "Content-Length": String(declared) },
      new ReadableStream({
        start(controller) {
          controller.enqueue(new Uint8Array(sent).fill(49));
          controller.close();
        },
      }),
    );

  for (const [storage, mount] of [
    ["S3", ["S3", { ...s3Addition(), root_folder_path: "/mp" }]],
    ["WebDAV (staged)", ["WebDav", davAddition("/library")]],
    ["R2", ["R2 Binding", { root_folder_path: "/chunked" }]],
  ] as const) {
    it(`is refused as before on ${storage}, stores nothing, and leaves no uncaught error in workerd's log`, async () => {
      const made = await mountStorage(admin, "/store", mount[0], mount[1]);
      expect(made.code, made.message).toBe(200);
      const opened = await init(admin, "/store/cut/cut.bin", FILE.length);
      expect(opened.code, opened.message).toBe(200);
      const { upload_id: id, total_chunks: total } = opened.data as { upload_id: string; total_chunks: number };
      const logged = await runtimeLog();
      expect(await cutChunk(id, total - 1, 123_457, 100_000)).toEqual({
        code: 400,
        message: `incomplete chunk ${total - 1}: expected 123457 bytes`,
        data: null,
      });
      // The upload's request was aborted, not failed by its body (docs/decisions.md D12.8).
      expect(ours((await runtimeLog(logged.next)).uncaught)).toEqual([]);
      expect((await status(admin, id)).data).toMatchObject({ received: [], received_bytes: 0 });
      expect(await sql("SELECT count(*) FROM upload_chunks")).toEqual([[0]]);
      expect((await abort(admin, id)).code).toBe(200);
    });
  }
});

describe("the cron job", () => {
  it("aborts sessions idle for a day upstream and deletes them, and forgets completed ones after an hour", async () => {
    await mountS3Root(admin, "mp");
    const id = (await init(admin, "/s3/abandoned.bin", FILE.length)).data.upload_id as string;
    expect((await sendChunk(admin, id, 0, slice(FILE, 5 * MIB, 0))).code).toBe(200);
    const fresh = (await init(admin, "/s3/fresh.bin", FILE.length)).data.upload_id as string;
    const { url, authToken } = databaseUrl(env);
    const db = openDatabase(url, authToken);
    expect(await sweepUploads(db)).toEqual({ aborted: 0, removed: 0, failed: 0 });
    await sql("UPDATE upload_sessions SET last_active = last_active - 86401 WHERE id = ?", [id]);
    expect(await sweepUploads(db)).toEqual({ aborted: 1, removed: 1, failed: 0 });
    expect(await s3PendingUploads("mp/abandoned.bin")).toEqual([]);
    expect(await sql("SELECT id FROM upload_sessions")).toEqual([[fresh]]);
    expect((await abort(admin, fresh)).code).toBe(200);
    // A completed session (its upstream work done) only leaves the table.
    const done = (await init(admin, "/s3/done.bin", FILE.length)).data.upload_id as string;
    expect((await abort(admin, done)).code).toBe(200);
    await sql(
      "INSERT INTO upload_sessions (id, user_id, path, overwrite, storage_id, actual_dir, upstream_id, size, chunk_size, content_type, state, last_active) VALUES ('old', 1, '/s3/x', 1, 1, '/', 'u', 1, 1, 'x', 'completed', unixepoch() - 3601)",
    );
    expect(await sweepUploads(db)).toEqual({ aborted: 0, removed: 1, failed: 0 });
    expect(await sql("SELECT count(*) FROM upload_sessions")).toEqual([[0]]);
  });
});

describe("HTTP Direct on S3", () => {
  const mountDirect = async (enabled: boolean) => {
    await s3Put("direct/keep", "");
    const made = await mountStorage(admin, "/s3", "S3", {
      ...s3Addition(),
      root_folder_path: "/direct",
      enable_direct_upload: enabled,
    });
    expect(made.code, made.message).toBe(200);
  };
  const info = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    request(
      token,
      "POST",
      "/api/fs/get_direct_upload_info",
      { "Content-Type": "application/json", ...headers },
      JSON.stringify(body),
    );

  it("advertises HttpDirect only to callers who may write, and presigns one PUT of exactly the file's size", async () => {
    await mountDirect(true);
    const reader = await member(admin, "direct-reader", { "/": 0 });
    expect((await callApi(admin, "/api/fs/list", { path: "/s3" })).data.direct_upload_tools).toEqual(["HttpDirect"]);
    expect((await callApi(reader, "/api/fs/list", { path: "/s3" })).data).not.toHaveProperty("direct_upload_tools");
    // The root above it is a virtual folder: nothing to upload into directly.
    const root = (await callApi(admin, "/api/fs/list", { path: "/" })).data;
    expect(root).toMatchObject({ write: true, provider: "unknown" });
    expect(root.content.map((entry: { name: string }) => entry.name)).toContain("s3");
    expect(root).not.toHaveProperty("direct_upload_tools");

    const file = fileOf(300_001, 9);
    const given = await info(admin, {
      path: "/s3/in",
      file_name: "direct.bin",
      file_size: file.length,
      tool: "HttpDirect",
    });
    expect(given).toMatchObject({ code: 200, data: { method: "PUT", chunk_size: 0, headers: {} } });
    const url = new URL(given.data.upload_url);
    expect(url.pathname).toBe(`/gatehouse-bucket/direct/in/direct.bin`);
    expect(url.searchParams.get("X-Amz-Expires")).toBe("900");
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;host");
    const put = await fetch(given.data.upload_url, { method: "PUT", body: file });
    expect(put.status).toBe(200);
    expect(await sha((await s3Bytes("direct/in/direct.bin"))!)).toBe(await sha(file));

    expect(await info(reader, { path: "/s3", file_name: "x.bin", file_size: 1 })).toEqual({
      code: 403,
      message: "permission denied",
      data: null,
    });
    expect((await info(admin, { path: "/s3/in", file_name: "../x", file_size: 1 })).message).toBe(
      "using relative path is not allowed",
    );
    expect(
      (await info(admin, { path: "/s3/in", file_name: "direct.bin", file_size: 1 }, { Overwrite: "false" })).message,
    ).toBe("file exists");
  });

  it("is refused, and not advertised, on a storage that did not opt in", async () => {
    await mountDirect(false);
    expect((await callApi(admin, "/api/fs/list", { path: "/s3" })).data).not.toHaveProperty("direct_upload_tools");
    expect(await info(admin, { path: "/s3", file_name: "x.bin", file_size: 1 })).toEqual({
      code: 403,
      message: "direct upload is not enabled on this storage",
      data: null,
    });
  });
});
