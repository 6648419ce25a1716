// Storages inside workerd: FTP, SFTP and SMB checks over real Workers sockets (cloudflare:sockets),
// S3 and WebDAV over the Workers fetch, each against the servers the global setup started on
// 127.0.0.1; and the database round trips of every storage endpoint, counted at the libSQL endpoint.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import worker from "../../index.ts";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { apiAs, call, type Envelope, signIn } from "../../../test/support/workerd-client.ts";

const servers = inject("storageServers");
let admin: string;

const request = (path: string, body?: unknown) =>
  new Request(`http://gatehouse.test${path}`, {
    method: path.includes("/list") || path.includes("/get") ? "GET" : "POST",
    headers: {
      Authorization: admin,
      ...(body === undefined ? {} : { "Content-Type": "application/json;charset=UTF-8" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const { post } = apiAs(() => admin);
const create = (mountPath: string, driver: string, addition: Record<string, unknown>) =>
  post("/api/admin/storage/create", { mount_path: mountPath, driver, addition: JSON.stringify(addition) });
const statusOf = async (id: number) => (await sql("SELECT status FROM storages WHERE id = ?", [id]))[0]?.[0];

beforeAll(async () => {
  admin = await signIn("storages-test");
});
beforeEach(async () => {
  await sql("DELETE FROM storages");
});

describe("checks over Workers TCP sockets", () => {
  const ftp = (extra: Record<string, unknown> = {}) => ({
    address: servers.ftpAddress,
    username: "ftpuser",
    password: "ftp password",
    root_folder_path: "/exports",
    ...extra,
  });

  it("FTP: greeting, login and CWD against ftp-srv", async () => {
    expect(await create("/ftp", "FTP", ftp())).toEqual({
      code: 200,
      message: "success",
      data: { id: expect.any(Number) },
    });
  });

  it("FTP: wrong credentials, a missing root and a dead port each say so", async () => {
    const wrong = await create("/ftp-wrong", "FTP", ftp({ password: "nope" }));
    expect(wrong).toEqual({
      code: 500,
      message: "failed init storage but storage is already created: wrong username or password",
      data: { id: expect.any(Number) },
    });
    expect(await statusOf(wrong.data.id)).toBe("wrong username or password");
    expect((await create("/ftp-root", "FTP", ftp({ root_folder_path: "/nope" }))).message).toBe(
      "failed init storage but storage is already created: root folder /nope not found",
    );
    const dead = await create("/ftp-dead", "FTP", ftp({ address: `127.0.0.1:${servers.deadPort}` }));
    expect(await statusOf(dead.data.id)).toMatch(new RegExp(`^cannot reach 127\\.0\\.0\\.1:${servers.deadPort}: `));
  });

  it("SFTP reads the SSH identification line; SMB gets an answer to SMB2 NEGOTIATE; others say what is wrong", async () => {
    expect((await create("/sftp", "SFTP", { address: servers.sshAddress, username: "u" })).code).toBe(200);
    expect((await create("/smb", "SMB", { address: servers.smbAddress, share_name: "s", username: "u" })).code).toBe(
      200,
    );
    expect((await create("/smb-ssh", "SMB", { address: servers.sshAddress })).message).toBe(
      `failed init storage but storage is already created: ${servers.sshAddress} is not an SMB server (its answer to SMB2 NEGOTIATE is not SMB)`,
    );
    const dead = await create("/sftp-dead", "SFTP", { address: `127.0.0.1:${servers.deadPort}`, username: "u" });
    expect(dead.code).toBe(500);
    expect(await statusOf(dead.data.id)).toMatch(/^cannot reach 127\.0\.0\.1:\d+: /);
  });
});

describe("checks over the Workers fetch", () => {
  const s3 = (secret: string) => ({
    endpoint: servers.s3Endpoint,
    bucket: "gatehouse-bucket",
    access_key_id: "GATEHOUSEKEY",
    secret_access_key: secret,
  });

  it("S3: a SigV4-signed listing works with the right secret and reports a wrong one", async () => {
    expect((await create("/s3", "S3", s3("gatehouse-secret-key"))).code).toBe(200);
    const wrong = await create("/s3-wrong", "S3", s3("wrong"));
    expect(wrong.message).toMatch(/^failed init storage but storage is already created: SignatureDoesNotMatch: /);
  });

  it("WebDav: PROPFIND with basic auth works, and reports wrong credentials", async () => {
    const dav = (password: string) => ({
      address: servers.webdavUrl,
      username: "davuser",
      password,
      root_folder_path: "/library",
    });
    expect((await create("/dav", "WebDav", dav("dav password"))).code).toBe(200);
    expect((await create("/dav-wrong", "WebDav", dav("nope"))).message).toBe(
      "failed init storage but storage is already created: wrong username or password",
    );
  });
});

describe("round trips per storage endpoint (the guard's one included)", () => {
  const counted = async <T>(work: () => Promise<T>): Promise<{ result: T; trips: number }> => {
    const counter = await roundTrips();
    const result = await work();
    return { result, trips: await counter.count() };
  };

  it("list 1, get 1 (their reads travel in the guard's batch); create and update 2: the reads with the guard, the check, then one write with the status", async () => {
    const created = await counted(() => create("/v", "Virtual", {}));
    expect(created.result.code).toBe(200);
    expect(created.trips).toBe(2);
    const { id } = created.result.data;
    for (let i = 0; i < 30; i++)
      // Checked already: a storage never checked is checked by the list first (r2.workerd.test.ts).
      await sql("INSERT INTO storages (mount_path, driver, status, modified) VALUES (?, 'Virtual', 'work', 0)", [
        `/bulk${i}`,
      ]);

    const listed = await counted(() =>
      call("/api/admin/storage/list?page=1&per_page=10", { headers: { Authorization: admin } }),
    );
    expect(listed.result.data.total).toBe(31);
    expect(listed.result.data.content).toHaveLength(10);
    expect(listed.trips).toBe(1);

    const got = await counted(() => call(`/api/admin/storage/get?id=${id}`, { headers: { Authorization: admin } }));
    expect(got.result.data.mount_path).toBe("/v");
    expect(got.trips).toBe(1);

    const updated = await counted(() =>
      post("/api/admin/storage/update", { id, mount_path: "/v2", driver: "Virtual", addition: "{}" }),
    );
    expect(updated.result.code).toBe(200);
    expect(updated.trips).toBe(2);
  });

  it("disable, enable and delete 2 (the reads with the guard, one write); a refused create 1, before any check", async () => {
    const { id } = (await create("/v", "Virtual", {})).data;
    expect((await counted(() => post(`/api/admin/storage/disable?id=${id}`))).trips).toBe(2);
    expect((await counted(() => post(`/api/admin/storage/enable?id=${id}`))).trips).toBe(2);
    expect((await counted(() => post(`/api/admin/storage/delete?id=${id}`))).trips).toBe(2);
    await create("/v", "Virtual", {});
    // An Alias reads the storages it points into with the guard too.
    const alias = (await create("/alias", "Alias", { paths: "/v\nnamed:/v/inner" })).data.id;
    const broken = (await create("/broken", "Alias", { paths: "/nowhere" })).data.id;
    for (const aliasId of [alias, broken]) await post(`/api/admin/storage/disable?id=${aliasId}`);
    const enabled = await counted(() => post(`/api/admin/storage/enable?id=${alias}`));
    expect(enabled.result).toEqual({ code: 200, message: "success", data: null });
    expect(enabled.trips).toBe(2);
    expect(await statusOf(alias)).toBe("work");
    const failed = await counted(() => post(`/api/admin/storage/enable?id=${broken}`));
    expect(failed.result.code).toBe(500);
    expect(failed.result.message).toContain("/nowhere");
    expect(failed.trips).toBe(2);
    const duplicate = await counted(() => create("/v", "Virtual", {}));
    expect(duplicate.result).toEqual({ code: 400, message: "mount path /v is already used", data: null });
    expect(duplicate.trips).toBe(1);
  });

  it("load_all reads once, answers, and writes the statuses that changed in the background", async () => {
    const { id } = (await create("/v", "Virtual", {})).data;
    await sql("UPDATE storages SET status = 'stale' WHERE id = ?", [id]);
    const counter = await roundTrips();
    const ctx = createExecutionContext();
    const reply = await (await worker.fetch(request("/api/admin/storage/load_all"), env, ctx)).json<Envelope>();
    expect(reply).toEqual({ code: 200, message: "success", data: null });
    await waitOnExecutionContext(ctx);
    expect(await counter.count()).toBe(3);
    expect(await statusOf(id)).toBe("work");
  });
});
