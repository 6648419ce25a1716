// A storage's life cycle against real servers on 127.0.0.1: the check behind create, update and
// enable decides the status a client reads back. TCP goes through node:net in place of
// cloudflare:sockets here (the workerd suite uses the real module).
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { storages } from "../../db/schema.ts";
import { signInAdmin } from "../../../test/support/auth.ts";
import {
  DAV_ROOT,
  DAV_USER,
  FTP_ROOT,
  FTP_USER,
  S3_ACCESS_KEY_ID,
  S3_BUCKET,
  S3_SECRET_ACCESS_KEY,
  startFtp,
  startS3,
  startWebdav,
  type RunningServer,
} from "../../../test/support/storage-servers.ts";
import { api, createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";

vi.mock("cloudflare:sockets", () => import("../../../test/support/storage-servers-node-sockets.ts"));

let fixture: UnitFixture;
let admin: string;
let s3: Awaited<ReturnType<typeof startS3>>;
let dav: Awaited<ReturnType<typeof startWebdav>>;
let ftp: RunningServer;
beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
  [s3, dav, ftp] = await Promise.all([startS3(), startWebdav(), startFtp()]);
});
afterAll(async () => {
  await Promise.all([s3, dav, ftp].map((server) => server?.close()));
  fixture.close();
});

const { post } = api(
  () => fixture,
  () => admin,
);
const statusOf = async (id: number) =>
  (await fixture.db.select({ status: storages.status }).from(storages).where(eq(storages.id, id)))[0]?.status;

describe("S3 storages", () => {
  const addition = (secret: string) =>
    JSON.stringify({
      endpoint: s3.endpoint,
      bucket: S3_BUCKET,
      access_key_id: S3_ACCESS_KEY_ID,
      secret_access_key: secret,
      root_folder_path: "/",
    });

  it("a wrong secret: created with the S3 error as status (code 500); fixed by update", async () => {
    const created = await post("/api/admin/storage/create", {
      mount_path: "/s3",
      driver: "S3",
      addition: addition("wrong secret"),
    });
    expect(created).toEqual({
      code: 500,
      message: expect.stringMatching(/^failed init storage but storage is already created: SignatureDoesNotMatch: /),
      data: { id: expect.any(Number) },
    });
    expect(await statusOf(created.data.id)).toMatch(/^SignatureDoesNotMatch: /);

    const fixed = await post("/api/admin/storage/update", {
      id: created.data.id,
      mount_path: "/s3",
      driver: "S3",
      addition: addition(S3_SECRET_ACCESS_KEY),
    });
    expect(fixed).toEqual({ code: 200, message: "success", data: { id: created.data.id } });
    expect(await statusOf(created.data.id)).toBe("work");
  });
});

describe("WebDav storages", () => {
  it("wrong credentials fail the check; enabling after a fix checks again", async () => {
    const addition = (password: string) =>
      JSON.stringify({ address: dav.url, username: DAV_USER.username, password, root_folder_path: DAV_ROOT });
    const created = await post("/api/admin/storage/create", {
      mount_path: "/dav",
      driver: "WebDav",
      addition: addition("nope"),
    });
    expect(created).toEqual({
      code: 500,
      message: "failed init storage but storage is already created: wrong username or password",
      data: { id: created.data.id },
    });
    const { id } = created.data;
    expect((await post(`/api/admin/storage/disable?id=${id}`)).code).toBe(200);
    expect(
      (
        await post("/api/admin/storage/update", {
          id,
          mount_path: "/dav",
          driver: "WebDav",
          addition: addition(DAV_USER.password),
        })
      ).code,
    ).toBe(200);
    expect(await statusOf(id)).toBe("disabled");
    expect(await post(`/api/admin/storage/enable?id=${id}`)).toEqual({ code: 200, message: "success", data: null });
    expect(await statusOf(id)).toBe("work");
  });
});

describe("FTP storages", () => {
  it("work with the right credentials and root, and say which part is wrong otherwise", async () => {
    const addition = (extra: Record<string, string>) =>
      JSON.stringify({
        address: ftp.address,
        username: FTP_USER.username,
        password: FTP_USER.password,
        root_folder_path: FTP_ROOT,
        ...extra,
      });
    expect(
      (await post("/api/admin/storage/create", { mount_path: "/ftp", driver: "FTP", addition: addition({}) })).code,
    ).toBe(200);
    const missing = await post("/api/admin/storage/create", {
      mount_path: "/ftp2",
      driver: "FTP",
      addition: addition({ root_folder_path: "/gone" }),
    });
    expect(missing.message).toBe("failed init storage but storage is already created: root folder /gone not found");
  });
});
