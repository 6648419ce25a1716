// The task API on the rows of `tasks` (the work behind them runs in workerd: tasks.workerd.test.ts):
// the lists and their visibility, info, cancel, delete, retry and their batch forms, the clears,
// and a copy between storages answered with its task. The queue binding here records what is sent.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { send, signInAdmin, signInMember } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type Envelope, type UnitFixture } from "../../../test/support/unit.ts";
import type { RoleRow, UserRow } from "../../auth/store.ts";
import { roles, storages, taskUnits, tasks, users } from "../../db/schema.ts";
import type { MetaRow } from "../fs/rules.ts";
import { creatorRefusal } from "./rules.ts";

let fixture: UnitFixture;
let admin: string;
let member: string;
let memberId: number;
/** What the Worker sent to TASK_QUEUE, in order. */
let sent: { id: number; ticket: number }[];
const recordingQueue = {
  send: async (body: { id: number; ticket: number }) => void sent.push(body),
  sendBatch: async (messages: { body: { id: number; ticket: number } }[]) =>
    void sent.push(...messages.map((message) => message.body)),
} as unknown as Queue<{ id: number; ticket: number }>;

const { send: request } = api(
  () => fixture,
  () => admin,
  { TASK_QUEUE: recordingQueue },
);

async function insertTask(
  id: string,
  creatorId: number,
  state: number,
  fields: Partial<typeof tasks.$inferInsert> = {},
) {
  await fixture.db.insert(tasks).values({
    id,
    kind: "copy",
    name: `copy [/a](/${id}) to [/b](/)`,
    creatorId,
    creator: creatorId === 1 ? "admin" : "tasker",
    state,
    payload: { unit: "copy", from: `/a/${id}`, toDir: "/b", name: id },
    createdAtMs: Date.now(),
    ...fields,
  });
}

beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
  member = await signInMember(fixture, "tasker", [{ path: "/", permission: 0xff }]);
  memberId = (await fixture.db.select({ id: users.id }).from(users).where(eq(users.username, "tasker")))[0]!.id;
});
afterAll(() => fixture.close());
beforeEach(async () => {
  sent = [];
  await fixture.db.delete(taskUnits);
  await fixture.db.delete(tasks);
  await fixture.db.delete(storages);
});

describe("task lists", () => {
  it("list undone and done tasks as AList's TaskInfo: the caller's own, an admin's everyone's", async () => {
    await insertTask("mine-running", memberId, 1, {
      totalBytes: 400,
      doneBytes: 100,
      startedAtMs: Date.UTC(2026, 0, 1),
    });
    await insertTask("mine-failed", memberId, 7, { error: "upstream down" });
    await insertTask("admins", 1, 0);
    const undone = await request("GET", "/api/task/copy/undone", undefined, member);
    expect(undone).toEqual({
      code: 200,
      message: "success",
      data: [
        {
          id: "mine-running",
          name: "copy [/a](/mine-running) to [/b](/)",
          creator: "tasker",
          creator_role: [],
          state: 1,
          status: "running",
          progress: 25,
          start_time: "2026-01-01T00:00:00.000Z",
          end_time: null,
          total_bytes: 400,
          error: "",
        },
      ],
    });
    expect(
      (await request("GET", "/api/task/copy/done", undefined, member)).data.map((t: any) => [t.id, t.error]),
    ).toEqual([["mine-failed", "upstream down"]]);
    expect((await request("GET", "/api/task/copy/undone", undefined, admin)).data.map((t: any) => t.id)).toEqual([
      "mine-running",
      "admins",
    ]);
    expect((await request("GET", "/api/admin/task/copy/undone", undefined, admin)).data).toHaveLength(2);
    expect((await request("GET", "/api/task/move/undone", undefined, admin)).data).toEqual([]);
    expect((await request("GET", "/api/task/nope/undone", undefined, admin)).code).toBe(400);
  });

  it("refuses the guest with AList's words", async () => {
    await fixture.db.update(users).set({ disabled: false }).where(eq(users.username, "guest"));
    try {
      expect(await request("GET", "/api/task/copy/undone", undefined, "")).toEqual({
        code: 403,
        message: "You are a guest",
        data: null,
      });
    } finally {
      await fixture.db.update(users).set({ disabled: true }).where(eq(users.username, "guest"));
    }
  });
});

describe("operations on one task", () => {
  it("info answers the caller's own task; someone else's, an unknown or a missing id are `task not found`", async () => {
    await insertTask("t1", memberId, 0);
    await insertTask("t2", 1, 0);
    expect((await request("POST", "/api/task/copy/info?tid=t1", undefined, member)).data.id).toBe("t1");
    const notFound = { code: 404, message: "task not found", data: null };
    expect(await request("POST", "/api/task/copy/info?tid=t2", undefined, member)).toEqual(notFound);
    expect(await request("POST", "/api/task/copy/info?tid=nope", undefined, member)).toEqual(notFound);
    expect(await request("POST", "/api/task/copy/info", undefined, member)).toEqual(notFound);
    // The id of another kind is not found under this one.
    expect(await request("POST", "/api/task/move/info?tid=t1", undefined, member)).toEqual(notFound);
    expect((await request("POST", "/api/task/copy/info?tid=t1", undefined, admin)).data.id).toBe("t1");
    for (const op of ["cancel", "delete", "retry"])
      expect(await request("POST", `/api/task/copy/${op}?tid=t2`, undefined, member), op).toEqual(notFound);
    expect((await fixture.db.select().from(tasks).where(eq(tasks.id, "t2")))[0]!.state).toBe(0);
  });

  it("cancel ends a task with nothing running at once (canceled, `context canceled`); a done task stays as it was", async () => {
    await insertTask("queued", memberId, 0);
    await fixture.db
      .insert(taskUnits)
      .values({ taskId: "queued", kind: "copy", payload: {}, leaseUntilMs: Date.now() + 60_000 });
    await insertTask("done", memberId, 2);
    expect(await request("POST", "/api/task/copy/cancel?tid=queued", undefined, member)).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    const [row] = await fixture.db.select().from(tasks).where(eq(tasks.id, "queued"));
    expect([row!.state, row!.error, row!.cancelRequested, row!.endedAtMs !== null]).toEqual([
      4,
      "context canceled",
      true,
      true,
    ]);
    expect((await fixture.db.select().from(taskUnits))[0]!.state).toBe("canceled");
    expect((await request("POST", "/api/task/copy/cancel?tid=done", undefined, member)).code).toBe(200);
    expect((await fixture.db.select().from(tasks).where(eq(tasks.id, "done")))[0]!.state).toBe(2);
  });

  it("cancel of a task with a unit running leaves it canceling until that unit stops", async () => {
    await insertTask("busy", memberId, 1);
    await fixture.db
      .insert(taskUnits)
      .values({ taskId: "busy", kind: "copy", payload: {}, state: "running", leaseUntilMs: Date.now() + 60_000 });
    await request("POST", "/api/task/copy/cancel?tid=busy", undefined, member);
    expect((await fixture.db.select().from(tasks))[0]!.state).toBe(3);
  });

  it("retry queues the failed units again (state 8, error cleared); a task with nothing left starts over", async () => {
    await insertTask("failed", memberId, 7, { error: "boom", unitsTotal: 2, unitsDone: 1 });
    await fixture.db.insert(taskUnits).values([
      { taskId: "failed", kind: "copy", payload: { from: "/a/x" }, state: "done", leaseUntilMs: 0 },
      {
        taskId: "failed",
        kind: "copy",
        payload: { from: "/a/y" },
        state: "failed",
        error: "boom",
        attempts: 3,
        leaseUntilMs: 0,
      },
    ]);
    expect((await request("POST", "/api/task/copy/retry?tid=failed", undefined, member)).code).toBe(200);
    const [row] = await fixture.db.select().from(tasks);
    expect([row!.state, row!.error, row!.endedAtMs]).toEqual([8, "", null]);
    const units = await fixture.db.select().from(taskUnits).orderBy(taskUnits.id);
    expect(units.map((u) => [u.state, u.attempts, u.ticket])).toEqual([
      ["done", 0, 0],
      ["queued", 0, 1],
    ]);
    expect(sent).toEqual([{ id: units[1]!.id, ticket: 1 }]);

    await insertTask("succeeded", memberId, 2);
    sent = [];
    expect((await request("POST", "/api/task/copy/retry?tid=succeeded", undefined, member)).code).toBe(200);
    const fresh = await fixture.db.select().from(taskUnits).where(eq(taskUnits.taskId, "succeeded"));
    expect(fresh.map((u) => [u.kind, u.payload, u.state])).toEqual([
      ["copy", { from: "/a/succeeded", toDir: "/b", name: "succeeded" }, "queued"],
    ]);
    expect(sent).toEqual([{ id: fresh[0]!.id, ticket: 0 }]);
  });

  it("delete drops a task and its units whatever its state", async () => {
    await insertTask("gone", memberId, 1);
    await fixture.db
      .insert(taskUnits)
      .values({ taskId: "gone", kind: "copy", payload: {}, state: "running", leaseUntilMs: 0 });
    expect((await request("POST", "/api/task/copy/delete?tid=gone", undefined, member)).code).toBe(200);
    expect(await fixture.db.select().from(tasks)).toEqual([]);
    expect(await fixture.db.select().from(taskUnits)).toEqual([]);
  });
});

describe("batch operations and clears", () => {
  it("*_some answer {id: task not found} for the ids not the caller's; a body that is not an id array is refused", async () => {
    await insertTask("a", memberId, 0);
    await insertTask("b", 1, 0);
    expect(await request("POST", "/api/task/copy/cancel_some", ["a", "b", "c"], member)).toEqual({
      code: 200,
      message: "success",
      data: { b: "task not found", c: "task not found" },
    });
    expect((await request("POST", "/api/task/copy/delete_some", ["a", "b"], admin)).data).toEqual({});
    expect(await fixture.db.select().from(tasks)).toEqual([]);
    for (const body of ['{"ids":["a"]}', "[1,2]", "not json"])
      expect(await request("POST", "/api/task/copy/retry_some", body, member), body).toEqual({
        code: 400,
        message: "invalid request format",
        data: null,
      });
  });

  it("clear_done, clear_succeeded and retry_failed touch the caller's own tasks only", async () => {
    await insertTask("ok", memberId, 2);
    await insertTask("canceled", memberId, 4);
    await insertTask("failed", memberId, 7, { error: "x" });
    await insertTask("running", memberId, 1);
    await insertTask("admin-ok", 1, 2);
    await request("POST", "/api/task/copy/clear_succeeded", undefined, member);
    const ids = async () => (await fixture.db.select({ id: tasks.id }).from(tasks)).map((r) => r.id).sort();
    expect(await ids()).toEqual(["admin-ok", "canceled", "failed", "running"]);
    await request("POST", "/api/task/copy/retry_failed", undefined, member);
    expect((await fixture.db.select().from(tasks).where(eq(tasks.id, "failed")))[0]!.state).toBe(8);
    expect(sent).toHaveLength(1);
    await request("POST", "/api/task/copy/clear_done", undefined, member);
    expect(await ids()).toEqual(["admin-ok", "failed", "running"]);
  });
});

describe("a retry holds a task to what its creator may do now", () => {
  const ALL = 0xff;
  const COPY = 1 << 6;
  const WRITE = 1 << 3;
  const OFFLINE = 1 << 2;
  const cannot = (what: string) => `the user who created this task may no longer ${what}: it cannot run`;
  /** The member's role narrowed to `bits` at `/` while `run` runs, then as it was. */
  async function narrowed(bits: number, run: () => Promise<void>) {
    const set = (permission: number) =>
      fixture.db
        .update(roles)
        .set({ permissionScopes: [{ path: "/", permission }] })
        .where(eq(roles.name, "tasker-role"));
    await set(bits);
    try {
      await run();
    } finally {
      await set(ALL);
    }
  }
  const stateOf = async (id: string) => {
    const [row] = await fixture.db.select().from(tasks).where(eq(tasks.id, id));
    return [row!.state, row!.error];
  };

  it("retry, retry_some and retry_failed refuse a task whose creator lost the copy or write bit; nothing is queued", async () => {
    await insertTask("copied", memberId, 7, { error: "upstream down" });
    const [adminRow] = await fixture.db.select({ id: users.id }).from(users).where(eq(users.username, "admin"));
    await insertTask("admins", adminRow!.id, 7, { error: "upstream down" });
    await narrowed(ALL & ~COPY, async () => {
      expect(await request("POST", "/api/task/copy/retry?tid=copied", undefined, member)).toEqual({
        code: 403,
        message: cannot("copy from /a"),
        data: null,
      });
      // An admin's retry of it runs it for its creator too.
      expect((await request("POST", "/api/task/copy/retry?tid=copied", undefined, admin)).message).toBe(
        cannot("copy from /a"),
      );
      expect((await request("POST", "/api/task/copy/retry_some", ["copied", "nope"], member)).data).toEqual({
        copied: cannot("copy from /a"),
        nope: "task not found",
      });
      // retry_failed runs the others again and says why one stays failed.
      expect(await request("POST", "/api/task/copy/retry_failed", undefined, admin)).toEqual({
        code: 403,
        message: cannot("copy from /a"),
        data: null,
      });
      expect(await stateOf("admins")).toEqual([8, ""]);
      expect(sent).toHaveLength(1);
    });
    await narrowed(ALL & ~WRITE, async () => {
      expect((await request("POST", "/api/task/copy/retry?tid=copied", undefined, member)).message).toBe(
        cannot("write to /b"),
      );
    });
    expect(await stateOf("copied")).toEqual([7, "upstream down"]);
    expect(await fixture.db.select().from(taskUnits).where(eq(taskUnits.taskId, "copied"))).toEqual([]);
    // With its bits back, the same retry runs.
    expect((await request("POST", "/api/task/copy/retry?tid=copied", undefined, member)).code).toBe(200);
    expect(await stateOf("copied")).toEqual([8, ""]);
  });

  it("an offline download's retry needs the offline-download bit; a task of a disabled or deleted creator is refused", async () => {
    await insertTask("download", memberId, 7, {
      kind: "offline_download",
      error: "http status code 500",
      payload: { unit: "fetch", url: "https://example.com/x.bin", toDir: "/b" },
    });
    await narrowed(ALL & ~OFFLINE, async () => {
      expect(await request("POST", "/api/task/offline_download/retry?tid=download", undefined, member)).toEqual({
        code: 403,
        message: cannot("download offline to /b"),
        data: null,
      });
    });
    await insertTask("orphan", 999_999, 7, { error: "x" });
    expect((await request("POST", "/api/task/copy/retry?tid=orphan", undefined, admin)).message).toBe(
      "the user who created this task no longer exists: it cannot run",
    );
    await fixture.db.update(users).set({ disabled: true }).where(eq(users.id, memberId));
    try {
      expect((await request("POST", "/api/task/offline_download/retry?tid=download", undefined, admin)).message).toBe(
        "the user who created this task is disabled: it cannot run",
      );
    } finally {
      await fixture.db.update(users).set({ disabled: false }).where(eq(users.id, memberId));
    }
    expect(await stateOf("download")).toEqual([7, "http status code 500"]);
    expect(await stateOf("orphan")).toEqual([7, "x"]);
    expect(sent).toEqual([]);
  });
});

describe("what a task's creator may still have it do (creatorRefusal, over the file side's rules)", () => {
  const user = (fields: Partial<UserRow> = {}): UserRow => ({
    id: 7,
    username: "u",
    passwordHash: "",
    passwordChangedAt: 0,
    basePath: "/",
    roleIds: [3],
    disabled: false,
    permission: 0,
    otpSecret: null,
    otpLastStep: 0,
    ssoId: "",
    allowLdap: false,
    ...fields,
  });
  const role = (permission: number, path = "/"): RoleRow => ({
    id: 3,
    name: "r",
    description: "",
    isDefault: false,
    permissionScopes: [{ path, permission }],
  });
  const meta = (fields: Partial<MetaRow>): MetaRow => ({
    id: 1,
    path: "/",
    password: "",
    passwordSub: false,
    write: false,
    writeSub: false,
    hide: "",
    hideSub: false,
    readme: "",
    readmeSub: false,
    header: "",
    headerSub: false,
    ...fields,
  });
  const copy = { kind: "copy", payload: { unit: "copy", from: "/a/x", toDir: "/b/in", name: "x" } };
  const refusal = (task: typeof copy, u: UserRow, roles: RoleRow[], metas: MetaRow[] = []) =>
    creatorRefusal(task, { user: u, roles, metas });
  const cannot = (what: string) => `the user who created this task may no longer ${what}: it cannot run`;

  it("holds the base path, the path limit and the role scopes as they are now", () => {
    expect(refusal(copy, user(), [role(0xff)])).toBeNull();
    expect(refusal(copy, user({ basePath: "/b" }), [role(0xff)])).toBe(cannot("copy from /a"));
    expect(refusal(copy, user({ permission: 1 << 14 }), [role(0xff, "/b")])).toBe(cannot("copy from /a"));
    expect(
      refusal(copy, user(), [
        {
          ...role(0xff, "/a"),
          permissionScopes: [
            { path: "/a", permission: 0xff },
            { path: "/b", permission: 0 },
          ],
        },
      ]),
    ).toBe(cannot("write to /b/in"));
  });

  it("a move needs the move bit, a copy the copy bit; a meta's write grant stands for the write bit at the target", () => {
    const MOVE = 1 << 5;
    const COPY = 1 << 6;
    const move = { ...copy, kind: "move" };
    expect(refusal(move, user(), [role(0xff & ~MOVE)])).toBe(cannot("move from /a"));
    expect(refusal(copy, user(), [role(0xff & ~MOVE)])).toBeNull();
    expect(refusal(copy, user(), [role(COPY)])).toBe(cannot("write to /b/in"));
    expect(refusal(copy, user(), [role(COPY)], [meta({ path: "/b/in", write: true })])).toBeNull();
  });

  it("a source hidden from the creator now is refused; other kinds have nothing to hold", () => {
    expect(refusal(copy, user(), [role(0xff & ~1)], [meta({ path: "/a", hide: "^x$" })])).toBe(cannot("copy from /a"));
    expect(refusal(copy, user(), [role(0xff)], [meta({ path: "/a", hide: "^x$" })])).toBeNull();
    expect(refusal({ ...copy, kind: "decompress" }, user(), [])).toBeNull();
  });
});

describe("copy between storages", () => {
  it("answers at once with a pending task per name and sends its first unit; without the queue binding it says what to set", async () => {
    for (const mountPath of ["/src", "/dst"])
      await fixture.db.insert(storages).values({
        mountPath,
        driver: "Virtual",
        status: "work",
        addition: JSON.stringify({ num_file: 2, num_folder: 1, min_file_size: 10, max_file_size: 20 }),
        modifiedAtMs: Date.UTC(2026, 2, 1),
      });
    const listing = await request("POST", "/api/fs/list", { path: "/src" }, admin);
    const folder = listing.data.content.find((e: any) => e.is_dir).name as string;
    const reply = await request("POST", "/api/fs/copy", { src_dir: "/src", dst_dir: "/dst", names: [folder] }, admin);
    expect(reply.code, reply.message).toBe(200);
    expect(reply.data.tasks).toEqual([
      expect.objectContaining({
        name: `copy [/src](/${folder}) to [/dst](/)`,
        state: 0,
        progress: 0,
        creator: "admin",
      }),
    ]);
    const [unit] = await fixture.db.select().from(taskUnits);
    expect(unit).toMatchObject({
      kind: "copy",
      state: "queued",
      payload: { from: `/src/${folder}`, toDir: "/dst", name: folder },
    });
    expect(sent).toEqual([{ id: unit!.id, ticket: 0 }]);

    const unconfigured = (await (
      await send(
        fixture,
        "POST",
        "/api/fs/copy",
        { src_dir: "/src", dst_dir: "/dst", names: [folder] },
        { Authorization: admin },
      )
    ).json()) as Envelope;
    expect(unconfigured.code).toBe(500);
    expect(unconfigured.message).toMatch(/TASK_QUEUE binding is missing/);
    expect(await fixture.db.select().from(tasks)).toHaveLength(1);
  });
});
