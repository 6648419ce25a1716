// set_transmission and the Transmission RPC client against a real transmission-daemon on
// 127.0.0.1 (its session-id dance, HTTP Basic credentials, torrent-add of a URL and torrent-get of
// its progress), a port nobody listens on, and a server that never answers.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settings } from "../../db/schema.ts";
import { parseTransmissionUri, TransmissionClient } from "./offline-download.ts";
import { login, postJson } from "../../../test/support/auth.ts";
import {
  freePort,
  type RunningService,
  type RunningTransmission,
  startSilentServer,
  startTransmission,
} from "../../../test/support/offline-download-servers.ts";
import { createUnitFixture, TEST_ADMIN_PASSWORD, type UnitFixture } from "../../../test/support/unit.ts";

const CREDENTIALS = { username: "gate keeper", password: "tr p@ss:word/1" };

let fixture: UnitFixture;
let token: string;
let transmission: RunningTransmission;
let silent: RunningService;

beforeAll(async () => {
  [fixture, transmission, silent] = await Promise.all([
    createUnitFixture(),
    startTransmission(CREDENTIALS),
    startSilentServer(),
  ]);
  token = (await login(fixture, { username: "admin", password: TEST_ADMIN_PASSWORD })).data!.token;
}, 60_000);
afterAll(async () => {
  await Promise.all([transmission?.stop(), silent?.stop()]);
  fixture?.close();
});

type Envelope = { code: number; message: string; data: unknown };
const setTransmission = async (uri: string, seedtime: string) =>
  (await (
    await postJson(fixture, "/api/admin/setting/set_transmission", { uri, seedtime }, { Authorization: token })
  ).json()) as Envelope;
const stored = async () =>
  Object.fromEntries(
    (
      await fixture.db
        .select()
        .from(settings)
        .where(inArray(settings.key, ["transmission_uri", "transmission_seedtime"]))
    ).map((row) => [row.key, row.value]),
  );

describe("POST /api/admin/setting/set_transmission", () => {
  it("passes the session-id check and the credentials in the URI, answers ok, and saves the URI and seed time", async () => {
    expect(await setTransmission(transmission.url, "30")).toEqual({ code: 200, message: "success", data: "ok" });
    expect(await stored()).toEqual({ transmission_uri: transmission.url, transmission_seedtime: "30" });
  });

  it("reports refused credentials as code 500 without echoing them, with the settings saved", async () => {
    const wrong = transmission.url.replace(encodeURIComponent(CREDENTIALS.password), "wrong");
    const reply = await setTransmission(wrong, "5");
    expect(reply).toEqual({
      code: 500,
      message: "failed get transmission version: Transmission refused the username and password (give them in the uri)",
      data: null,
    });
    expect(await stored()).toEqual({ transmission_uri: wrong, transmission_seedtime: "5" });
  });

  it("names a refused connection", async () => {
    const port = await freePort();
    const reply = await setTransmission(`http://127.0.0.1:${port}/transmission/rpc`, "0");
    expect(reply.code).toBe(500);
    expect(reply.message).toMatch(
      new RegExp(`^failed get transmission version: cannot reach http://127\\.0\\.0\\.1:${port}/transmission/rpc: .+`),
    );
  });

  it("says so when the endpoint answers but is not Transmission", async () => {
    const server = createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html" }).end("<html>"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      expect(await setTransmission(`http://127.0.0.1:${port}/transmission/rpc`, "0")).toEqual({
        code: 500,
        message: "transmission RPC failed: not a Transmission RPC reply (HTTP 200)",
        data: null,
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("refuses a URI that is not http(s) and a seed time that is not a whole number, saving nothing", async () => {
    await setTransmission(transmission.url, "30");
    expect(await setTransmission("ftp://127.0.0.1/transmission/rpc", "0")).toEqual({
      code: 400,
      message: "uri: must be an http:// or https:// URL, e.g. http://localhost:9091/transmission/rpc",
      data: null,
    });
    expect((await setTransmission(transmission.url, "-1")).code).toBe(400);
    expect(await stored()).toEqual({ transmission_uri: transmission.url, transmission_seedtime: "30" });
  });
});

describe("the Transmission RPC client", () => {
  it("adds a .torrent by URL and reads its progress: data already in the download folder verifies as complete", async () => {
    const dataPath = join(transmission.downloadDir, "hello.txt");
    writeFileSync(dataPath, "hello from gatehouse\n".repeat(1000));
    const torrentPath = join(transmission.downloadDir, "..", "hello.torrent");
    const made = spawnSync("transmission-create", ["-o", torrentPath, dataPath], { encoding: "utf8" });
    expect(made.status, made.stderr).toBe(0);
    // The daemon fetches the .torrent itself, from a server on 127.0.0.1.
    const server: Server = createServer((_req, res) =>
      res.writeHead(200, { "Content-Type": "application/x-bittorrent" }).end(readFileSync(torrentPath)),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const client = new TransmissionClient(parseTransmissionUri(transmission.url));
      const { port } = server.address() as AddressInfo;
      const added = await client.add(`http://127.0.0.1:${port}/hello.torrent`);
      expect(added).toMatchObject({ name: "hello.txt", hashString: expect.stringMatching(/^[0-9a-f]{40}$/) });
      let progress = await client.progress(added.id);
      const deadline = Date.now() + 15_000;
      while (progress?.percentDone !== 1 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        progress = await client.progress(added.id);
      }
      expect(progress).toMatchObject({ id: added.id, name: "hello.txt", percentDone: 1, errorString: "" });
      // Adding it again answers the same torrent; removing it leaves nothing to report.
      expect((await client.add(`http://127.0.0.1:${port}/hello.torrent`)).id).toBe(added.id);
      await client.remove(added.id, false);
      expect(await client.progress(added.id)).toBeUndefined();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("adds a magnet link: its progress starts at 0 while it has no peers", async () => {
    const client = new TransmissionClient(parseTransmissionUri(transmission.url));
    const hash = "c9e15763f722f23e98a29decdfae341b98d53056";
    const added = await client.add(`magnet:?xt=urn:btih:${hash}&dn=nothing-here`);
    expect(added.hashString).toBe(hash);
    expect(await client.progress(added.id)).toMatchObject({ hashString: hash, percentDone: 0 });
    await client.remove(added.id, true);
  });

  it("answers Transmission's own refusal (a torrent-add that is no torrent) as code 500 with its words", async () => {
    const client = new TransmissionClient(parseTransmissionUri(transmission.url));
    await expect(client.call("torrent-add", { metainfo: btoa("not a torrent") })).rejects.toMatchObject({
      code: 500,
      message: "transmission RPC failed: invalid or corrupt torrent file",
    });
  });

  it("gives up on a server that never answers after the timeout", async () => {
    const client = new TransmissionClient(parseTransmissionUri(silent.url), 300);
    await expect(client.version()).rejects.toMatchObject({
      code: 500,
      message: `failed get transmission version: cannot reach ${silent.url}: no answer within 0.3 s`,
    });
  });
});
