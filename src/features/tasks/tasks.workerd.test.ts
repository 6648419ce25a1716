// Background tasks inside workerd, on the queue of wrangler.toml (miniflare runs it): copies and
// moves between real storages (webdav-server, s3rver), their progress, cancel and retry, the cron
// sweep, and offline downloads from a local HTTP server.
import { exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Addition, s3Keys, s3Text, upstreamDav, upstreamDavText } from "../../../test/support/upstreams.ts";
import { callApi, type Envelope, signIn } from "../../../test/support/workerd-client.ts";

const servers = inject("storageServers");
const DAV_ROOT = "/library/tasks";

let admin: string;
const call = (path: string, body?: unknown, token = admin) => callApi(token, path, body);
const list = async (kind: string, state: "undone" | "done", token = admin): Promise<Envelope> =>
  (
    await exports.default.fetch(
      new Request(`http://gatehouse.test/api/task/${kind}/${state}`, { headers: { Authorization: token } }),
    )
  ).json();
const create = (mountPath: string, driver: string, addition: Record<string, unknown>) =>
  call("/api/admin/storage/create", { mount_path: mountPath, driver, addition: JSON.stringify(addition) });

/** Polls a task until it is done (state 2, 4 or 7); its last TaskInfo. */
async function settled(kind: string, id: string, timeoutMs = 30_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const info = await call(`/api/task/${kind}/info?tid=${id}`);
    expect(info.code, info.message).toBe(200);
    if ([2, 4, 7].includes(info.data.state) || Date.now() > until) return info.data;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function davPut(path: string, body: string | Uint8Array) {
  const response = await upstreamDav("PUT", `${DAV_ROOT}${path}`, { body });
  expect([200, 201, 204]).toContain(response.status);
}

beforeAll(async () => {
  admin = await signIn("tasks");
  expect([201, 405]).toContain((await upstreamDav("MKCOL", DAV_ROOT)).status);
});
beforeEach(async () => {
  await sql("DELETE FROM storages");
  await sql("DELETE FROM task_units");
  await sql("DELETE FROM tasks");
  expect((await create("/s3", "S3", { ...s3Addition(), root_folder_path: "/tasks" })).code).toBe(200);
  expect(
    (
      await create("/dav", "WebDav", {
        address: servers.webdavUrl,
        username: "davuser",
        password: "dav password",
        root_folder_path: DAV_ROOT,
      })
    ).code,
  ).toBe(200);
});

describe("copy between storages", () => {
  it("returns at once with its task, and copies a tree in the background", async () => {
    await upstreamDav("MKCOL", `${DAV_ROOT}/tree`);
    await upstreamDav("MKCOL", `${DAV_ROOT}/tree/sub`);
    for (let i = 0; i < 5; i++) await davPut(`/tree/f${i}.txt`, `file ${i}`);
    await davPut(`/tree/sub/deep.txt`, "deep");
    const reply = await call("/api/fs/copy", { src_dir: "/dav", dst_dir: "/s3", names: ["tree"] });
    expect(reply.code, reply.message).toBe(200);
    expect(reply.data.tasks).toHaveLength(1);
    expect(reply.data.tasks[0]).toMatchObject({ name: "copy [/dav](/tree) to [/s3](/)", state: 0, creator: "admin" });
    const done = await settled("copy", reply.data.tasks[0].id);
    expect(done).toMatchObject({ state: 2, progress: 100, error: "" });
    expect((await s3Keys("tasks/tree/")).sort()).toContain("tasks/tree/sub/deep.txt");
    expect(await s3Text("tasks/tree/f3.txt")).toBe("file 3");
  });
});
