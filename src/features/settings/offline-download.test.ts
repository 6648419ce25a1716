// set_aria2 and set_qbit against real services on 127.0.0.1 (aria2c, qbittorrent-nox), a port
// nobody listens on, and a server that never answers.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settings } from "../../db/schema.ts";
import { aria2Version, checkQbittorrent, parseQbittorrentUrl } from "./offline-download.ts";
import { getAs, login } from "../../../test/support/auth.ts";
import {
  freePort,
  startAria2,
  startQbittorrent,
  startSilentServer,
  type RunningService,
} from "../../../test/support/offline-download-servers.ts";
import { api, createUnitFixture, TEST_ADMIN_PASSWORD, type UnitFixture } from "../../../test/support/unit.ts";

const ARIA2_SECRET = "aria2-test-secret-7d1f";
const QBIT = { username: "gate keeper", password: "qb p@ss:word/1" };

let fixture: UnitFixture;
let token: string;
let aria2: RunningService;
let qbittorrent: RunningService;
let qbittorrentOpen: RunningService;
let silent: RunningService;

beforeAll(async () => {
  [fixture, aria2, qbittorrent, qbittorrentOpen, silent] = await Promise.all([
    createUnitFixture(),
    startAria2(ARIA2_SECRET),
    startQbittorrent(QBIT),
    startQbittorrent(QBIT, { openToLocalhost: true }),
    startSilentServer(),
  ]);
  token = (await login(fixture, { username: "admin", password: TEST_ADMIN_PASSWORD })).data!.token;
}, 60_000);
afterAll(async () => {
  await Promise.all([aria2?.stop(), qbittorrent?.stop(), qbittorrentOpen?.stop(), silent?.stop()]);
  fixture?.close();
});

const { post } = api(
  () => fixture,
  () => token,
);
const stored = async (...keys: string[]) =>
  Object.fromEntries(
    (await fixture.db.select().from(settings).where(inArray(settings.key, keys))).map((row) => [row.key, row.value]),
  );
const setAria2 = (uri: string, secret: string) => post("/api/admin/setting/set_aria2", { uri, secret });
const setQbit = (url: string, seedtime: string) => post("/api/admin/setting/set_qbit", { url, seedtime });

describe("POST /api/admin/setting/set_aria2", () => {
  it("saves the URI and secret and answers aria2's version", async () => {
    expect(await setAria2(aria2.url, ARIA2_SECRET)).toEqual({
      code: 200,
      message: "success",
      data: expect.stringMatching(/^aria2 version: \d+\.\d+\.\d+$/),
    });
    expect(await stored("aria2_uri", "aria2_secret")).toEqual({ aria2_uri: aria2.url, aria2_secret: ARIA2_SECRET });
  });

  it("keeps group 5 and the private flag, so the secret never reaches the public settings", async () => {
    await setAria2(aria2.url, ARIA2_SECRET);
    const rows = await fixture.db
      .select()
      .from(settings)
      .where(inArray(settings.key, ["aria2_uri", "aria2_secret"]));
    expect(rows.map((r) => [r.group, r.flag, r.type])).toEqual([
      [5, 1, "string"],
      [5, 1, "string"],
    ]);
    expect(JSON.stringify(await getAs(fixture, "/api/public/settings", ""))).not.toContain(ARIA2_SECRET);
  });

  it("reports a refused secret as code 500, with the settings saved all the same", async () => {
    const reply = await setAria2(aria2.url, "not-the-secret");
    expect(reply).toEqual({
      code: 500,
      message: "failed get aria2 version: Unauthorized (JSON-RPC error 1)",
      data: null,
    });
    expect(await stored("aria2_secret")).toEqual({ aria2_secret: "not-the-secret" });
  });

  it("reports a missing secret the same way (aria2 was started with one)", async () => {
    expect((await setAria2(aria2.url, "")).message).toBe("failed get aria2 version: Unauthorized (JSON-RPC error 1)");
    expect(await stored("aria2_secret")).toEqual({ aria2_secret: "" });
  });

  it("names a refused connection, with the settings saved", async () => {
    const uri = `http://127.0.0.1:${await freePort()}/jsonrpc`;
    const reply = await setAria2(uri, "s");
    expect(reply.code).toBe(500);
    expect(reply.message).toMatch(/^failed get aria2 version: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    expect(await stored("aria2_uri")).toEqual({ aria2_uri: uri });
  });

  it("says so when the endpoint answers but is not aria2", async () => {
    const reply = await setAria2(qbittorrent.url.replace(/\/\/[^@]*@/, "//"), "s");
    expect(reply).toEqual({
      code: 500,
      message: expect.stringMatching(/^failed get aria2 version: not an aria2 JSON-RPC reply \(HTTP 4\d\d\)$/),
      data: null,
    });
  });

  it("gives up on a server that never answers after 5 seconds", async () => {
    const started = Date.now();
    const reply = await setAria2(silent.url, "s");
    expect(reply).toEqual({ code: 500, message: "failed get aria2 version: no answer within 5 s", data: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(await stored("aria2_uri")).toEqual({ aria2_uri: silent.url });
  }, 15_000);

  it.each([
    ["ws://127.0.0.1:6800/jsonrpc", "uri: only HTTP JSON-RPC is supported; use http://127.0.0.1:6800/jsonrpc instead"],
    ["wss://aria2.example/jsonrpc", "uri: only HTTP JSON-RPC is supported; use https://aria2.example/jsonrpc instead"],
    ["ftp://127.0.0.1/jsonrpc", "uri: must be an http:// or https:// URL, e.g. http://localhost:6800/jsonrpc"],
    ["localhost:6800", "uri: must be an http:// or https:// URL, e.g. http://localhost:6800/jsonrpc"],
    ["", "uri: must be an http:// or https:// URL, e.g. http://localhost:6800/jsonrpc"],
    ["http://user:pw@127.0.0.1:6800/jsonrpc", "uri: must not carry credentials; aria2 takes its secret in `secret`"],
  ])("refuses %j with 400 and saves nothing", async (uri, message) => {
    const before = await stored("aria2_uri", "aria2_secret");
    expect(await setAria2(uri, "changed")).toEqual({ code: 400, message, data: null });
    expect(await stored("aria2_uri", "aria2_secret")).toEqual(before);
  });

  it("requires both fields as strings", async () => {
    expect(await post("/api/admin/setting/set_aria2", { uri: aria2.url })).toMatchObject({
      code: 400,
      message: expect.stringContaining("secret"),
    });
    expect(await post("/api/admin/setting/set_aria2", { uri: 6800, secret: "" })).toMatchObject({
      code: 400,
      message: expect.stringContaining("uri"),
    });
  });
});

describe("POST /api/admin/setting/set_qbit", () => {
  it("signs in with the URL's credentials, answers ok, and saves the URL and seed time", async () => {
    expect(await setQbit(qbittorrent.url, "60")).toEqual({ code: 200, message: "success", data: "ok" });
    expect(await stored("qbittorrent_url", "qbittorrent_seedtime")).toEqual({
      qbittorrent_url: qbittorrent.url,
      qbittorrent_seedtime: "60",
    });
  });

  it("needs no sign-in when the Web UI lets the gateway in without one", async () => {
    const withoutCredentials = qbittorrentOpen.url.replace(/\/\/[^@]*@/, "//");
    expect(await setQbit(withoutCredentials, "0")).toEqual({ code: 200, message: "success", data: "ok" });
  });

  it("reports refused credentials as code 500 without echoing them, with the settings saved", async () => {
    const wrong = qbittorrent.url.replace(encodeURIComponent(QBIT.password), "wrong");
    const reply = await setQbit(wrong, "5");
    const port = new URL(qbittorrent.url).port;
    expect(reply).toEqual({
      code: 500,
      message: `failed to login into qBittorrent webui with url: http://127.0.0.1:${port}/`,
      data: null,
    });
    expect(await stored("qbittorrent_url", "qbittorrent_seedtime")).toEqual({
      qbittorrent_url: wrong,
      qbittorrent_seedtime: "5",
    });
  });

  it("reports a URL without credentials when the Web UI wants them", async () => {
    const reply = await setQbit(qbittorrent.url.replace(/\/\/[^@]*@/, "//"), "0");
    expect(reply.code).toBe(500);
    expect(reply.message).toMatch(/^failed to login into qBittorrent webui with url: /);
  });

  it("reports a Web UI that accepts the sign-in but still refuses the session", async () => {
    // Not something qBittorrent does; a proxy in front of it that drops cookies would.
    const server = createServer((request, response) => {
      response.writeHead(request.url === "/api/v2/auth/login" ? 200 : 403, {
        "Set-Cookie": "SID=abc; HttpOnly; path=/",
      });
      response.end(request.url === "/api/v2/auth/login" ? "Ok." : "Forbidden");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      expect(await setQbit(`http://admin:pw@127.0.0.1:${port}/`, "0")).toEqual({
        code: 500,
        message: "unauthorized qbittorrent url",
        data: null,
      });
    } finally {
      server.close();
    }
  });

  it("names a refused connection", async () => {
    const port = await freePort();
    const reply = await setQbit(`http://admin:secret@127.0.0.1:${port}/`, "0");
    expect(reply.code).toBe(500);
    expect(reply.message).toBe(
      `failed to reach qBittorrent webui at http://127.0.0.1:${port}/: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(reply.message).not.toContain("secret");
  });

  it.each([
    ["-1", "seedtime: must be a whole number, 0 or more"],
    ["1.5", "seedtime: must be a whole number, 0 or more"],
    ["abc", "seedtime: must be a whole number, 0 or more"],
    ["", "seedtime: must be a whole number, 0 or more"],
  ])("refuses seed time %j with 400 and saves nothing", async (seedtime, message) => {
    const before = await stored("qbittorrent_url", "qbittorrent_seedtime");
    expect(await setQbit(qbittorrent.url, seedtime)).toEqual({ code: 400, message, data: null });
    expect(await stored("qbittorrent_url", "qbittorrent_seedtime")).toEqual(before);
  });

  it("refuses credentials that are not valid percent-encoding", async () => {
    expect(await setQbit("http://admin:100%zz@127.0.0.1:8080/", "0")).toEqual({
      code: 400,
      message: "url: the username and password must be percent-encoded correctly",
      data: null,
    });
  });

  it("joins the API paths onto the URL's own path", () => {
    expect(parseQbittorrentUrl("https://u:p@example.test/qbt?x=1#y").base.href).toBe("https://example.test/qbt/");
  });

  it.each(["", "localhost:8080", "ftp://admin:x@127.0.0.1/"])("refuses the URL %j with 400", async (url) => {
    expect(await setQbit(url, "0")).toEqual({
      code: 400,
      message: "url: must be an http:// or https:// URL, e.g. http://admin:adminadmin@localhost:8080/",
      data: null,
    });
  });
});

describe("the service clients' timeout", () => {
  it("aria2: a short timeout ends the wait", async () => {
    await expect(aria2Version(new URL(silent.url), "", 200)).rejects.toMatchObject({
      code: 500,
      message: "failed get aria2 version: no answer within 0.2 s",
    });
  });

  it("qBittorrent: a short timeout ends the wait", async () => {
    await expect(checkQbittorrent(parseQbittorrentUrl(silent.url), 200)).rejects.toMatchObject({
      code: 500,
      message: `failed to reach qBittorrent webui at ${silent.url}: no answer within 0.2 s`,
    });
  });
});
