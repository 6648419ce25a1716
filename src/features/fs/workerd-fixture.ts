// What write and write-guards .workerd.test.ts share: the admin's calls (post, PUT /api/fs/put, a
// storage made), and their scene: the admin signed in under the file's own client id, then before
// each test S3 (/s3), webdav-server (/dav) and ftp-srv (/ftp) mounted afresh, each rooted in a
// folder of its own ("written") that the read tests leave out of their listings.
import { exports } from "cloudflare:workers";
import { expect, inject } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { davAddition, s3Addition, upstreamDav } from "../../../test/support/upstreams.ts";
import { apiAs, type Envelope, signIn } from "../../../test/support/workerd-client.ts";

/** Everything these files write stays below these folders, away from what the read tests list. */
export const DAV_ROOT = "/library/written";
const FTP_ROOT = "/exports/written";

const ftpAddition = (root: string) => ({
  address: inject("storageServers").ftpAddress,
  username: "ftpuser",
  password: "ftp password",
  root_folder_path: root,
});

/** The calls of the admin `admin()` (signed in in beforeAll); `upload` may name another token. */
export function writesAs(admin: () => string) {
  const { post } = apiAs(admin);
  const upload = async (
    path: string,
    body: BodyInit,
    headers: Record<string, string> = {},
    token = admin(),
  ): Promise<Envelope> =>
    (
      await exports.default.fetch(
        new Request("http://gatehouse.test/api/fs/put", {
          method: "PUT",
          headers: { Authorization: token, "File-Path": encodeURIComponent(path), ...headers },
          body,
        }),
      )
    ).json();
  const create = (mountPath: string, driver: string, addition: Record<string, unknown>) =>
    post("/api/admin/storage/create", { mount_path: mountPath, driver, addition: JSON.stringify(addition) });
  return { post, upload, create };
}

/** beforeAll: the admin signed in as `clientId`, the FTP folder made through a storage at its top; the token. */
export async function setUpWrites(clientId: string): Promise<string> {
  const admin = await signIn(clientId);
  const { post, create } = writesAs(() => admin);
  expect([201, 405]).toContain((await upstreamDav("MKCOL", DAV_ROOT)).status);
  await sql("DELETE FROM storages");
  await create("/ftp-top", "FTP", ftpAddition("/exports"));
  expect((await post("/api/fs/mkdir", { path: "/ftp-top/written" })).code).toBe(200);
  return admin;
}

/** beforeEach: /s3, /dav and /ftp mounted, and nothing else. */
export async function mountWrites(admin: string): Promise<void> {
  const { create } = writesAs(() => admin);
  await sql("DELETE FROM storages");
  expect((await create("/s3", "S3", { ...s3Addition(), root_folder_path: "/w" })).code).toBe(200);
  expect((await create("/dav", "WebDav", davAddition(DAV_ROOT))).code).toBe(200);
  expect((await create("/ftp", "FTP", ftpAddition(FTP_ROOT))).code).toBe(200);
}
