// Each driver's check against real servers on 127.0.0.1: the status a storage would get. TCP goes
// through node:net in place of cloudflare:sockets here; the workerd suite runs FTP, SFTP and SMB
// over the real Workers sockets.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { checkStorage } from "../features/storages/checks.ts";
import { findDriver } from "./index.ts";
import { hostAndPort } from "./tcp.ts";
import type { MountedStorage } from "./types.ts";
import {
  DAV_ROOT,
  DAV_USER,
  FTP_ROOT,
  FTP_USER,
  S3_ACCESS_KEY_ID,
  S3_BUCKET,
  S3_SECRET_ACCESS_KEY,
  SSH_IDENTIFICATION,
  startFtp,
  startS3,
  startSmbStandIn,
  startSshGreeter,
  startTcpGreeter,
  startWebdav,
  unusedPort,
  type RunningServer,
} from "../../test/support/storage-servers.ts";

vi.mock("cloudflare:sockets", () => import("../../test/support/storage-servers-node-sockets.ts"));

let s3: Awaited<ReturnType<typeof startS3>>;
let dav: Awaited<ReturnType<typeof startWebdav>>;
let ftp: RunningServer;
let ssh: RunningServer;
let silent: RunningServer;
let notSsh: RunningServer;
let smb: RunningServer;
let deadPort: number;

beforeAll(async () => {
  [s3, dav, ftp, ssh, silent, notSsh, smb] = await Promise.all([
    startS3(),
    startWebdav(),
    startFtp(),
    startSshGreeter(),
    startTcpGreeter(),
    startTcpGreeter("220 a mail server, not SSH\r\n"),
    startSmbStandIn(),
  ]);
  deadPort = await unusedPort();
});
afterAll(async () => {
  await Promise.all([s3, dav, ftp, ssh, silent, notSsh, smb].map((server) => server?.close()));
});

const check = (
  driver: string,
  addition: Record<string, unknown>,
  storages: MountedStorage[] = [],
  timeoutMs?: number,
) => checkStorage(findDriver(driver)!, JSON.stringify(addition), storages, timeoutMs);

describe("S3 check (signed ListObjectsV2 against s3rver)", () => {
  const good = () => ({
    endpoint: s3.endpoint,
    bucket: S3_BUCKET,
    access_key_id: S3_ACCESS_KEY_ID,
    secret_access_key: S3_SECRET_ACCESS_KEY,
    region: "us-east-1",
    root_folder_path: "/",
  });

  it("works with the right bucket and key pair, at the root and under a folder", async () => {
    expect(await check("S3", good())).toBe("work");
    expect(await check("S3", { ...good(), root_folder_path: "/photos/2024" })).toBe("work");
  });

  it("uses path style for localhost endpoints too", async () => {
    expect(await check("S3", { ...good(), endpoint: `http://localhost:${s3.port}` })).toBe("work");
  });

  it("reports a wrong secret as S3's SignatureDoesNotMatch", async () => {
    expect(await check("S3", { ...good(), secret_access_key: "not the secret" })).toBe(
      "SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided. Check your key and signing method.",
    );
  });

  it("reports an unknown access key as InvalidAccessKeyId", async () => {
    expect(await check("S3", { ...good(), access_key_id: "NOBODY" })).toBe(
      "InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records.",
    );
  });

  it("reports a missing bucket as NoSuchBucket", async () => {
    expect(await check("S3", { ...good(), bucket: "no-such-bucket" })).toBe(
      "NoSuchBucket: The specified bucket does not exist",
    );
  });

  it("reports an endpoint where nothing listens", async () => {
    const status = await check("S3", { ...good(), endpoint: `http://127.0.0.1:${deadPort}` });
    expect(status).toMatch(
      new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${deadPort}: fetch failed: .*ECONNREFUSED`),
    );
  });

  it("gives up on an endpoint that accepts the connection and never answers", async () => {
    expect(await check("S3", { ...good(), endpoint: `http://${silent.address}` }, [], 300)).toBe(
      `cannot reach http://${silent.address}: no answer within 0.3 s`,
    );
  });

  it("names a missing required field", async () => {
    expect(await check("S3", { ...good(), bucket: "" })).toBe("bucket is required");
    expect(await check("S3", { ...good(), secret_access_key: undefined })).toBe("secret_access_key is required");
  });
});

describe("WebDav check (PROPFIND depth 0 against webdav-server)", () => {
  const good = () => ({
    address: dav.url,
    username: DAV_USER.username,
    password: DAV_USER.password,
    root_folder_path: DAV_ROOT,
  });

  it("works on an existing folder, and on the server root", async () => {
    expect(await check("WebDav", good())).toBe("work");
    expect(await check("WebDav", { ...good(), address: `${dav.url}/`, root_folder_path: "/" })).toBe("work");
  });

  it("reports wrong credentials", async () => {
    expect(await check("WebDav", { ...good(), password: "wrong" })).toBe("wrong username or password");
    expect(await check("WebDav", { ...good(), username: "", password: "" })).toBe("wrong username or password");
  });

  it("reports a missing root folder, and a root that is a file", async () => {
    expect(await check("WebDav", { ...good(), root_folder_path: "/no/such/folder" })).toBe(
      "root folder /no/such/folder not found",
    );
    expect(await check("WebDav", { ...good(), root_folder_path: `${DAV_ROOT}/readme.txt` })).toBe(
      `root folder ${DAV_ROOT}/readme.txt is a file, not a folder`,
    );
  });

  it("reports an address where nothing listens, and one that is not a URL", async () => {
    expect(await check("WebDav", { ...good(), address: `http://127.0.0.1:${deadPort}` })).toMatch(
      /^cannot reach http:\/\/127\.0\.0\.1:\d+: fetch failed/,
    );
    expect(await check("WebDav", { ...good(), address: "not a url" })).toMatch(/^address "not a url" is not a URL/);
  });

  it("never puts the user:password@ of an address into the status", async () => {
    const statuses = [
      await check("WebDav", { ...good(), address: dav.url.replace("//", "//someone:hunter2@") }),
      await check("WebDav", { ...good(), address: `http://someone:hunter2@127.0.0.1:${deadPort}` }),
      await check("WebDav", { ...good(), address: "http://someone:hunter2@[not-a-host" }),
      await check("WebDav", { ...good(), address: "http://only-a-token@[not-a-host" }),
    ];
    for (const status of statuses) {
      expect(status).not.toMatch(/hunter2|someone|only-a-token/);
      expect(status).toContain("http://***@");
    }
    expect(statuses[2]).toMatch(/^address "http:\/\/\*\*\*@\[not-a-host" is not a URL/);
  });
});

describe("FTP check (greeting, USER/PASS, CWD against ftp-srv)", () => {
  const good = () => ({
    address: ftp.address,
    username: FTP_USER.username,
    password: FTP_USER.password,
    root_folder_path: FTP_ROOT,
  });

  it("works with the right credentials and root", async () => {
    expect(await check("FTP", good())).toBe("work");
  });

  it("reports wrong credentials, a missing root, and a dead address", async () => {
    expect(await check("FTP", { ...good(), password: "wrong" })).toBe("wrong username or password");
    expect(await check("FTP", { ...good(), root_folder_path: "/missing" })).toBe("root folder /missing not found");
    expect(await check("FTP", { ...good(), address: `127.0.0.1:${deadPort}` })).toMatch(
      new RegExp(`^cannot reach 127\\.0\\.0\\.1:${deadPort}: .*ECONNREFUSED`),
    );
  });

  it("refuses a value that would smuggle in another command", async () => {
    expect(await check("FTP", { ...good(), username: "ftpuser\r\nDELE x" })).toBe(
      "username must not contain line breaks",
    );
  });

  it("reports a server that is not FTP", async () => {
    expect(await check("FTP", { ...good(), address: ssh.address })).toBe(
      `${ssh.address} is not an FTP server (it sent "${SSH_IDENTIFICATION}")`,
    );
  });
});

describe("SFTP and SMB checks (the SSH identification line, the SMB2 NEGOTIATE answer)", () => {
  it("SFTP works when the peer sends an SSH-2.0 identification line", async () => {
    expect(await check("SFTP", { address: ssh.address, username: "u" })).toBe("work");
  });

  it("SFTP reports a peer that is not SSH, a silent peer, and a dead port", async () => {
    expect(await check("SFTP", { address: notSsh.address }, [], 300)).toBe(
      `${notSsh.address} is not an SSH server (it sent "220 a mail server, not SSH")`,
    );
    expect(await check("SFTP", { address: silent.address }, [], 300)).toBe(
      `${silent.address} did not answer within 0.3 s`,
    );
    expect(await check("SFTP", { address: `127.0.0.1:${deadPort}` })).toMatch(
      /^cannot reach 127\.0\.0\.1:\d+: .*ECONNREFUSED/,
    );
    expect(await check("SFTP", {})).toBe("address is required");
  });

  it("SMB works when the peer answers an SMB2 NEGOTIATE, and reports other peers and a dead port", async () => {
    expect(await check("SMB", { address: smb.address, share_name: "s" })).toBe("work");
    expect(await check("SMB", { address: ssh.address })).toBe(
      `${ssh.address} is not an SMB server (its answer to SMB2 NEGOTIATE is not SMB)`,
    );
    expect(await check("SMB", { address: silent.address }, [], 300)).toBe(
      `${silent.address} did not answer within 0.3 s`,
    );
    expect(await check("SMB", { address: `127.0.0.1:${deadPort}` })).toMatch(
      /^cannot reach 127\.0\.0\.1:\d+: .*ECONNREFUSED/,
    );
  });
});

describe("Alias, Crypt, Virtual and Local checks", () => {
  const storages: MountedStorage[] = [
    { id: 1, mountPath: "/media", disabled: false, status: "work" },
    { id: 2, mountPath: "/media/broken", disabled: false, status: "wrong username or password" },
    { id: 3, mountPath: "/archive", disabled: true, status: "disabled" },
  ];

  it("Alias works when every line points into a working storage", async () => {
    expect(await check("Alias", { paths: "/media/films\n\nbooks:/media/books\n" }, storages)).toBe("work");
  });

  it("Alias names the line that points nowhere usable", async () => {
    expect(await check("Alias", { paths: "/media/films\n/elsewhere" }, storages)).toBe(
      "path /elsewhere is not inside any mounted storage",
    );
    expect(await check("Alias", { paths: "x:/archive/2020" }, storages)).toBe(
      "path /archive/2020 is inside storage /archive, which is disabled",
    );
    expect(await check("Alias", { paths: "/media/broken/a" }, storages)).toBe(
      "path /media/broken/a is inside storage /media/broken, which is not working: wrong username or password",
    );
    expect(await check("Alias", { paths: " \n " }, storages)).toBe("paths is required");
  });

  it("Crypt needs its remote_path inside a working storage", async () => {
    expect(await check("Crypt", { remote_path: "/media/secret", password: "p" }, storages)).toBe("work");
    expect(await check("Crypt", { remote_path: "/nowhere", password: "p" }, storages)).toBe(
      "remote_path /nowhere is not inside any mounted storage",
    );
    expect(await check("Crypt", { password: "p" }, storages)).toBe("remote_path is required");
  });

  it("Virtual always works; Local says it cannot run on Workers", async () => {
    expect(await check("Virtual", {})).toBe("work");
    expect(await check("Local", { root_folder_path: "/srv" })).toMatch(
      /^Local storage cannot run on Cloudflare Workers: /,
    );
  });
});

describe("addresses as people type them", () => {
  it("takes host, host:port, [v6]:port, a scheme and a trailing path", () => {
    expect(hostAndPort("files.example.com", 21)).toEqual({ hostname: "files.example.com", port: 21 });
    expect(hostAndPort("ftp://files.example.com:2121/pub", 21)).toEqual({ hostname: "files.example.com", port: 2121 });
    expect(hostAndPort("[::1]:2222", 22)).toEqual({ hostname: "::1", port: 2222 });
    expect(() => hostAndPort("host:99999", 22)).toThrow('address "host:99999" is not host or host:port');
  });
});
