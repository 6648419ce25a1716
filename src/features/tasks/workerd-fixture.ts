// What tasks and offline-download .workerd.test.ts share: the admin's calls (post, a storage made,
// a task polled until it ends), what landed on s3rver, what the download server was asked, and
// their scene: the admin signed in under the file's own client id, then before each test no tasks
// and S3 (/s3) and webdav-server (/dav) mounted afresh below folders of these suites' own.
import { expect, inject } from "vitest";
import { poll } from "../../../test/support/poll.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { davAddition, s3Addition, s3Keys, s3Object, upstreamDav } from "../../../test/support/upstreams.ts";
import { apiAs, type Envelope, signIn } from "../../../test/support/workerd-client.ts";

/** A task's TaskInfo, as the envelope's data holds it. */
type TaskInfo = Envelope["data"];

export const DAV_ROOT = "/library/tasks";
/** s3rver keys of the /s3 storage start here. */
export const S3_ROOT = "tasks";

/** The calls of the admin `admin()` (signed in in beforeAll). */
export function tasksAs(admin: () => string) {
  const { post } = apiAs(admin);
  const create = (mountPath: string, driver: string, addition: Record<string, unknown>) =>
    post("/api/admin/storage/create", { mount_path: mountPath, driver, addition: JSON.stringify(addition) });
  /** Polls a task until it is done (state 2, 4 or 7), calling `each` with every TaskInfo seen; the last one. */
  const settled = (kind: string, id: string, each: (task: TaskInfo) => Promise<void> | void = () => {}) =>
    poll<TaskInfo>(
      async () => {
        const info = await post(`/api/task/${kind}/info?tid=${id}`);
        expect(info.code, info.message).toBe(200);
        await each(info.data);
        return info.data;
      },
      (task) => [2, 4, 7].includes(task.state),
      { timeoutMs: 40_000, what: `task ${id} done` },
    );
  return { post, create, settled };
}

/** The files a copy put under `prefix` (folders leave their placeholder object, `keep`). */
export const s3Files = async (prefix: string) => (await s3Keys(prefix)).filter((key) => !key.endsWith("/keep"));
export const s3Bytes = async (key: string) => new Uint8Array(await (await s3Object(key)).arrayBuffer());

/** How many requests each path of the download server got. */
export const hits = async () =>
  (await (await fetch(`${inject("storageServers").downloadsUrl}/hits`)).json()) as Record<string, number>;

/** beforeAll: the admin signed in as `clientId`, the WebDAV folder there; the token. */
export async function setUpTasks(clientId: string): Promise<string> {
  const admin = await signIn(clientId);
  expect([201, 405]).toContain((await upstreamDav("MKCOL", DAV_ROOT)).status);
  return admin;
}

/** beforeEach: no tasks, and only /s3 and /dav mounted. */
export async function mountTasks(admin: string): Promise<void> {
  const { create } = tasksAs(() => admin);
  await sql("DELETE FROM storages");
  await sql("DELETE FROM task_units");
  await sql("DELETE FROM tasks");
  expect((await create("/s3", "S3", { ...s3Addition(), root_folder_path: `/${S3_ROOT}` })).code).toBe(200);
  expect((await create("/dav", "WebDav", davAddition(DAV_ROOT))).code).toBe(200);
}
