// Offline downloads inside workerd, as background tasks on the queue of wrangler.toml: a URL of a
// local HTTP server (storage-servers.ts startDownloads) streamed into S3 and WebDAV, and the
// refusals (bits, schemes, private hosts on every redirect hop, a server that ignores ranges).
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { s3PendingUploads, upstreamDavText } from "../../../test/support/upstreams.ts";
import { member } from "../../../test/support/workerd-client.ts";
import { DAV_ROOT, hits, mountTasks, S3_ROOT, s3Bytes, s3Files, setUpTasks, tasksAs } from "./workerd-fixture.ts";

const servers = inject("storageServers");

let admin: string;
const { post, settled } = tasksAs(() => admin);

beforeAll(async () => {
  admin = await setUpTasks("offline-download");
});
beforeEach(() => mountTasks(admin));

describe("offline download", () => {
  it("streams a URL into S3 in parts, byte-exact, named by the URL; another by Content-Disposition into WebDAV", async () => {
    const size = 11 * 1024 * 1024 + 17;
    const reply = await post("/api/fs/add_offline_download", {
      path: "/s3/downloads",
      urls: [`${servers.downloadsUrl}/bytes/${size}/big%20file.bin`, "  ", `${servers.downloadsUrl}/disposition/1000`],
      tool: "SimpleHttp",
      delete_policy: "upload_download_stream",
    });
    expect(reply.code, reply.message).toBe(200);
    expect(reply.data.tasks.map((task: any) => task.name)).toEqual([
      `download ${servers.downloadsUrl}/bytes/${size}/big%20file.bin to (/s3/downloads)`,
      `download ${servers.downloadsUrl}/disposition/1000 to (/s3/downloads)`,
    ]);
    for (const task of reply.data.tasks)
      expect(await settled("offline_download", task.id)).toMatchObject({ state: 2, error: "" });
    const stored = await s3Bytes(`${S3_ROOT}/downloads/big file.bin`);
    expect(stored.length).toBe(size);
    let wrong = -1;
    for (let i = 0; i < size && wrong < 0; i++) if (stored[i] !== i % 251) wrong = i;
    expect(wrong).toBe(-1);
    expect((await s3Bytes(`${S3_ROOT}/downloads/named by header.bin`)).length).toBe(1000);
  }, 30_000);

  it("refuses a user without the offline-download bit or without write before fetching anything", async () => {
    const before = await hits();
    const READ_WRITE = 1 << 3;
    const OFFLINE = 1 << 2;
    for (const [name, bits] of [
      ["no-offline", READ_WRITE],
      ["no-write", OFFLINE],
    ] as const) {
      const token = await member(admin, `dl-${name}`, { "/": bits });
      expect(
        await post(
          "/api/fs/add_offline_download",
          { path: "/s3", urls: [`${servers.downloadsUrl}/bytes/10/refused.bin`], tool: "SimpleHttp" },
          token,
        ),
        name,
      ).toEqual({ code: 403, message: "permission denied", data: null });
    }
    const allowed = await member(admin, "dl-allowed", { "/": READ_WRITE | OFFLINE });
    const reply = await post(
      "/api/fs/add_offline_download",
      { path: "/s3", urls: [`${servers.downloadsUrl}/bytes/10/allowed.bin`], tool: "SimpleHttp" },
      allowed,
    );
    expect(reply.code, reply.message).toBe(200);
    expect(await settled("offline_download", reply.data.tasks[0].id)).toMatchObject({ state: 2 });
    expect((await hits())["/bytes/10/refused.bin"] ?? 0).toBe(before["/bytes/10/refused.bin"] ?? 0);
    // Its task is its own: the admin sees it, another user does not.
    const other = await post(`/api/task/offline_download/info?tid=${reply.data.tasks[0].id}`, undefined, allowed);
    expect(other.data.creator).toBe("dl-allowed");
  }, 30_000);

  it("refuses other schemes and tools; a URL without a size or with an error status fails its task", async () => {
    const add = (urls: string[], tool = "SimpleHttp") =>
      post("/api/fs/add_offline_download", { path: "/dav/dl", urls, tool });
    expect(await add(["ftp://example.com/x"])).toEqual({
      code: 400,
      message: "only http and https URLs can be downloaded",
      data: null,
    });
    expect(await add([`${servers.downloadsUrl}/bytes/1/x`], "aria2")).toEqual({
      code: 500,
      message: "failed get tool: tool aria2 not found",
      data: null,
    });
    const unsized = (await add([`${servers.downloadsUrl}/unsized/100`])).data.tasks[0];
    expect(await settled("offline_download", unsized.id)).toMatchObject({
      state: 7,
      error: "the server did not say how big the file is (no Content-Length): a storage upload needs the size first",
    });
    const missing = (await add([`${servers.downloadsUrl}/status/404`])).data.tasks[0];
    expect(await settled("offline_download", missing.id)).toMatchObject({ state: 7, error: "http status code 404" });
    const fine = (await add([`${servers.downloadsUrl}/bytes/300/small.bin`])).data.tasks[0];
    expect(await settled("offline_download", fine.id)).toMatchObject({ state: 2 });
    expect((await upstreamDavText(`${DAV_ROOT}/dl/small.bin`))?.length).toBe(300);
  }, 30_000);

  // The workerd project opts in to 127.0.0.1 only (vitest.config.ts), where the download server
  // listens: `localhost` reaches the same server but stays refused, as every private host does
  // without the opt-in (download-targets.test.ts: the opt-in off, every spelling).
  it("refuses a private host the opt-in does not name: in the request, and on every redirect hop before fetching it", async () => {
    const add = (urls: string[]) => post("/api/fs/add_offline_download", { path: "/dav/dl", urls, tool: "SimpleHttp" });
    const local = servers.downloadsUrl.replace("127.0.0.1", "localhost");
    const refusal = (host: string) =>
      `refused to download from ${host}: loopback, private and link-local addresses are off limits unless OFFLINE_DOWNLOAD_PRIVATE_HOSTS names them`;
    const before = await hits();
    expect(await add([`${local}/bytes/10/direct.bin`])).toEqual({
      code: 400,
      message: refusal("localhost"),
      data: null,
    });
    const bounce = (to: string, name: string) =>
      `${servers.downloadsUrl}/redirect/${name}?to=${encodeURIComponent(to)}`;
    const reply = await add([
      bounce(`${local}/bytes/10/bounced.bin`, "to-localhost"),
      bounce("http://169.254.169.254/latest/meta-data/", "to-metadata"),
      bounce(`http://[::ffff:127.0.0.1]:${servers.downloadsUrl.split(":").pop()}/bytes/10/mapped.bin`, "to-mapped"),
      bounce(`${servers.downloadsUrl}/bytes/10/hop.bin`, "to-allowed"),
      `${servers.downloadsUrl}/redirect/loop`,
    ]);
    expect(reply.code, reply.message).toBe(200);
    const ended = [];
    for (const task of reply.data.tasks) ended.push(await settled("offline_download", task.id));
    expect(ended.map((task) => [task.state, task.error])).toEqual([
      [7, refusal("localhost")],
      [7, refusal("169.254.169.254")],
      [7, refusal("[::ffff:7f00:1]")],
      [2, ""],
      [7, "stopped after 10 redirects"],
    ]);
    // Refused at once (no second attempt), and the refused hops never fetched.
    const after = await hits();
    const count = (path: string) => (after[path] ?? 0) - (before[path] ?? 0);
    expect(count("/redirect/to-localhost")).toBe(1);
    expect(count("/bytes/10/direct.bin") + count("/bytes/10/bounced.bin") + count("/bytes/10/mapped.bin")).toBe(0);
    expect(count("/bytes/10/hop.bin")).toBe(1);
    expect(count("/redirect/loop")).toBe(11);
    // Named by the URL asked for, as before redirects were followed by hand.
    expect((await upstreamDavText(`${DAV_ROOT}/dl/to-allowed`))?.length).toBe(10);
    expect(await upstreamDavText(`${DAV_ROOT}/dl/bounced.bin`)).toBeNull();
  }, 30_000);

  it("a server that advertises ranges but answers a ranged read with the whole file fails the task clearly, read once per attempt", async () => {
    const size = 6 * 1024 * 1024; // two parts of the workerd project's 5 MiB
    const path = `/noranges/${size}`;
    const before = (await hits())[path] ?? 0;
    const reply = await post("/api/fs/add_offline_download", {
      path: "/s3/ranges",
      urls: [`${servers.downloadsUrl}${path}`],
      tool: "SimpleHttp",
    });
    expect(reply.code, reply.message).toBe(200);
    expect(await settled("offline_download", reply.data.tasks[0].id)).toMatchObject({
      state: 7,
      error:
        "the server advertised ranges (Accept-Ranges: bytes) but answered a ranged read with the whole file: it cannot be downloaded in parts",
    });
    // One attempt: its first read (the size and the name), then the two parts' ranged reads, side by
    // side (docs/decisions.md D23.6); no retry reads it again.
    expect(((await hits())[path] ?? 0) - before).toBe(3);
    expect(await s3Files(`${S3_ROOT}/ranges/`)).toEqual([]);
    expect(await s3PendingUploads(`${S3_ROOT}/ranges/`)).toEqual([]);
  }, 30_000);
});
