// `cloudflare:sockets` for the Node unit tests, over node:net: the same `connect()` shape (opened,
// readable, writable, close) so the FTP, SFTP and SMB checks run unchanged against the real servers
// of storage-servers.ts. Use with `vi.mock("cloudflare:sockets", () => import(…this file…))`.
// The workerd suite uses the real module.
import { connect as netConnect } from "node:net";
import { Duplex } from "node:stream";

export function connect(address: { hostname: string; port: number }) {
  const socket = netConnect({ host: address.hostname, port: address.port });
  const opened = new Promise<{ remoteAddress: string; localAddress: string }>((resolve, reject) => {
    socket.once("connect", () =>
      resolve({
        remoteAddress: `${socket.remoteAddress}:${socket.remotePort}`,
        localAddress: `${socket.localAddress}:${socket.localPort}`,
      }),
    );
    socket.on("error", reject);
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  // Node types the web streams of Duplex.toWeb as `any` chunks; a socket carries bytes.
  const { readable, writable } = Duplex.toWeb(socket) as unknown as {
    readable: ReadableStream<Uint8Array>;
    writable: WritableStream<Uint8Array>;
  };
  return {
    opened,
    closed,
    readable,
    writable,
    async close() {
      socket.destroy();
      await closed;
    },
  };
}
