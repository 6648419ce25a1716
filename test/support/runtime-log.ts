// What the workerd runtime prints, for tests inside workerd to read: miniflare writes each line
// workerd prints to the vitest process's stdout or stderr, where no test can see it.
// The workerd project's globalSetup records those lines and serves them on 127.0.0.1, so a test
// can assert that a normal fault (a canceled task) leaves no "uncaught exception" line behind.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface RuntimeLog {
  url: string;
  close(): Promise<void>;
}

/** Records every line written to stdout and stderr from now on; `GET /?from=<n>` answers lines n… as JSON. */
export async function captureRuntimeLog(): Promise<RuntimeLog> {
  const lines: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write);
  for (const [i, stream] of streams.entries()) {
    const write = originals[i]!;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(...String(chunk).split("\n"));
      return (write as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
  }
  const server = createServer((req, res) => {
    const from = Number(new URL(req.url ?? "/", "http://log").searchParams.get("from")) || 0;
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ next: lines.length, lines: lines.slice(from) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const [i, stream] of streams.entries()) stream.write = originals[i]!;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
