// globalSetup of the workerd project: the storage servers the driver checks talk to, on 127.0.0.1,
// their addresses handed to the tests inside workerd through vitest's provide/inject.
import type { TestProject } from "vitest/node";
import { startGatedProxy } from "./gated-proxy.ts";
import { captureRuntimeLog } from "./runtime-log.ts";
import {
  startDownloads,
  startFtp,
  startS3,
  startSmbStandIn,
  startSshGreeter,
  startWebdav,
  unusedPort,
} from "./storage-servers.ts";

declare module "vitest" {
  export interface ProvidedContext {
    storageServers: {
      s3Endpoint: string;
      webdavUrl: string;
      /** The same WebDAV server, its reads sent slowly (gated-proxy.ts): a task is still streaming when a test acts. */
      slowWebdavUrl: string;
      ftpAddress: string;
      sshAddress: string;
      smbAddress: string;
      /** The files offline downloads fetch (storage-servers.ts startDownloads). */
      downloadsUrl: string;
      /** A port where nothing listens. */
      deadPort: number;
      /** What workerd printed (runtime-log.ts): `GET ?from=<n>` answers `{next, lines}`. */
      runtimeLogUrl: string;
    };
  }
}

export default async function setup(project: TestProject) {
  const runtimeLog = await captureRuntimeLog();
  const servers = [
    await startS3(),
    await startWebdav(),
    await startFtp(),
    await startSshGreeter(),
    await startSmbStandIn(),
    await startDownloads(),
  ] as const;
  const [s3, dav, ftp, ssh, smb, downloads] = servers;
  const slowDav = await startGatedProxy(dav.url);
  slowDav.slowReads = true;
  project.provide("storageServers", {
    s3Endpoint: s3.endpoint,
    webdavUrl: dav.url,
    slowWebdavUrl: slowDav.url,
    ftpAddress: ftp.address,
    sshAddress: ssh.address,
    smbAddress: smb.address,
    downloadsUrl: downloads.url,
    deadPort: await unusedPort(),
    runtimeLogUrl: runtimeLog.url,
  });
  return async () => {
    await slowDav.close();
    await Promise.all(servers.map((server) => server.close()));
    await runtimeLog.close();
  };
}
