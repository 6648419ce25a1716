// FTP: the check signs in as the file side does (over a Workers TCP socket) and changes to the root folder.
import { cleanPath } from "../lib/path.ts";
import { driverConfig, items } from "./items.ts";
import { FtpSession, ftpFiles, lineFree } from "./ftp-files.ts";
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
    const root = lineFree(cleanPath(addition.text("root_folder_path")), "root_folder_path");
    // The sign-in the file side uses, then the root folder.
    const session = await FtpSession.open(addition, context.signal, context.timeoutMs);
    try {
      const cwd = await session.command(`CWD ${root}`);
      if (cwd.code === 550) throw new CheckFailed(`root folder ${root} not found`);
      await session.expect(cwd, [250], "CWD");
    } finally {
      await session.close();
    }
  },
};
