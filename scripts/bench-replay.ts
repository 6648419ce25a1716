// The request path's replays. For a row of the request path the bench records, once, the Hrana
// pipeline Gatehouse sends for the request and the reply it gives; the bare worker then answers
// the same request with that work and nothing else: it reads the request's body, sends the
// recorded pipeline to the same endpoint (the same statements, the same bytes) and answers with
// the recorded reply, its status, headers and body (scripts/bench-baseline/worker.ts). What a row
// costs above its replay is Gatehouse's own code; what the replay costs above the bare worker is
// the request's shape (its body, its round trip, its reply), which no code of the Worker removes.
import type { LibsqlServer } from "./libsql-server/server.ts";
import { pipelineUrl } from "../src/db/hrana.ts";

/** The name of a row's replay in the bench's table. */
export const replayOf = (row: string) => `${row}, replayed`;

/** wrangler dev writes these itself (the body compressed for the client, its framing). */
const TRANSPORT_HEADERS = new Set([
  "content-encoding",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "date",
]);

/**
 * Sends `request` to Gatehouse while the endpoint records, and keeps what the bare worker needs to
 * replay it under `key`. The request must make exactly one round trip, as every request-path row does.
 */
export async function keepReplay(
  endpoint: LibsqlServer,
  bareUrl: string,
  key: string,
  request: () => Promise<Response>,
): Promise<void> {
  // Once unrecorded first: a first request may fill what later ones find kept (the WebDAV sign-in's
  // verified password, for one), as the rows' own warm-up does.
  await (await request()).text();
  const stop = endpoint.record();
  const reply = await request();
  const body = await reply.text();
  const pipelines = stop();
  if (pipelines.length !== 1)
    throw new Error(
      `replay ${key}: the request made ${pipelines.length} round trips, not one (status ${reply.status})`,
    );
  const kept = await fetch(`${bareUrl}/replays/${key}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      pipeline: JSON.stringify(pipelines[0]),
      pipelineUrl: pipelineUrl(endpoint.url),
      authorization: `Bearer ${endpoint.authToken}`,
      status: reply.status,
      headers: [...reply.headers].filter(([name]) => !TRANSPORT_HEADERS.has(name)),
      body,
    }),
  });
  if (!kept.ok) throw new Error(`replay ${key}: the bare worker answered ${kept.status} ${await kept.text()}`);
}
