// Plain TCP for the FTP, SFTP and SMB checks, over Workers sockets (`cloudflare:sockets`). The
// module is loaded when a check runs, not at import: Node (the unit tests, the scripts) has no
// such module, and there a TCP check fails with a clear status instead of the import failing.
import { concatBytes } from "../lib/streams.ts";
import { errorText, seconds, unreachable } from "./failures.ts";
import { CheckFailed, type CheckContext } from "./types.ts";

export interface TcpConnection {
  /** `host:port`, as messages name it. */
  target: string;
  /** The next line the peer sends, without its line ending. */
  readLine(): Promise<string>;
  /** The next `count` bytes the peer sends. */
  readBytes(count: number): Promise<Uint8Array>;
  write(data: string | Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/** Most bytes a check waits for without finding what it reads (SSH lines are at most 255). */
const MAX_BUFFERED = 4096;

export async function openTcp(
  address: string,
  defaultPort: number,
  context: Pick<CheckContext, "signal" | "timeoutMs">,
): Promise<TcpConnection> {
  const { hostname, port } = hostAndPort(address, defaultPort);
  const target = `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  const { connect } = await workersSockets();
  let socket: ReturnType<typeof connect>;
  try {
    socket = connect({ hostname, port });
  } catch (error) {
    throw unreachable(target, error, context);
  }
  // A failed or lost connection rejects `closed`; the check reports it through `opened` or a read.
  socket.closed.catch(() => undefined);
  const close = () => socket.close().catch(() => undefined);
  context.signal.addEventListener("abort", close, { once: true });
  try {
    await socket.opened;
  } catch (error) {
    throw unreachable(target, error, context);
  }

  const reader = socket.readable.getReader();
  const writer = socket.writable.getWriter();
  let buffered = new Uint8Array(0);
  /** Reads until `end(buffered)` finds where what the caller wants ends, then hands that part over. */
  const readUntil = async (end: (bytes: Uint8Array) => number): Promise<Uint8Array> => {
    for (;;) {
      const length = end(buffered);
      if (length >= 0) {
        const taken = buffered.slice(0, length);
        buffered = buffered.slice(length);
        return taken;
      }
      if (buffered.length > MAX_BUFFERED)
        throw new CheckFailed(`${target} sent ${buffered.length} bytes without what the check waits for`);
      const chunk = await reader.read().catch((error: unknown) => ({ done: true as const, error }));
      if (chunk.done) {
        if (context.signal.aborted)
          throw new CheckFailed(`${target} did not answer within ${seconds(context.timeoutMs)}`);
        throw new CheckFailed(
          `${target} closed the connection${"error" in chunk ? `: ${errorText(chunk.error)}` : ""}`,
        );
      }
      buffered = concatBytes(buffered, chunk.value);
    }
  };
  return {
    target,
    async readLine() {
      const line = await readUntil((bytes) => {
        const newline = bytes.indexOf(0x0a);
        return newline < 0 ? -1 : newline + 1;
      });
      return new TextDecoder().decode(line).replace(/\r?\n$/, "");
    },
    readBytes: (count) => readUntil((bytes) => (bytes.length >= count ? count : -1)),
    async write(data) {
      await writer.write(typeof data === "string" ? new TextEncoder().encode(data) : data).catch((error: unknown) => {
        throw unreachable(target, error, context);
      });
    },
    async close() {
      context.signal.removeEventListener("abort", close);
      await close();
    },
  };
}

export async function workersSockets(): Promise<typeof import("cloudflare:sockets")> {
  try {
    return await import("cloudflare:sockets");
  } catch (error) {
    throw new CheckFailed(
      `this check needs Cloudflare Workers TCP sockets (cloudflare:sockets), which this runtime lacks: ${errorText(error)}`,
    );
  }
}

/**
 * `host`, `host:port`, `[v6]:port`, with or without a `scheme://` and a trailing path, as people
 * type addresses into AList's form.
 */
export function hostAndPort(address: string, defaultPort: number): { hostname: string; port: number } {
  const authority = address
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")
    .replace(/\/.*$/, "")
    .replace(/^[^@]*@/, "");
  const match = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d{1,5}))?$/.exec(authority);
  const port = match?.[3] === undefined ? defaultPort : Number(match[3]);
  const hostname = match?.[1] ?? match?.[2];
  if (!hostname || port < 1 || port > 65535) throw new CheckFailed(`address "${address}" is not host or host:port`);
  return { hostname, port };
}
