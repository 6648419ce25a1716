// The scene dav, guards and refusals .workerd.test.ts each set in their beforeAll: the admin signed
// in under the file's own client id, no storages or metas left by another file, and /dav over every
// upstream: S3 proxied (/s3) and redirected (/s3-redirect), webdav-server (/up), ftp-srv at its top
// (/ftp-root) and below (/ftp), and R2 (/r2). The files run one after another on one database, so
// each starts from this scene rather than from what the last one left.
import { expect, inject } from "vitest";
import { dav } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { davAddition, s3Addition, upstreamDav } from "../../../test/support/upstreams.ts";
import { callApi, mountStorage, signIn } from "../../../test/support/workerd-client.ts";

/** Below the write tests' folders ("written"), which the read tests leave out of their listings. */
export const UPSTREAM_DAV_ROOT = "/library/written/dav-server";
const UPSTREAM_FTP_ROOT = "/exports/written/dav-server";

/** The WebDAV read bit; with it, the write bits and WebDAV manage. */
export const READ = 256;
export const MANAGE = 256 | 512 | 8 | 16 | 32 | 64 | 128;

/** Signs the admin in as `clientId`, mounts the storages above afresh; the admin's token. */
export async function setUpDav(clientId: string): Promise<string> {
  const admin = await signIn(clientId);
  await sql("DELETE FROM storages");
  await sql("DELETE FROM metas");
  for (const folder of ["/library/written", UPSTREAM_DAV_ROOT]) {
    expect([201, 405]).toContain((await upstreamDav("MKCOL", folder)).status);
  }
  const create = (mountPath: string, driver: string, addition: Record<string, unknown>, extra = {}) =>
    mountStorage(admin, mountPath, driver, addition, extra);
  const ftp = (root: string) => ({
    address: inject("storageServers").ftpAddress,
    username: "ftpuser",
    password: "ftp password",
    root_folder_path: root,
  });
  const s3 = { ...s3Addition(), root_folder_path: "/davs" };
  expect((await create("/s3", "S3", s3, { webdav_policy: "native_proxy" })).code).toBe(200);
  expect((await create("/s3-redirect", "S3", s3, { webdav_policy: "302_redirect" })).code).toBe(200);
  expect((await create("/up", "WebDav", davAddition(UPSTREAM_DAV_ROOT))).code).toBe(200);
  expect((await create("/ftp-root", "FTP", ftp("/exports"))).code).toBe(200);
  const ftpFolder = `/ftp-root${UPSTREAM_FTP_ROOT.slice("/exports".length)}`;
  expect((await callApi(admin, "/api/fs/mkdir", { path: ftpFolder })).code).toBe(200);
  expect((await create("/ftp", "FTP", ftp(UPSTREAM_FTP_ROOT))).code).toBe(200);
  expect((await create("/r2", "R2 Binding", { root_folder_path: "/davs" })).code).toBe(200);
  // The first Basic request of the admin in this isolate runs PBKDF2; later ones do not.
  expect((await dav("PROPFIND", "/", { headers: { Depth: "0" } })).status).toBe(207);
  return admin;
}
