// The bench's baseline: a bare Hono worker under the same wrangler dev, answering /ping as
// Gatehouse does. Gatehouse's rates are reported as a share of this one, measured in the same run.
// PUT /forward?to=<url> sends the body on untouched, with the request's headers: the chunked
// upload bench's ceiling, a Worker that does nothing to the bytes it passes.
import { Hono } from "hono";

const app = new Hono();
app.all("/ping", (c) => c.text("pong"));
app.put("/forward", async (c) => {
  const headers = new Headers(c.req.raw.headers);
  headers.delete("host");
  const answer = await fetch(c.req.query("to") ?? "", { method: "PUT", headers, body: c.req.raw.body });
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
});

export default app;
