// The bench's baseline: a bare Hono worker under the same wrangler dev, answering /ping as
// Gatehouse does. Gatehouse's rates are reported as a share of this one, measured in the same run.
import { Hono } from "hono";

const app = new Hono();
app.all("/ping", (c) => c.text("pong"));

export default app;
