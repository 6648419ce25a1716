// FTP: the check signs in and changes to the root folder over a Workers TCP socket.
import { cleanPath } from "../lib/path.ts";
import { requireText } from "./addition.ts";
import { driverConfig, items } from "./items.ts";
import { openTcp, type TcpConnection } from "./tcp.ts";
import { ftpFiles } from "./ftp-files.ts";
import { CheckFailed, type Driver } from "./types.ts";

export const ftp: Driver = {
  config: driverConfig({ name: "FTP", local_sort: true, only_local: true, default_root: "/" }),
  additional: items([
    { name: "address", type: "string", required: true },
    { name: "encoding", type: "string", required: true },
    { name: "username", type: "string", required: true },
    { name: "password", type: "string", required: true },
    { name: "root_folder_path", type: "string", default: "/", required: true },
  ]),
  files: (storage) => ftpFiles(storage),
  async check(addition, context) {
    const root = cleanPath(addition.text("root_folder_path"));
    const username = oneLine(addition.text("username") || "anonymous", "username");
    const password = oneLine(addition.text("password"), "password");
    const connection = await openTcp(requireText(addition, "address"), 21, context);
    try {
      const greeting = await readReply(connection);
      if (greeting.code !== 220) throw unexpected(connection, "the connection", greeting);
      await connection.write(`USER ${username}\r\n`);
      const user = await readReply(connection);
      if (user.code === 331 || user.code === 332) {
        await connection.write(`PASS ${password}\r\n`);
        const pass = await readReply(connection);
        if (pass.code === 530) throw new CheckFailed("wrong username or password");
        if (pass.code !== 230 && pass.code !== 202) throw unexpected(connection, "PASS", pass);
      } else if (user.code === 530) {
        throw new CheckFailed("wrong username or password");
      } else if (user.code !== 230) {
        throw unexpected(connection, "USER", user);
      }
      await connection.write(`CWD ${oneLine(root, "root_folder_path")}\r\n`);
      const cwd = await readReply(connection);
      if (cwd.code === 550) throw new CheckFailed(`root folder ${root} not found`);
      if (cwd.code !== 250) throw unexpected(connection, "CWD", cwd);
      await connection.write("QUIT\r\n");
    } finally {
      await connection.close();
    }
  },
};

interface Reply {
  code: number;
  text: string;
}

/** One FTP reply: `ddd text`, or `ddd-` lines up to the `ddd ` line that ends it (RFC 959 §4.2). */
async function readReply(connection: TcpConnection): Promise<Reply> {
  const first = await connection.readLine();
  const match = /^(\d{3})([ -])(.*)$/.exec(first);
  if (!match) throw new CheckFailed(`${connection.target} is not an FTP server (it sent "${first.slice(0, 80)}")`);
  const [, code, separator, text] = match as unknown as [string, string, string, string];
  if (separator === "-") {
    for (let line = await connection.readLine(); !line.startsWith(`${code} `); line = await connection.readLine());
  }
  return { code: Number(code), text };
}

/** A value sent as a command argument: a line break in it would smuggle in another command. */
function oneLine(value: string, name: string): string {
  if (/[\r\n]/.test(value)) throw new CheckFailed(`${name} must not contain line breaks`);
  return value;
}

function unexpected(connection: TcpConnection, step: string, reply: Reply): CheckFailed {
  return new CheckFailed(`${connection.target} answered ${step} with ${reply.code} ${reply.text}`);
}
