// The Worker's V8 isolate under wrangler dev, through wrangler's inspector (the DevTools protocol):
// `npm run profile` takes CPU profiles with it, `npm run bench` reads the isolate's own memory
// (the JavaScript heap and the ArrayBuffers it holds), which the workerd processes' resident
// memory hides among wrangler's local simulators.
import WebSocket from "ws";

export type Inspector = ((method: string, params?: object) => Promise<unknown>) & { close(): void };

/** The inspector of the Gatehouse Worker that wrangler dev serves on `port`. */
export async function inspectWorker(port: number): Promise<Inspector> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as {
    webSocketDebuggerUrl: string;
    title: string;
  }[];
  const target = targets.find((t) => !t.title.includes("bench")) ?? targets[0]!;
  // wrangler's inspector proxy only admits DevTools' origin.
  const socket = new WebSocket(target.webSocketDebuggerUrl, {
    headers: { Origin: "https://devtools.devprod.cloudflare.dev" },
  });
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("open", () => resolve());
  });
  const call = (method: string, params?: object) =>
    new Promise<unknown>((done) => {
      const id = nextId++;
      pending.set(id, done);
      socket.send(JSON.stringify({ id, method, params }));
    });
  return Object.assign(call, { close: () => socket.close() });
}

/**
 * The isolate's memory now: its JavaScript heap in use and the ArrayBuffers' backing stores, in
 * bytes; `collected`: after a full garbage collection, so only what is still held counts.
 */
export async function isolateMemory(
  inspector: Inspector,
  { collected = false } = {},
): Promise<{ heap: number; buffers: number }> {
  if (collected) await inspector("HeapProfiler.collectGarbage");
  const usage = (await inspector("Runtime.getHeapUsage")) as { usedSize: number; backingStorageSize?: number };
  return { heap: usage.usedSize, buffers: usage.backingStorageSize ?? 0 };
}
