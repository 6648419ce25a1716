// A plain HTTP proxy in front of a real test server (the WebDAV one), that a test can make refuse
// writes or serve reads slowly at the moment it chooses: a background task then fails, or is still
// running when the test acts, by the test's switch rather than by a race with the task queue.
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface GatedProxy {
  url: string;
  /** While set, every PUT has its connection dropped before an answer, as by a server that went away. */
  refuseWrites: boolean;
  /** While set, GET answers come `SLOW_BYTES` at a time every `SLOW_TICK_MS`, the upstream's headers first. */
  slowReads: boolean;
  close(): Promise<void>;
}

const SLOW_BYTES = 1024;
const SLOW_TICK_MS = 100;

export async function startGatedProxy(upstream: string): Promise<GatedProxy> {
  const target = new URL(upstream);
  const slow = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    if (gate.refuseWrites && req.method === "PUT") {
      req.socket.destroy();
      return;
    }
    const forwarded = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (reply) => {
        res.writeHead(reply.statusCode!, reply.headers);
        if (gate.slowReads && req.method === "GET") trickle(reply, res);
        else {
          reply.pipe(res);
          reply.once("close", () => reply.complete || res.destroy());
        }
      },
    );
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
  });

  /**
   * The whole answer read from the upstream (a local server: at once), then sent out slowly; an
   * answer the upstream broke off (webdav-server drops some ranged replies, docs/decisions.md
   * D15.3) is broken off likewise once what came is sent.
   */
  function trickle(reply: IncomingMessage, res: ServerResponse) {
    slow.add(res);
    let timer: NodeJS.Timeout | undefined;
    res.once("close", () => {
      clearInterval(timer);
      slow.delete(res);
    });
    const chunks: Buffer[] = [];
    reply.on("data", (chunk: Buffer) => chunks.push(chunk));
    reply.once("close", () => {
      const body = Buffer.concat(chunks);
      let sent = 0;
      timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(body.subarray(sent, sent + SLOW_BYTES));
        sent += SLOW_BYTES;
        if (sent >= body.length) {
          clearInterval(timer);
          if (reply.complete) res.end();
          else res.destroy();
        }
      }, SLOW_TICK_MS);
    });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const gate: GatedProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refuseWrites: false,
    slowReads: false,
    close: async () => {
      for (const res of slow) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return gate;
}
