// A unit's follow-up run in the invocation that made it ready (docs/decisions.md D23.8): a move's
// removal of its source runs as soon as its copy settled, and its own queue message, sent as the
// fallback, does nothing when it comes. The batches here are handed to the runner directly, with a
// queue that only records what is sent, so no message is delivered unless the test delivers it.
import { env } from "cloudflare:test";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client.ts";
import { databaseUrl, type Env } from "../../env.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Text, upstreamDav, upstreamDavText, upstreamRequests } from "../../../test/support/upstreams.ts";
import { consumeBatch } from "./runner.ts";
import type { UnitTicket } from "./store.ts";
import { DAV_ROOT, mountTasks, S3_ROOT, setUpTasks, tasksAs } from "./workerd-fixture.ts";

let admin: string;
const { settled } = tasksAs(() => admin);
const db = (() => {
  const { url, authToken } = databaseUrl(env);
  return openDatabase(url, authToken);
})();

/** The Worker's bindings with a queue that records the messages sent instead of delivering them. */
function recordingEnv(): { env: Env; sent: UnitTicket[] } {
  const sent: UnitTicket[] = [];
  const queue = {
    send: async (body: UnitTicket) => void sent.push(body),
    sendBatch: async (messages: Iterable<{ body: UnitTicket }>) => {
      for (const message of messages) sent.push(message.body);
    },
  } as unknown as Queue<UnitTicket>;
  return { env: { ...env, TASK_QUEUE: queue }, sent };
}

/** A batch of `tickets` as the queue delivers it; `acked` lists the ids acknowledged. */
function batchOf(tickets: UnitTicket[]): { batch: MessageBatch<UnitTicket>; acked: number[] } {
  const acked: number[] = [];
  const messages = tickets.map((body, i) => ({
    id: `m${i}`,
    timestamp: new Date(),
    attempts: 1,
    body,
    ack: () => void acked.push(body.id),
    retry: () => {},
  }));
  const metadata = { metrics: { backlogCount: 0, backlogBytes: 0 } };
  return { batch: { queue: "gatehouse-tasks", messages, metadata, ackAll: () => {}, retryAll: () => {} }, acked };
}

/** A move task of `/dav/inline/<name>` into /s3, its copy unit queued as a request leaves it; the unit's ticket. */
async function moveTask(name: string): Promise<UnitTicket> {
  await upstreamDav("DELETE", `${DAV_ROOT}/inline`);
  expect((await upstreamDav("MKCOL", `${DAV_ROOT}/inline`)).status).toBe(201);
  expect([200, 201, 204]).toContain(
    (await upstreamDav("PUT", `${DAV_ROOT}/inline/${name}`, { body: `bytes of ${name}` })).status,
  );
  const payload = { from: `/dav/inline/${name}`, toDir: "/s3", name };
  await sql(
    "INSERT INTO tasks (id, kind, name, creator_id, creator, state, payload, created_at_ms, units_total, total_bytes) VALUES (?, 'move', ?, (SELECT id FROM users WHERE username = 'admin'), 'admin', 0, ?, ?, 1, 0)",
    [name, `move [/dav](/inline/${name}) to [/s3](/)`, JSON.stringify({ unit: "copy", ...payload }), Date.now()],
  );
  const [[id, ticket]] = (await sql(
    "INSERT INTO task_units (task_id, kind, payload, lease_until_ms) VALUES (?, 'copy', ?, ?) RETURNING id, ticket",
    [name, JSON.stringify(payload), Date.now() + 600_000],
  )) as [[number, number]];
  return { id, ticket };
}

/** The task's units by kind: state and attempts. */
async function unitsOf(task: string): Promise<Record<string, { state: string; attempts: number }>> {
  const rows = (await sql("SELECT kind, state, attempts FROM task_units WHERE task_id = ?", [task])) as [
    string,
    string,
    number,
  ][];
  return Object.fromEntries(rows.map(([kind, state, attempts]) => [kind, { state, attempts }]));
}

/** The DELETE requests webdav-server got from `from` on, for the files of /inline. */
const davDeletes = async (from: number) =>
  (await upstreamRequests("dav")).slice(from).filter((line) => line.startsWith("DELETE ") && line.includes("/inline/"));

beforeAll(async () => {
  admin = await setUpTasks("tasks-inline");
});
beforeEach(() => mountTasks(admin));

describe("a unit's follow-up in the same invocation", () => {
  it("a move's removal runs as soon as its copy settled; its message, delivered later, does nothing", async () => {
    const copy = await moveTask("now.txt");
    const queue = recordingEnv();
    const first = batchOf([copy]);
    await consumeBatch(db, queue.env, first.batch);
    expect(first.acked).toEqual([copy.id]);
    // Done before the batch returned, though no message was delivered: the removal ran inline.
    expect(await settled("move", "now.txt")).toMatchObject({ state: 2, progress: 100, error: "" });
    expect(await s3Text(`${S3_ROOT}/now.txt`)).toBe("bytes of now.txt");
    expect(await upstreamDavText(`${DAV_ROOT}/inline/now.txt`)).toBeNull();
    expect(await unitsOf("now.txt")).toEqual({
      copy: { state: "done", attempts: 1 },
      remove: { state: "done", attempts: 1 },
    });
    // Its message was still sent, as the fallback; delivered now, it finds the unit done.
    const [removal] = (await sql("SELECT id, ticket FROM task_units WHERE task_id = ? AND kind = 'remove'", [
      "now.txt",
    ])) as [[number, number]];
    expect(queue.sent).toEqual([{ id: removal[0], ticket: removal[1] }]);
    const davSeen = (await upstreamRequests("dav")).length;
    const late = batchOf(queue.sent.splice(0));
    await consumeBatch(db, queue.env, late.batch);
    expect(late.acked).toEqual([removal[0]]);
    expect(queue.sent).toEqual([]);
    expect(await davDeletes(davSeen)).toEqual([]);
    expect(await unitsOf("now.txt")).toEqual({
      copy: { state: "done", attempts: 1 },
      remove: { state: "done", attempts: 1 },
    });
    expect(await settled("move", "now.txt")).toMatchObject({ state: 2, error: "" });
  }, 30_000);

  it("an invocation past its budget leaves the removal to its message, which runs it once", async () => {
    const copy = await moveTask("later.txt");
    const queue = recordingEnv();
    // An invocation that began 11 minutes ago: past the budget, its copy settles and it stops there.
    await consumeBatch(db, queue.env, batchOf([copy]).batch, Date.now() - 11 * 60_000);
    expect(await unitsOf("later.txt")).toEqual({
      copy: { state: "done", attempts: 1 },
      remove: { state: "queued", attempts: 0 },
    });
    expect(await upstreamDavText(`${DAV_ROOT}/inline/later.txt`)).toBe("bytes of later.txt");
    expect(queue.sent).toHaveLength(1);
    const davSeen = (await upstreamRequests("dav")).length;
    await consumeBatch(db, queue.env, batchOf(queue.sent.splice(0)).batch);
    expect(await settled("move", "later.txt")).toMatchObject({ state: 2, progress: 100, error: "" });
    expect(await upstreamDavText(`${DAV_ROOT}/inline/later.txt`)).toBeNull();
    expect(await davDeletes(davSeen)).toHaveLength(1);
    expect(await unitsOf("later.txt")).toEqual({
      copy: { state: "done", attempts: 1 },
      remove: { state: "done", attempts: 1 },
    });
  }, 30_000);
});
