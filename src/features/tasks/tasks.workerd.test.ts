// Background tasks inside workerd, on the queue of wrangler.toml (miniflare runs it): copies and
// moves between real storages (webdav-server, s3rver), their progress, cancel and retry, the cron
// sweep, and a unit whose creator lost a right; offline-download.workerd.test.ts has the downloads.
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import worker from "../../index.ts";
import { poll } from "../../../test/support/poll.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import {
  davAddition,
  davReadFaults,
  s3Addition,
  s3PendingUploads,
  s3Stall,
  s3Text,
  upstreamDav,
  upstreamDavText,
  upstreamRequests,
} from "../../../test/support/upstreams.ts";
import { type Envelope, makeUser } from "../../../test/support/workerd-client.ts";
import { DAV_ROOT, hits, mountTasks, S3_ROOT, s3Bytes, s3Files, setUpTasks, tasksAs } from "./workerd-fixture.ts";

const servers = inject("storageServers");
/** What workerd printed from line `from` on (test/support/runtime-log.ts). */
const runtimeLog = async (from = 0): Promise<{ next: number; lines: string[] }> =>
  (await fetch(`${servers.runtimeLogUrl}/?from=${from}`)).json();

let admin: string;
const { post, create, settled } = tasksAs(() => admin);
const list = async (kind: string, state: "undone" | "done", token = admin): Promise<Envelope> =>
  (
    await exports.default.fetch(
      new Request(`http://gatehouse.test/api/task/${kind}/${state}`, { headers: { Authorization: token } }),
    )
  ).json();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A running unit's heartbeat interval here (TASK_HEARTBEAT_MS of the workerd project, vitest.config.ts). */
const HEARTBEAT_MS = Number(env.TASK_HEARTBEAT_MS);

/** Waits until `ok` holds (polled), or fails naming `what`. */
async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  await poll(ok, Boolean, { timeoutMs: 20_000, what });
}

/** `n` bytes of a pattern that differs at every offset of a part. */
function patterned(n: number): Uint8Array {
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) bytes[i] = (i * 31 + (i >> 13)) % 256;
  return bytes;
}
/** The first offset where two byte arrays differ (-1: none); a deep equality of megabytes would hold the runtime's heap. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return -1;
}

async function davPut(path: string, body: string | Uint8Array) {
  const response = await upstreamDav("PUT", `${DAV_ROOT}${path}`, { body });
  expect([200, 201, 204], `PUT ${path}`).toContain(response.status);
}
async function davTree(folder: string, files: number, text = (i: number) => `file ${i} of ${folder}`) {
  await upstreamDav("DELETE", `${DAV_ROOT}/${folder}`);
  expect((await upstreamDav("MKCOL", `${DAV_ROOT}/${folder}`)).status).toBe(201);
  expect((await upstreamDav("MKCOL", `${DAV_ROOT}/${folder}/sub`)).status).toBe(201);
  // A few at a time: webdav-server takes them in parallel.
  for (let i = 0; i < files; i += 10)
    await Promise.all(
      Array.from({ length: Math.min(10, files - i) }, (_, j) =>
        davPut(`/${folder}/${(i + j) % 3 === 0 ? "sub/" : ""}f${i + j}.txt`, text(i + j)),
      ),
    );
}
const treePath = (folder: string, i: number) => `${folder}/${i % 3 === 0 ? "sub/" : ""}f${i}.txt`;
async function runCron() {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/10 * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

beforeAll(async () => {
  admin = await setUpTasks("tasks");
});
beforeEach(() => mountTasks(admin));

describe("copy and move between storages", () => {
  it("copy of 150 small files and a 12 MiB file answers at once; progress rises; every byte arrives", async () => {
    await davTree("many", 150);
    const big = patterned(12 * 1024 * 1024 + 5);
    await davPut("/many/big.bin", big);
    const started = Date.now();
    const reply = await post("/api/fs/copy", { src_dir: "/dav", dst_dir: "/s3", names: ["many"] });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(reply.code, reply.message).toBe(200);
    expect(reply.data.tasks).toEqual([
      expect.objectContaining({ name: "copy [/dav](/many) to [/s3](/)", state: 0, progress: 0, creator: "admin" }),
    ]);
    const id = reply.data.tasks[0].id;
    const seen: number[] = [];
    const done = await settled("copy", id, (task) => void seen.push(task.progress));
    expect(done).toMatchObject({ state: 2, progress: 100, error: "" });
    expect(
      seen.some((progress) => progress > 0 && progress < 100),
      `progress seen: ${seen.join(",")}`,
    ).toBe(true);
    const small = Array.from({ length: 150 }, (_, i) => `file ${i} of many`.length).reduce((a, b) => a + b, 0);
    expect(done.total_bytes).toBe(small + big.length);
    expect((await list("copy", "done")).data.map((task: any) => task.id)).toEqual([id]);
    expect((await s3Files(`${S3_ROOT}/many/`)).length).toBe(151);
    for (const i of [0, 1, 77, 149])
      expect(await s3Text(`${S3_ROOT}/${treePath("many", i)}`)).toBe(`file ${i} of many`);
    expect(firstDifference(await s3Bytes(`${S3_ROOT}/many/big.bin`), big)).toBe(-1);
    // The big file went in parts (TASK_PART_BYTES is 5 MiB here): its unit kept the tags of the
    // parts before the last (the last one completes the upload). s3rver gives a multipart object a
    // plain MD5 ETag, so the unit's row is the proof.
    const [[payload]] = (await sql("SELECT payload FROM task_units WHERE task_id = ? AND payload LIKE '%big.bin%'", [
      id,
    ])) as [[string]];
    const parted = JSON.parse(payload).parted;
    expect(parted).toMatchObject({ partBytes: 5 * 1024 * 1024 });
    expect(parted.tags).toHaveLength(2);
  }, 60_000);

  it("move leaves every source file in place until all of it arrived, then removes the source", async () => {
    await davTree("moving", 20);
    const reply = await post("/api/fs/move", { src_dir: "/dav", dst_dir: "/s3", names: ["moving"] });
    expect(reply.data.tasks[0].name).toBe("move [/dav](/moving) to [/s3](/)");
    const done = await settled("move", reply.data.tasks[0].id, async () => {
      // Whenever a source file is gone, every byte is at the destination already.
      if ((await upstreamDavText(`${DAV_ROOT}/${treePath("moving", 19)}`)) === null)
        expect((await s3Files(`${S3_ROOT}/moving/`)).length).toBe(20);
    });
    expect(done).toMatchObject({ state: 2, error: "" });
    expect(await upstreamDavText(`${DAV_ROOT}/moving/f1.txt`)).toBeNull();
    expect(await s3Text(`${S3_ROOT}/moving/sub/f0.txt`)).toBe("file 0 of moving");
  }, 30_000);

  it("cancel stops a copy between files: it ends canceled and nothing is written after", async () => {
    await davTree("canceled", 60);
    // The group's first run fails at f1 and waits a second for its retry (the queue no longer holds
    // a task's units back, D23.10): the cancel comes between files whatever the machine's pace.
    await davReadFaults.arm(`${DAV_ROOT}/canceled/f1.txt`, { status: 500 });
    const reply = await post("/api/fs/copy", { src_dir: "/dav", dst_dir: "/s3", names: ["canceled"] });
    const id = reply.data.tasks[0].id;
    await settled("copy", id, async (task) => {
      if (task.progress > 0 && task.state === 1) expect((await post(`/api/task/copy/cancel?tid=${id}`)).code).toBe(200);
    });
    const ended = (await post(`/api/task/copy/info?tid=${id}`)).data;
    expect(ended).toMatchObject({ state: 4, error: "context canceled" });
    const written = (await s3Files(`${S3_ROOT}/canceled/`)).length;
    expect(written).toBeLessThan(60);
    await sleep(5 * HEARTBEAT_MS);
    expect((await s3Files(`${S3_ROOT}/canceled/`)).length).toBe(written);
  }, 30_000);

  it("cancel in the middle of a part stops at the next heartbeat and gives the upload in parts up", async () => {
    const PART = 5 * 1024 * 1024;
    await upstreamDav("DELETE", `${DAV_ROOT}/halted`);
    expect((await upstreamDav("MKCOL", `${DAV_ROOT}/halted`)).status).toBe(201);
    await davPut("/halted/halted.bin", patterned(2 * PART + 10));
    // The second part's upload hangs until released, so the cancel lands while it runs.
    await s3Stall.arm(2);
    const reply = await post("/api/fs/copy", { src_dir: "/dav/halted", dst_dir: "/s3", names: ["halted.bin"] });
    const id = reply.data.tasks[0].id;
    await until("stuck in part 2", async () => (await s3Stall.held()) === 1);
    // Parts 1 and 3 went beside it (D23.6): the cancel lands once part 1's tag is stored.
    await until("part 1 stored", async () => {
      const [[payload]] = (await sql("SELECT payload FROM task_units WHERE task_id = ?", [id])) as [[string]];
      return JSON.parse(payload).parted?.tags.length === 1;
    });
    const stuckAt = Date.now();
    expect((await post(`/api/task/copy/cancel?tid=${id}`)).code).toBe(200);
    expect((await post(`/api/task/copy/info?tid=${id}`)).data.state).toBe(3);
    expect(await s3PendingUploads(`${S3_ROOT}/halted.bin`)).toHaveLength(1);
    // Its bytes flow again past the heartbeat's interval: the heartbeat learns of the cancel.
    await sleep(Math.max(0, stuckAt + HEARTBEAT_MS + 100 - Date.now()));
    await s3Stall.release();
    expect(await settled("copy", id)).toMatchObject({ state: 4, error: "context canceled" });
    expect(await s3PendingUploads(`${S3_ROOT}/halted.bin`)).toEqual([]);
    expect(await s3Text(`${S3_ROOT}/halted.bin`)).toBeNull();
  }, 60_000);

  it("fails with the upstream's error while S3 is down, and retry completes it once it is back", async () => {
    await davTree("outage", 4);
    const endpoint = s3Addition().endpoint;
    const point = (url: string) =>
      sql("UPDATE storages SET addition = json_set(addition, '$.endpoint', ?) WHERE mount_path = '/s3'", [url]);
    await point(`http://127.0.0.1:${servers.deadPort}`);
    const reply = await post("/api/fs/copy", { src_dir: "/dav", dst_dir: "/s3", names: ["outage"], overwrite: true });
    const id = reply.data.tasks[0].id;
    const failed = await settled("copy", id);
    expect(failed.state).toBe(7);
    expect(failed.error).not.toBe("");
    await point(endpoint);
    expect(await post(`/api/task/copy/retry?tid=${id}`)).toEqual({ code: 200, message: "success", data: null });
    expect(await settled("copy", id)).toMatchObject({ state: 2, error: "" });
    expect(await s3Text(`${S3_ROOT}/outage/f2.txt`)).toBe("file 2 of outage");
  }, 30_000);
});

describe("cancel while a file's bytes flow", () => {
  /**
   * Copies `name` from /slow (the WebDAV server behind a proxy that sends 10 KiB a second) into
   * `dstDir`, and cancels once its progress shows bytes arriving: after `whileRunning` checked
   * what the target holds by then. Answers the ended task.
   */
  async function cancelMidway(name: string, bytes: number, dstDir: string, whileRunning: () => Promise<void>) {
    await davPut(`/${name}`, patterned(bytes));
    expect((await create("/slow", "WebDav", { ...davAddition(DAV_ROOT), address: servers.slowWebdavUrl })).code).toBe(
      200,
    );
    const reply = await post("/api/fs/copy", { src_dir: "/slow", dst_dir: dstDir, names: [name], overwrite: true });
    const id = reply.data.tasks[0].id;
    let asked = false;
    await settled("copy", id, async (task) => {
      if (asked || task.state !== 1 || task.progress === 0) return;
      await whileRunning();
      expect((await post(`/api/task/copy/cancel?tid=${id}`)).code).toBe(200);
      asked = true;
    });
    return (await post(`/api/task/copy/info?tid=${id}`)).data;
  }

  it("removes the part of a file a WebDAV target kept", async () => {
    await upstreamDav("DELETE", `${DAV_ROOT}/out`);
    expect((await upstreamDav("MKCOL", `${DAV_ROOT}/out`)).status).toBe(201);
    expect((await create("/out", "WebDav", davAddition(`${DAV_ROOT}/out`))).code).toBe(200);
    const logged = await runtimeLog();
    // At 10 KiB a second, 1 MiB is still streaming long after the cancel.
    const ended = await cancelMidway("whole.bin", 1024 * 1024, "/out", async () => {
      expect((await upstreamDav("PROPFIND", `${DAV_ROOT}/out/whole.bin`, { headers: { Depth: "0" } })).status).toBe(
        207,
      );
    });
    expect(ended).toMatchObject({ state: 4, error: "context canceled" });
    expect(await upstreamDavText(`${DAV_ROOT}/out/whole.bin`)).toBeNull();
    // A cancel is a normal ending: the requests it stopped leave no uncaught error in workerd's log.
    expect((await runtimeLog(logged.next)).lines.filter((line) => /uncaught|Stopped/i.test(line))).toEqual([]);
  }, 30_000);
});

describe("the cron sweep", () => {
  /** A copy task written as a request leaves it, with its first unit, but no message sent (lost). */
  async function lostTask(name: string, unit: { state: string; attempts: number }) {
    // The admin's own id (user 1 is the guest): a unit runs for its creator as it stands now.
    await sql(
      "INSERT INTO tasks (id, kind, name, creator_id, creator, state, payload, created_at_ms, units_total) VALUES (?, 'copy', ?, (SELECT id FROM users WHERE username = 'admin'), 'admin', ?, ?, ?, 1)",
      [
        name,
        `copy [/dav](/${name}) to [/s3](/)`,
        unit.state === "running" ? 1 : 0,
        JSON.stringify({ unit: "copy", from: `/dav/${name}`, toDir: "/s3", name }),
        Date.now(),
      ],
    );
    await sql(
      "INSERT INTO task_units (task_id, kind, payload, state, attempts, lease_until_ms) VALUES (?, 'copy', ?, ?, ?, ?)",
      [name, JSON.stringify({ from: `/dav/${name}`, toDir: "/s3", name }), unit.state, unit.attempts, Date.now() - 1],
    );
  }

  it("sends a lost unit again and restarts one whose worker died; fails one out of attempts, which retry completes", async () => {
    for (const name of ["lost", "died", "spent"]) await davTree(name, 3);
    await lostTask("lost", { state: "queued", attempts: 0 });
    await lostTask("died", { state: "running", attempts: 1 });
    await lostTask("spent", { state: "running", attempts: 3 });
    await runCron();
    expect(await settled("copy", "lost")).toMatchObject({ state: 2 });
    expect(await settled("copy", "died")).toMatchObject({ state: 2 });
    expect(await settled("copy", "spent")).toMatchObject({
      state: 7,
      error: "the task was interrupted and its attempts are used up: retry it",
    });
    expect(await s3Text(`${S3_ROOT}/died/f1.txt`)).toBe("file 1 of died");
    expect(await s3Text(`${S3_ROOT}/spent/f1.txt`)).toBeNull();
    await post("/api/task/copy/retry?tid=spent");
    expect(await settled("copy", "spent")).toMatchObject({ state: 2, error: "" });
    expect(await s3Text(`${S3_ROOT}/spent/f1.txt`)).toBe("file 1 of spent");
    // A sweep with nothing expired sends nothing.
    await runCron();
    expect(await sql("SELECT count(*) FROM task_units WHERE state IN ('queued', 'running')")).toEqual([[0]]);
  }, 30_000);

  it("a big file's part whose worker died mid-way starts again at that part; the parts stored are not read or sent again", async () => {
    const PART = 5 * 1024 * 1024; // TASK_PART_BYTES of the workerd project
    const big = patterned(3 * PART + 4321); // four parts, the last a small one
    await upstreamDav("DELETE", `${DAV_ROOT}/resume`);
    expect((await upstreamDav("MKCOL", `${DAV_ROOT}/resume`)).status).toBe(201);
    await davPut("/resume/big.bin", big);
    const [s3Seen, davSeen] = [(await upstreamRequests("s3")).length, (await upstreamRequests("dav")).length];
    // The worker of the third part gets stuck in its upload, as one that died there: no bytes of it
    // reach s3rver, its row stays running and no heartbeat renews its lease.
    await s3Stall.arm(3);
    const reply = await post("/api/fs/copy", { src_dir: "/dav/resume", dst_dir: "/s3", names: ["big.bin"] });
    const id = reply.data.tasks[0].id;
    await until("stuck in part 3", async () => (await s3Stall.held()) === 1);
    const stuckAt = Date.now();
    const unit = async () => {
      const [[state, payload]] = (await sql("SELECT state, payload FROM task_units WHERE task_id = ?", [id])) as [
        [string, string],
      ];
      return { state, parted: JSON.parse(payload).parted as { upload: unknown; tags: string[] } | undefined };
    };
    // Parts 1, 2 and 4 go beside part 3 (D23.6); the tags stored are those of parts 1 and 2 only,
    // the ones before the gap.
    await until("parts 1 and 2 stored", async () => (await unit()).parted?.tags.length === 2);
    const stuck = await unit();
    expect(stuck.state).toBe("running");
    expect(stuck.parted?.tags).toHaveLength(2);
    // Its lease runs out (2 minutes without a heartbeat; aged here) and the cron restarts the unit.
    await sql("UPDATE task_units SET lease_until_ms = 0 WHERE task_id = ?", [id]);
    await runCron();
    // Then the old worker comes back to life (S3 takes its bytes, then fails the part) past its
    // heartbeat's interval: it learns the unit is no longer its own and stops, leaving the upload
    // in parts to the restarted run.
    await sleep(Math.max(0, stuckAt + HEARTBEAT_MS + 100 - Date.now()));
    await s3Stall.release();
    expect(await settled("copy", id)).toMatchObject({ state: 2, progress: 100, error: "" });
    expect(firstDifference(await s3Bytes(`${S3_ROOT}/big.bin`), big)).toBe(-1);
    expect(await s3PendingUploads(`${S3_ROOT}/big.bin`)).toEqual([]);
    // The same upload went on: the tags stored before kept, one more added (the fourth part completes it).
    const ended = await unit();
    expect(ended.state).toBe("done");
    expect(ended.parted?.upload).toEqual(stuck.parted?.upload);
    expect(ended.parted?.tags.slice(0, 2)).toEqual(stuck.parted?.tags);
    expect(ended.parted?.tags).toHaveLength(3);
    // What the upstreams saw: parts 1 and 2 read from WebDAV and sent to S3 once each, parts 3 and 4
    // twice (the stuck worker's and the restart's: part 4's tag came after the gap, so it was not
    // stored), one upload begun and completed.
    const s3Requests = (await upstreamRequests("s3")).slice(s3Seen).filter((line) => line.includes("/big.bin"));
    const partsSent = s3Requests.flatMap(
      (line) => new URL(line.split(" ")[1]!, "http://s3.test").searchParams.get("partNumber") ?? [],
    );
    expect(partsSent.sort()).toEqual(["1", "2", "3", "3", "4", "4"]);
    expect(s3Requests.filter((line) => line.startsWith("POST ")).length, "begin and complete").toBe(2);
    const rangesRead = (await upstreamRequests("dav"))
      .slice(davSeen)
      .filter((line) => line.startsWith("GET ") && line.includes("/resume/big.bin"))
      .map((line) => line.split(" ")[2]);
    // A part's first read asks for all of it (a read that breaks off is taken up from where it stopped).
    const partRange = (i: number) => `bytes=${i * PART}-${Math.min(big.length, (i + 1) * PART) - 1}`;
    for (const [i, times] of [1, 1, 2, 2].entries())
      expect(rangesRead.filter((range) => range === partRange(i)).length, `reads of part ${i + 1}`).toBe(times);
  }, 60_000);

  it("a stalled part holds the other lanes to the 7 parts after it, all a rerun sends again", async () => {
    const PART = 5 * 1024 * 1024;
    const big = patterned(9 * PART + 4321); // ten parts
    await upstreamDav("DELETE", `${DAV_ROOT}/ahead`);
    expect((await upstreamDav("MKCOL", `${DAV_ROOT}/ahead`)).status).toBe(201);
    await davPut("/ahead/ahead.bin", big);
    const s3Seen = (await upstreamRequests("s3")).length;
    const partsSent = async () =>
      (await upstreamRequests("s3"))
        .slice(s3Seen)
        .filter((line) => line.startsWith("PUT ") && line.includes("/ahead.bin"))
        .flatMap((line) => new URL(line.split(" ")[1]!, "http://s3.test").searchParams.get("partNumber") ?? [])
        .map(Number)
        .sort((a, b) => a - b);
    await s3Stall.arm(1);
    const reply = await post("/api/fs/copy", { src_dir: "/dav/ahead", dst_dir: "/s3", names: ["ahead.bin"] });
    const id = reply.data.tasks[0].id;
    await until("part 1 stalled", async () => (await s3Stall.held()) === 1);
    // Parts 2 to 8 go beside it (the stalled one is in S3's log as it came); part 9 would be 8 past
    // it (D23.9), so no lane starts it, however long part 1 hangs (here, long enough for several
    // more parts to go).
    await until("parts 2 to 8 sent", async () => (await partsSent()).length >= 8);
    await sleep(1_500);
    expect(await partsSent()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // Part 1 fails: no tag was stored past the gap, so the rerun sends every part again, parts 2 to 8
    // a second time and never 9 and 10 twice.
    await s3Stall.release();
    expect(await settled("copy", id)).toMatchObject({ state: 2, progress: 100, error: "" });
    expect(firstDifference(await s3Bytes(`${S3_ROOT}/ahead.bin`), big)).toBe(-1);
    expect(await s3PendingUploads(`${S3_ROOT}/ahead.bin`)).toEqual([]);
    expect(await partsSent()).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 10]);
  }, 60_000);

  /** A copy task of `name` whose one unit (`kind`, `payload`) was left running by a worker that died. */
  async function diedWith(name: string, kind: string, payload: unknown) {
    await sql(
      "INSERT INTO tasks (id, kind, name, creator_id, creator, state, payload, created_at_ms, units_total, total_bytes) VALUES (?, 'copy', ?, (SELECT id FROM users WHERE username = 'admin'), 'admin', 1, ?, ?, 1, 0)",
      [
        name,
        `copy [/dav](/${name}) to [/s3](/)`,
        JSON.stringify({ unit: "copy", from: `/dav/${name}`, toDir: "/s3", name }),
        Date.now(),
      ],
    );
    await sql(
      "INSERT INTO task_units (task_id, kind, payload, state, attempts, lease_until_ms) VALUES (?, ?, ?, 'running', 1, ?)",
      [name, kind, JSON.stringify(payload), Date.now() - 1],
    );
  }

  it("a group of small files restarted after its worker died writes only the files not stored yet", async () => {
    await davTree("grouped", 6);
    expect((await upstreamDav("MKCOL", `${DAV_ROOT}/grouped-copy`)).status).toBe(201);
    const names = ["f1.txt", "f2.txt", "f4.txt", "f5.txt"];
    const files = names.map((name) => ({ name, size: `file ${name.slice(1, 2)} of grouped`.length }));
    // Its heartbeat had stored f1 and f2 as done before the worker died.
    await diedWith("grouped", "files", {
      fromDir: "/dav/grouped",
      toDir: "/s3/grouped",
      files,
      done: ["f1.txt", "f2.txt"],
    });
    const s3Seen = (await upstreamRequests("s3")).length;
    await runCron();
    expect(await settled("copy", "grouped")).toMatchObject({ state: 2, error: "" });
    const puts = (await upstreamRequests("s3"))
      .slice(s3Seen)
      .filter((line) => line.startsWith("PUT ") && line.includes("/grouped/"))
      .map((line) => line.split(" ")[1]!.split("?")[0]!.split("/").pop());
    expect(puts.sort()).toEqual(["f4.txt", "f5.txt"]);
    expect(await s3Text(`${S3_ROOT}/grouped/f5.txt`)).toBe("file 5 of grouped");
  }, 30_000);

  it("a unit whose payload cannot be read fails its task, naming the unit and the field", async () => {
    await diedWith("corrupt", "copy", { from: 7, toDir: "/s3", name: "corrupt" });
    await runCron();
    const ended = await settled("copy", "corrupt");
    expect(ended.state).toBe(7);
    expect(ended.error).toMatch(/^task unit \d+ \(copy\) holds a payload that cannot be read: from: /);
  }, 30_000);

  it("a worker stuck in the last part that comes back before any heartbeat does not complete the restarted run's upload", async () => {
    const PART = 5 * 1024 * 1024;
    const big = patterned(2 * PART + 999); // three parts; the last one is read whole before it is sent
    await upstreamDav("DELETE", `${DAV_ROOT}/last`);
    expect((await upstreamDav("MKCOL", `${DAV_ROOT}/last`)).status).toBe(201);
    await davPut("/last/last.bin", big);
    const s3Seen = (await upstreamRequests("s3")).length;
    await s3Stall.arm(3);
    const reply = await post("/api/fs/copy", { src_dir: "/dav/last", dst_dir: "/s3", names: ["last.bin"] });
    const id = reply.data.tasks[0].id;
    await until("the worker stuck in part 3", async () => (await s3Stall.held()) === 1);
    // Parts 1 and 2 went beside it (D23.6): stuck in the last part means their tags are stored.
    await until("parts 1 and 2 stored", async () => {
      const [[payload]] = (await sql("SELECT payload FROM task_units WHERE task_id = ?", [id])) as [[string]];
      return JSON.parse(payload).parted?.tags.length === 2;
    });
    // Its lease runs out and the cron restarts the unit (its message waits behind the stuck one).
    await sql("UPDATE task_units SET lease_until_ms = 0 WHERE task_id = ?", [id]);
    await runCron();
    // Then its part is stored after all: with no bytes left to read, no heartbeat tells it the unit
    // is gone, so only the check before completing stops it. The restarted run completes the upload.
    await s3Stall.release({ pass: true });
    expect(await settled("copy", id)).toMatchObject({ state: 2, progress: 100, error: "" });
    expect(firstDifference(await s3Bytes(`${S3_ROOT}/last.bin`), big)).toBe(-1);
    expect(await s3PendingUploads(`${S3_ROOT}/last.bin`)).toEqual([]);
    const s3Requests = (await upstreamRequests("s3")).slice(s3Seen).filter((line) => line.includes("/last.bin"));
    // One upload begun and completed once, by the restarted run, which sent the last part again.
    expect(s3Requests.filter((line) => line.startsWith("POST ")).length, "begin and complete").toBe(2);
    const partsSent = s3Requests.flatMap(
      (line) => new URL(line.split(" ")[1]!, "http://s3.test").searchParams.get("partNumber") ?? [],
    );
    expect(partsSent.sort()).toEqual(["1", "2", "3", "3"]);
  }, 60_000);
});

describe("a task runs for its creator as it stands now", () => {
  /** A task as its request left it, made by `creatorId`, whose first unit's message is lost: the cron sends it. */
  async function queuedTask(
    id: string,
    creatorId: number,
    kind: string,
    payload: { unit: string } & Record<string, unknown>,
  ) {
    await sql(
      "INSERT INTO tasks (id, kind, name, creator_id, creator, state, payload, created_at_ms, units_total) VALUES (?, ?, ?, ?, ?, 0, ?, ?, 1)",
      [id, kind, id, creatorId, id, JSON.stringify(payload), Date.now()],
    );
    const { unit, ...unitPayload } = payload;
    await sql("INSERT INTO task_units (task_id, kind, payload, state, lease_until_ms) VALUES (?, ?, ?, 'queued', ?)", [
      id,
      unit,
      JSON.stringify(unitPayload),
      Date.now() - 1,
    ]);
  }

  it("a unit whose creator lost the copy or offline-download bit, was disabled or deleted fails its task when it starts, reading and writing nothing", async () => {
    const suffix = Date.now().toString(36);
    const ALL = 0xff;
    const COPY = 1 << 6;
    const OFFLINE = 1 << 2;
    const users: Record<string, number> = {};
    for (const name of ["narrowed", "disabled", "deleted", "no-download", "unchanged"]) {
      users[name] = await makeUser(admin, `${name}-${suffix}`, { "/": ALL });
      if (name !== "no-download") await davTree(`${name}-${suffix}`, 2);
      if (name !== "no-download")
        await queuedTask(`${name}-${suffix}`, users[name]!, "copy", {
          unit: "copy",
          from: `/dav/${name}-${suffix}`,
          toDir: "/s3",
          name: `${name}-${suffix}`,
        });
    }
    const url = `${servers.downloadsUrl}/bytes/10/never-${suffix}.bin`;
    await queuedTask(`no-download-${suffix}`, users["no-download"]!, "offline_download", {
      unit: "fetch",
      url,
      toDir: "/s3/never",
    });
    // The admin changes them after their tasks were made, before their units start.
    const scopes = (bits: number) => JSON.stringify([{ path: "/", permission: bits }]);
    await sql("UPDATE roles SET permission_scopes = ? WHERE name = ?", [
      scopes(ALL & ~COPY),
      `narrowed-${suffix}-role`,
    ]);
    await sql("UPDATE roles SET permission_scopes = ? WHERE name = ?", [
      scopes(ALL & ~OFFLINE),
      `no-download-${suffix}-role`,
    ]);
    await sql("UPDATE users SET disabled = 1 WHERE id = ?", [users.disabled!]);
    await sql("DELETE FROM users WHERE id = ?", [users.deleted!]);
    const before = (await hits())[`/bytes/10/never-${suffix}.bin`] ?? 0;
    await runCron();
    const ended = async (id: string, kind = "copy") => {
      const task = await settled(kind, `${id}-${suffix}`);
      return [task.state, task.error];
    };
    const cannot = (what: string) => `the user who created this task may no longer ${what}: it cannot run`;
    expect(await ended("narrowed")).toEqual([7, cannot("copy from /dav")]);
    expect(await ended("disabled")).toEqual([7, "the user who created this task is disabled: it cannot run"]);
    expect(await ended("deleted")).toEqual([7, "the user who created this task no longer exists: it cannot run"]);
    expect(await ended("no-download", "offline_download")).toEqual([7, cannot("download offline to /s3/never")]);
    expect(await ended("unchanged")).toEqual([2, ""]);
    for (const name of ["narrowed", "disabled", "deleted"])
      expect(await s3Files(`${S3_ROOT}/${name}-${suffix}/`), name).toEqual([]);
    expect(await s3Text(`${S3_ROOT}/unchanged-${suffix}/f1.txt`)).toBe(`file 1 of unchanged-${suffix}`);
    expect((await hits())[`/bytes/10/never-${suffix}.bin`] ?? 0).toBe(before);
  }, 30_000);
});
