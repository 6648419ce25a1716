// SFTP: the check connects and reads the server's SSH identification line. Signing in takes an
// SSH implementation, so credentials and the root folder are checked only when files are served.
import { requireText } from "./addition.ts";
import { driverConfig, items } from "./items.ts";
import { openTcp, type TcpConnection } from "./tcp.ts";
import { CheckFailed, type Driver } from "./types.ts";

/** RFC 4253 §4.2: a server may send other lines first; this many is plenty. */
const MAX_LINES_BEFORE_IDENTIFICATION = 20;

export const sftp: Driver = {
  config: driverConfig({ name: "SFTP", local_sort: true, only_local: true, default_root: "/" }),
  additional: items([
    { name: "address", type: "string", required: true },
    { name: "username", type: "string", required: true },
    { name: "private_key", type: "text" },
    { name: "password", type: "string" },
    { name: "passphrase", type: "string" },
    { name: "root_folder_path", type: "string", default: "/", required: true },
    { name: "ignore_symlink_error", type: "bool", default: "false" },
  ]),
  async check(addition, context) {
    const connection = await openTcp(requireText(addition, "address"), 22, context);
    try {
      const identification = await identificationLine(connection);
      if (!identification.startsWith("SSH-2.0-") && !identification.startsWith("SSH-1.99-")) {
        throw new CheckFailed(
          `${connection.target} speaks an SSH version SFTP cannot use: ${identification.slice(0, 80)}`,
        );
      }
    } finally {
      await connection.close();
    }
  },
};

/**
 * The peer's `SSH-…` line. Other lines may come first (RFC 4253 §4.2); a peer that sends only
 * other lines and then falls silent or hangs up is something else, and the message says what it sent.
 */
async function identificationLine(connection: TcpConnection): Promise<string> {
  let firstLine: string | undefined;
  for (let i = 0; i < MAX_LINES_BEFORE_IDENTIFICATION; i++) {
    let line: string;
    try {
      line = await connection.readLine();
    } catch (error) {
      if (firstLine === undefined) throw error;
      break;
    }
    if (line.startsWith("SSH-")) return line;
    firstLine ??= line;
  }
  throw new CheckFailed(`${connection.target} is not an SSH server (it sent "${(firstLine ?? "").slice(0, 80)}")`);
}
