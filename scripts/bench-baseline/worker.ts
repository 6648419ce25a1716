// The bench's baseline: a bare Hono worker under the same wrangler dev, answering /ping as
// Gatehouse does. Gatehouse's rates are reported as a share of this one, measured in the same run.
// PUT /forward?to=<url> sends the body on untouched, with the request's headers: the chunked
// upload bench's ceiling, a Worker that does nothing to the bytes it passes.
// GET /ping-db?to=<pipeline URL> makes one Hrana pipeline (SELECT 1, the stream closed) to the bench's libSQL endpoint
// with the request's Authorization, then answers "pong": the floor of a request that makes one
// database round trip and nothing else, as every Gatehouse API request makes one.
// POST /replays/<key> keeps a request of Gatehouse's as the bench recorded it (scripts/bench-replay.ts):
// the Hrana pipeline it sent and the reply it gave. Any request to /replays/<key>/... then reads its
// body, sends that pipeline and answers that reply: the request's work without Gatehouse's code.
import { Hono } from "hono";

const app = new Hono();
app.all("/ping", (c) => c.text("pong"));
app.get("/ping-db", async (c) => {
  const reply = await fetch(c.req.query("to") ?? "", {
    method: "POST",
    headers: { Authorization: c.req.header("Authorization") ?? "", "Content-Type": "application/json" },
    // As Gatehouse's client sends it (src/db/hrana.ts): a fresh stream, closed in the same pipeline.
    body: '{"baton":null,"requests":[{"type":"execute","stmt":{"sql":"SELECT 1","want_rows":true}},{"type":"close"}]}',
  });
  const { results } = await reply.json<{ results: { type: string }[] }>();
  return results[0]?.type === "ok" ? c.text("pong") : c.text("the pipeline failed", 502);
});
interface Replay {
  pipeline: string;
  pipelineUrl: string;
  authorization: string;
  status: number;
  headers: [string, string][];
  body: string;
}
const replays = new Map<string, Replay>();
app.post("/replays/:key", async (c) => {
  replays.set(c.req.param("key"), await c.req.json<Replay>());
  return c.text("kept");
});
app.all("/replays/:key/*", async (c) => {
  const replay = replays.get(c.req.param("key"));
  if (!replay) return c.text("no such replay", 404);
  await c.req.text();
  const reply = await fetch(replay.pipelineUrl, {
    method: "POST",
    headers: { Authorization: replay.authorization, "Content-Type": "application/json" },
    body: replay.pipeline,
  });
  const { results } = await reply.json<{ results: { type: string }[] }>();
  if (results.some((result) => result.type !== "ok")) return c.text("the pipeline failed", 502);
  return new Response(replay.body, { status: replay.status, headers: replay.headers });
});
app.put("/forward", async (c) => {
  const headers = new Headers(c.req.raw.headers);
  headers.delete("host");
  const answer = await fetch(c.req.query("to") ?? "", { method: "PUT", headers, body: c.req.raw.body });
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
});

export default app;
