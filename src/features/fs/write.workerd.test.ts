// The write side inside workerd against the real servers (s3rver, webdav-server, ftp-srv): each
// operation through Gatehouse, each result read back from the upstream itself (S3 with aws4fetch,
// WebDAV with fetch, FTP through a second storage listing), and the refusals that change nothing;
// write-guards.workerd.test.ts holds the guards on subtrees, hidden names and anchored folders.
import { exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { poll } from "../../../test/support/poll.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Object, s3Text, upstreamDavText } from "../../../test/support/upstreams.ts";
import { cutBody, type Envelope, runtimeLog, signIn } from "../../../test/support/workerd-client.ts";
import { DAV_ROOT, mountWrites, setUpWrites, writesAs } from "./workerd-fixture.ts";

const davText = (path: string) => upstreamDavText(`${DAV_ROOT}${path}`);

let admin: string;
const { post, upload } = writesAs(() => admin);

beforeAll(async () => {
  admin = await setUpWrites("fs-write");
});
beforeEach(() => mountWrites(admin));

/** A body of `size` bytes made as it is read: nothing holds it whole. */
function generated(size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = new Uint8Array(Math.min(65536, size - sent)).map((_, i) => (sent + i) % 251);
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

describe("uploads", () => {
  it("streams an 8 MiB body to S3 with its length, and creates the folders on the way", async () => {
    const size = 8 * 1024 * 1024 + 3;
    expect(await upload("/s3/up/deep/big.bin", generated(size), { "Content-Length": String(size) })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    const stored = new Uint8Array(await (await s3Object("w/up/deep/big.bin")).arrayBuffer());
    expect(stored.length).toBe(size);
    expect([stored[0], stored[1000], stored[size - 1]]).toEqual([0, 1000 % 251, (size - 1) % 251]);
  });

  it("stores a JSON file's bytes as they are: the body of an upload is never read as a request's JSON", async () => {
    const json = '{"name":"not a request","size":1}';
    const reply = await upload("/dav/data.json", json, {
      "Content-Length": String(json.length),
      "Content-Type": "application/json",
    });
    expect(reply).toEqual({ code: 200, message: "success", data: null });
    expect(await davText("/data.json")).toBe(json);
  });

  it("uploads to WebDAV and FTP, and answers As-Task with a finished task", async () => {
    expect((await upload("/dav/up.txt", "to dav", { "Content-Length": "6" })).code).toBe(200);
    expect(await davText("/up.txt")).toBe("to dav");
    const task = await upload("/ftp/up.txt", "to ftp!", { "Content-Length": "7", "As-Task": "true" });
    expect(task.data.task).toMatchObject({
      state: 2,
      progress: 100,
      total_bytes: 7,
      name: "upload up.txt to [/ftp](/)",
    });
    const file = (await post("/api/fs/get", { path: "/ftp/up.txt" })).data;
    expect(await (await exports.default.fetch(`http://gatehouse.test/d/ftp/up.txt?sign=${file.sign}`)).text()).toBe(
      "to ftp!",
    );
  });

  it("takes the file part of a multipart form (PUT /api/fs/form) as a stream, and stores nothing from a form that ends wrong", async () => {
    const content = "form body ".repeat(100_000);
    const boundary = "----GatehouseFormBoundary7MA4YWxkTrZu0gW";
    // As a browser sends FormData: the closing boundary, then a line break.
    const form = (ending: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ignored.txt"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--${ending}`;
    const send = (path: string, body: string) =>
      exports.default.fetch(
        new Request("http://gatehouse.test/api/fs/form", {
          method: "PUT",
          headers: {
            Authorization: admin,
            "File-Path": encodeURIComponent(path),
            "Content-Type": `multipart/form-data; boundary=${boundary}`,
            "Content-Length": String(body.length),
          },
          body,
        }),
      );
    expect(await (await send("/s3/form/sent.txt", form("\r\n"))).json()).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await s3Text("w/form/sent.txt")).toBe(content);
    // The upload fails before its declared length is sent: AWS S3 then stores nothing (s3rver keeps
    // the bytes that arrived, never the whole file).
    expect((await (await send("/s3/form/cut.txt", form(""))).json<Envelope>()).code).toBe(500);
    expect(await s3Text("w/form/cut.txt")).not.toBe(content);
    const noFile = `--${boundary}\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n--${boundary}--\r\n`;
    expect((await (await send("/s3/form/none.txt", noFile)).json<Envelope>()).message).toBe("http: no such file");
  });

  it("refuses a missing Content-Length, Overwrite: false on an existing file, a bad name and a bad File-Path, leaving the upstream as it was", async () => {
    await upload("/s3/keep.txt", "first", { "Content-Length": "5" });
    expect((await upload("/s3/keep.txt", "second", { "Content-Length": "6", Overwrite: "false" })).message).toBe(
      "file exists",
    );
    expect(await s3Text("w/keep.txt")).toBe("first");
    expect((await upload("/s3/../x.txt", "x", { "Content-Length": "1" })).code).toBe(403);
    const broken = await (
      await exports.default.fetch(
        new Request("http://gatehouse.test/api/fs/put", {
          method: "PUT",
          headers: { Authorization: admin, "File-Path": "%E0%A4%A", "Content-Length": "1" },
          body: "x",
        }),
      )
    ).json<Envelope>();
    expect(broken).toEqual({ code: 400, message: "File-Path is not percent-encoded UTF-8", data: null });
  });
});

describe("file operations", () => {
  it("mkdir, rename, move, copy and remove on S3, seen in the bucket", async () => {
    expect(await post("/api/fs/mkdir", { path: "/s3/ops/a" })).toEqual({ code: 200, message: "success", data: null });
    expect(await s3Text("w/ops/a/keep")).toBe("");
    await upload("/s3/ops/one.txt", "one", { "Content-Length": "3" });
    expect(await post("/api/fs/rename", { path: "/s3/ops/one.txt", name: "uno.txt" })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect([await s3Text("w/ops/one.txt"), await s3Text("w/ops/uno.txt")]).toEqual([null, "one"]);
    expect(await post("/api/fs/move", { src_dir: "/s3/ops", dst_dir: "/s3/ops/a", names: ["uno.txt"] })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await s3Text("w/ops/a/uno.txt")).toBe("one");
    expect((await post("/api/fs/copy", { src_dir: "/s3/ops", dst_dir: "/s3", names: ["a"] })).data).toEqual({
      tasks: [],
    });
    expect(await s3Text("w/a/uno.txt")).toBe("one");
    expect(await post("/api/fs/remove", { dir: "/s3", names: ["a", "ops", "never-was"] })).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect([await s3Text("w/a/uno.txt"), await s3Text("w/ops/a/uno.txt")]).toEqual([null, null]);
  });

  it("mkdir, rename and remove on WebDAV and FTP", async () => {
    for (const mount of ["/dav", "/ftp"]) {
      expect((await post("/api/fs/mkdir", { path: `${mount}/made/inner` })).code, mount).toBe(200);
      await upload(`${mount}/made/f.txt`, "ff", { "Content-Length": "2" });
      expect((await post("/api/fs/rename", { path: `${mount}/made/f.txt`, name: "g.txt" })).code, mount).toBe(200);
      const names = (await post("/api/fs/list", { path: `${mount}/made` })).data.content.map((e: any) => e.name).sort();
      expect(names, mount).toEqual(["g.txt", "inner"]);
      expect((await post("/api/fs/remove", { dir: mount, names: ["made"] })).code, mount).toBe(200);
      expect((await post("/api/fs/list", { path: `${mount}/made` })).message, mount).toBe(
        "failed get objs: failed get dir: object not found",
      );
    }
    expect(await davText("/made/g.txt")).toBeNull();
  });

  it("copies and moves files and folders across storages as background tasks", async () => {
    /** The reply's task, polled until it is done (tasks.workerd.test.ts covers the tasks themselves). */
    const finished = async (reply: Envelope, kind: string) => {
      expect(reply.code, reply.message).toBe(200);
      const info = await poll(
        () => post(`/api/task/${kind}/info?tid=${reply.data.tasks[0].id}`),
        (info) => [2, 4, 7].includes(info.data.state),
        { timeoutMs: 40_000, what: `${kind} finished` },
      );
      return info.data;
    };
    await upload("/dav/across.txt", "across", { "Content-Length": "6" });
    expect(
      await finished(await post("/api/fs/copy", { src_dir: "/dav", dst_dir: "/s3", names: ["across.txt"] }), "copy"),
    ).toMatchObject({ state: 2, name: "copy [/dav](/across.txt) to [/s3](/)" });
    expect(await s3Text("w/across.txt")).toBe("across");
    await upload("/ftp/crossing/a.txt", "aaa", { "Content-Length": "3" });
    await upload("/ftp/crossing/sub/b.txt", "bb", { "Content-Length": "2" });
    expect(
      (await finished(await post("/api/fs/copy", { src_dir: "/ftp", dst_dir: "/dav", names: ["crossing"] }), "copy"))
        .state,
    ).toBe(2);
    expect([await davText("/crossing/a.txt"), await davText("/crossing/sub/b.txt")]).toEqual(["aaa", "bb"]);
    expect(
      (await finished(await post("/api/fs/move", { src_dir: "/dav", dst_dir: "/s3", names: ["crossing"] }), "move"))
        .state,
    ).toBe(2);
    expect([
      await s3Text("w/crossing/a.txt"),
      await s3Text("w/crossing/sub/b.txt"),
      await davText("/crossing/a.txt"),
    ]).toEqual(["aaa", "bb", null]);
  }, 30_000);

  it("refuses bad names, existing targets, a folder into itself, a storage root, and says which names a batch did", async () => {
    for (const name of ["", ".", "..", "a/b", "a\\b", "x\u0000y"]) {
      expect((await post("/api/fs/rename", { path: "/s3/anything", name })).message, JSON.stringify(name)).toBe(
        "invalid file name",
      );
    }
    await upload("/s3/t1.txt", "1", { "Content-Length": "1" });
    await upload("/s3/t2.txt", "2", { "Content-Length": "1" });
    expect(await post("/api/fs/rename", { path: "/s3/t1.txt", name: "t2.txt" })).toEqual({
      code: 403,
      message: "file [t2.txt] exists",
      data: null,
    });
    expect((await post("/api/fs/rename", { path: "/s3/t1.txt", name: "a..b.txt" })).code).toBe(200);
    await post("/api/fs/mkdir", { path: "/s3/self" });
    expect((await post("/api/fs/move", { src_dir: "/s3", dst_dir: "/s3/self", names: ["self"] })).message).toBe(
      "cannot move self into itself",
    );
    expect((await post("/api/fs/remove", { dir: "/", names: ["s3"] })).message).toBe(
      "delete root folder is not allowed, please goto the manage page to delete the storage instead",
    );
    expect((await post("/api/fs/move", { src_dir: "/s3", dst_dir: "/s3", names: [] })).message).toBe(
      "Empty file names",
    );
    const partial = await post("/api/fs/copy", {
      src_dir: "/s3",
      dst_dir: "/dav",
      names: ["t2.txt", "gone.txt", "a..b.txt"],
    });
    expect(partial.code).toBe(500);
    expect(partial.message).toBe("object not found (copied before it: t2.txt; not copied: gone.txt, a..b.txt)");
    expect(partial.data).toEqual({ done: ["t2.txt"] });
    // t2.txt went as a task, which the refusal of the next name does not stop.
    expect(
      await poll(
        () => davText("/t2.txt"),
        (text) => text !== null,
        { timeoutMs: 5_000, what: "copied" },
      ),
    ).toBe("2");
    expect(await davText("/a..b.txt")).toBeNull();
  });

  it("batch_rename and regex_rename on WebDAV; recursive_move and remove_empty_directory on S3", async () => {
    await post("/api/fs/mkdir", { path: "/dav/batch" });
    for (const name of ["ep1.mkv", "ep2.mkv", "notes.txt"])
      await upload(`/dav/batch/${name}`, name, { "Content-Length": String(name.length) });
    expect(
      (
        await post("/api/fs/batch_rename", {
          src_dir: "/dav/batch",
          rename_objects: [{ src_name: "notes.txt", new_name: "readme.txt" }],
        })
      ).code,
    ).toBe(200);
    expect(
      (
        await post("/api/fs/regex_rename", {
          src_dir: "/dav/batch",
          src_name_regex: "^ep(\\d+)\\.mkv$",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a replacement pattern, not a template
          new_name_regex: "Episode ${1}.mkv",
        })
      ).code,
    ).toBe(200);
    const names = (await post("/api/fs/list", { path: "/dav/batch" })).data.content.map((e: any) => e.name).sort();
    expect(names).toEqual(["Episode 1.mkv", "Episode 2.mkv", "readme.txt"]);
    expect(await davText("/batch/Episode 2.mkv")).toBe("ep2.mkv");
    expect(
      (await post("/api/fs/regex_rename", { src_dir: "/dav/batch", src_name_regex: "(", new_name_regex: "x" })).message,
    ).toMatch(/^error parsing regexp: /);

    for (const path of ["/s3/tree/a/one.txt", "/s3/tree/a/b/two.txt", "/s3/tree/three.txt"])
      await upload(path, "x", { "Content-Length": "1" });
    await post("/api/fs/mkdir", { path: "/s3/flat" });
    await post("/api/fs/mkdir", { path: "/s3/tree/empty/deeper" });
    const moved = await post("/api/fs/recursive_move", {
      src_dir: "/s3/tree",
      dst_dir: "/s3/flat",
      conflict_policy: "cancel",
    });
    expect(moved).toEqual({ code: 200, message: "Successfully moved 3 files", data: null });
    expect([
      await s3Text("w/flat/one.txt"),
      await s3Text("w/flat/two.txt"),
      await s3Text("w/flat/three.txt"),
      await s3Text("w/tree/a/one.txt"),
    ]).toEqual(["x", "x", "x", null]);
    expect((await post("/api/fs/remove_empty_directory", { src_dir: "/s3/tree" })).code).toBe(200);
    expect((await post("/api/fs/list", { path: "/s3/tree" })).data.content).toBeNull();
  });

  it("needs the bit at the source and write at the destination; a reader changes nothing", async () => {
    await sql("DELETE FROM users WHERE username = 'reader'");
    await sql(
      'INSERT OR IGNORE INTO roles (name, permission_scopes) VALUES (\'copier\', \'[{"path":"/s3","permission":64},{"path":"/dav","permission":0}]\')',
    );
    const [[roleId]] = (await sql("SELECT id FROM roles WHERE name = 'copier'")) as [[number]];
    const [[hash]] = (await sql("SELECT password_hash FROM users WHERE username = 'admin'")) as [[string]];
    await sql("INSERT INTO users (username, password_hash, role) VALUES ('reader', ?, ?)", [hash, `[${roleId}]`]);
    const token = await signIn("fs-write-reader", "reader");
    await upload("/s3/mine.txt", "mine", { "Content-Length": "4" });
    expect(await post("/api/fs/copy", { src_dir: "/s3", dst_dir: "/dav", names: ["mine.txt"] }, token)).toEqual({
      code: 403,
      message: "permission denied",
      data: null,
    });
    expect(await davText("/mine.txt")).toBeNull();
    expect((await post("/api/fs/remove", { dir: "/s3", names: ["mine.txt"] }, token)).message).toBe(
      "permission denied",
    );
    expect((await upload("/s3/theirs.txt", "x", { "Content-Length": "1" }, token)).message).toBe("permission denied");
    expect(await s3Text("w/mine.txt")).toBe("mine");
    expect(await s3Text("w/theirs.txt")).toBeNull();
  });
});

describe("uploads whose body ends before its Content-Length", () => {
  it("fails with code 500 and leaves no partial file under the final name on WebDAV and FTP", async () => {
    for (const mount of ["/dav", "/ftp"]) {
      for (const how of ["error", "close"] as const) {
        const reply = await upload(`${mount}/cut/${how}.txt`, cutBody(how), { "Content-Length": "200000" });
        // The bytes that came before an error may be lost on the way in: only a body that ends counts them all.
        expect(reply, `${mount} ${how}`).toEqual({
          code: 500,
          message:
            how === "close"
              ? "the upload ended early: 100000 of its 200000 bytes arrived"
              : expect.stringMatching(/^the upload ended early: \d+ of its 200000 bytes arrived$/),
          data: null,
        });
        expect((await post("/api/fs/get", { path: `${mount}/cut/${how}.txt` })).message, `${mount} ${how}`).toBe(
          "object not found",
        );
      }
    }
    expect([await davText("/cut/error.txt"), await davText("/cut/close.txt")]).toEqual([null, null]);
  });

  it("an upload that ends early to S3 or WebDAV fails as before and leaves no uncaught error in workerd's log", async () => {
    const logged = await runtimeLog();
    for (const mount of ["/s3", "/dav"]) {
      for (const how of ["error", "close"] as const) {
        const reply = await upload(`${mount}/quiet/${how}.txt`, cutBody(how), { "Content-Length": "200000" });
        expect(reply, `${mount} ${how}`).toEqual({
          code: 500,
          message:
            how === "close"
              ? "the upload ended early: 100000 of its 200000 bytes arrived"
              : expect.stringMatching(/^the upload ended early: \d+ of its 200000 bytes arrived$/),
          data: null,
        });
        expect((await post("/api/fs/get", { path: `${mount}/quiet/${how}.txt` })).message, `${mount} ${how}`).toBe(
          "object not found",
        );
      }
    }
    expect([await s3Text("w/quiet/error.txt"), await s3Text("w/quiet/close.txt")]).toEqual([null, null]);
    expect([await davText("/quiet/error.txt"), await davText("/quiet/close.txt")]).toEqual([null, null]);
    // An upload that ends early is a normal fault: the upstream request it stops is aborted, not
    // failed (docs/decisions.md D12.8).
    expect((await runtimeLog(logged.next)).uncaught).toEqual([]);
  });

  it("a form whose body ends early (PUT /api/fs/form) leaves nothing on WebDAV and FTP either", async () => {
    const boundary = "----GatehouseCutBoundary";
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\nContent-Type: text/plain\r\n\r\n`;
    for (const mount of ["/dav", "/ftp"]) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`${head}${"0".repeat(100_000)}`));
          controller.close();
        },
      });
      const reply = await exports.default.fetch(
        new Request("http://gatehouse.test/api/fs/form", {
          method: "PUT",
          headers: {
            Authorization: admin,
            "File-Path": encodeURIComponent(`${mount}/form-cut.txt`),
            "Content-Type": `multipart/form-data; boundary=${boundary}`,
            "Content-Length": String(head.length + 200_000),
          },
          body,
        }),
      );
      expect(await reply.json(), mount).toEqual({
        code: 500,
        message: "the form ended before its Content-Length",
        data: null,
      });
      expect((await post("/api/fs/get", { path: `${mount}/form-cut.txt` })).message, mount).toBe("object not found");
    }
  });
});
