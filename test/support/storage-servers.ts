// Real storage servers on 127.0.0.1 (port 0) for the driver checks: S3 (s3rver), WebDAV
// (webdav-server), FTP (ftp-srv), an SSH identification greeter for SFTP, and a plain TCP listener
// for SMB. Each start function returns what a storage's `addition` needs, and `close()`.
import { createHash, createHmac } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from "node:http";
import { createRequire } from "node:module";
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AwsClient } from "aws4fetch";
import { FtpSrv } from "ftp-srv";
import { v2 as webdav } from "webdav-server";

const require = createRequire(import.meta.url);

export const S3_BUCKET = "gatehouse-bucket";
export const S3_ACCESS_KEY_ID = "GATEHOUSEKEY";
export const S3_SECRET_ACCESS_KEY = "gatehouse-secret-key";
/** A client of the test S3 server (aws4fetch) with the test keys, for reading and writing it directly. */
export const s3TestClient = () =>
  new AwsClient({
    accessKeyId: S3_ACCESS_KEY_ID,
    secretAccessKey: S3_SECRET_ACCESS_KEY,
    service: "s3",
    region: "us-east-1",
    retries: 0,
  });
export const DAV_USER = { username: "davuser", password: "dav password" };
export const DAV_ROOT = "/library";
export const FTP_USER = { username: "ftpuser", password: "ftp password" };
export const FTP_ROOT = "/exports";
export const SSH_IDENTIFICATION = "SSH-2.0-OpenSSH_9.6 Gatehouse-test";

export interface RunningServer {
  /** `127.0.0.1:<port>` */
  address: string;
  port: number;
  close(): Promise<void>;
}

/** A bucket CORS rule letting a browser on any origin PUT (HTTP Direct uploads) and read. */
const BROWSER_CORS =
  "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PUT</AllowedMethod>" +
  "<AllowedMethod>GET</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader></CORSRule></CORSConfiguration>";

/**
 * s3rver with a bucket and one known key pair (with `cors`, a rule for browsers on the bucket). s3rver checks that the access key exists but does
 * not verify SigV4 signatures (its source says the V4 calculation is unimplemented), so a front
 * verifies them with the known secret and answers S3's `SignatureDoesNotMatch` error, as AWS does.
 */
export async function startS3(options: { cors?: boolean } = {}): Promise<RunningServer & { endpoint: string }> {
  const S3rver = require("s3rver");
  const AWSAccount = require("s3rver/lib/models/account");
  const directory = mkdtempSync(join(tmpdir(), "gatehouse-s3-"));
  const s3rver = new S3rver({
    directory,
    silent: true,
    configureBuckets: [{ name: S3_BUCKET, configs: options.cors ? [BROWSER_CORS] : [] }],
  });
  serializeDeletes(require("s3rver/lib/stores/filesystem"));
  settleMetadataReads(require("s3rver/lib/stores/filesystem"));
  await s3rver.configureBuckets();
  AWSAccount.DUMMY_ACCOUNT.createKeyPair(S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY);
  const handle = s3rver.callback() as (req: IncomingMessage, res: ServerResponse) => void;
  const log = requestLog();
  const stall = partStall(handle);
  const server = createHttpServer((req, res) => {
    if (log(req, res) || stall(req, res)) return;
    if (signatureMismatch(req)) {
      res.writeHead(403, { "Content-Type": "application/xml" });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code>' +
          "<Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message></Error>",
      );
      return;
    }
    if (!copySourceAsS3Decodes(req, res)) return;
    if (multipartGap(req, res, join(directory, S3_BUCKET, "._S3rver_uploads"))) return;
    handle(req, res);
  });
  const port = await listen(server);
  return {
    address: `127.0.0.1:${port}`,
    port,
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      await closeServer(server);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * S3 decodes CopyObject's `x-amz-copy-source` fully (a `+` sent as `%2B` is a `+`) and refuses one
 * that is not valid percent-encoding; s3rver decodes it with decodeURI, which keeps `%2B`, `%23`,
 * `%3F` and the like. The header is handed to s3rver as S3 would read it; false when refused here.
 */
function copySourceAsS3Decodes(req: IncomingMessage, res: ServerResponse): boolean {
  const source = req.headers["x-amz-copy-source"];
  if (typeof source !== "string") return true;
  try {
    req.headers["x-amz-copy-source"] = encodeURI(decodeURIComponent(source));
    return true;
  } catch {
    res.writeHead(400, { "Content-Type": "application/xml" });
    res.end(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidArgument</Code><Message>Invalid copy source encoding</Message></Error>',
    );
    return false;
  }
}

/**
 * s3rver 3.7 stores multipart uploads (one folder per upload in its bucket's `._S3rver_uploads`)
 * but answers neither AbortMultipartUpload nor ListMultipartUploads: both are answered here from
 * that folder, as S3 answers them, so a test can see what an upload left pending. True when handled.
 */
function multipartGap(req: IncomingMessage, res: ServerResponse, uploadsDir: string): boolean {
  const url = new URL(req.url ?? "/", "http://s3.test");
  const uploadId = url.searchParams.get("uploadId");
  if (req.method === "DELETE" && uploadId !== null) {
    const folder = join(uploadsDir, uploadId);
    if (!/^[0-9a-f]+$/.test(uploadId) || !existsSync(folder)) {
      res.writeHead(404, { "Content-Type": "application/xml" });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>',
      );
      return true;
    }
    rmSync(folder, { recursive: true, force: true });
    res.writeHead(204).end();
    return true;
  }
  if (req.method === "GET" && url.pathname === `/${S3_BUCKET}` && url.searchParams.has("uploads")) {
    const uploads = existsSync(uploadsDir) ? readdirSync(uploadsDir) : [];
    // An upload begun or completed meanwhile may have its folder without its key: not listed.
    const entries = uploads.flatMap((id) => {
      const keyFile = join(uploadsDir, id, "key");
      if (!existsSync(keyFile)) return [];
      const key = readFileSync(keyFile, "utf8");
      return [
        `<Upload><Key>${key.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</Key><UploadId>${id}</UploadId></Upload>`,
      ];
    });
    res.writeHead(200, { "Content-Type": "application/xml" });
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>${S3_BUCKET}</Bucket>${entries.join("")}</ListMultipartUploadsResult>`,
    );
    return true;
  }
  return false;
}

/**
 * s3rver's DeleteObjects deletes its keys in parallel, and each deletion removes the folders it
 * empties: two keys of one folder race (rmdir of a folder the other already removed) and the
 * request answers InternalError. One deletion at a time, as a real S3 behaves for the client.
 */
function serializeDeletes(FilesystemStore: {
  prototype: { deleteObject(bucket: string, key: string): Promise<void> };
}) {
  const original = FilesystemStore.prototype.deleteObject;
  if ((original as { serialized?: boolean }).serialized) return;
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = function (this: unknown, bucket: string, key: string) {
    const run = queue.then(() => original.call(this, bucket, key));
    queue = run.catch(() => undefined);
    return run;
  };
  FilesystemStore.prototype.deleteObject = Object.assign(serialized, { serialized: true });
}

/**
 * s3rver rewrites an object's metadata file in place (truncate, then write) when the object is put,
 * and reads it back to list or get the object: a listing beside an overwrite read it half written
 * and answered InternalError (`SyntaxError: Unexpected end of JSON input`; a bench of 4 writers and
 * 3 listers saw it on 317 of 1,122 listings). Amazon S3 shows the old object or the new one: here
 * such a read is taken again until the file is whole.
 */
function settleMetadataReads(FilesystemStore: {
  prototype: { getMetadata(bucket: string, key: string): Promise<unknown> };
}) {
  const original = FilesystemStore.prototype.getMetadata;
  if ((original as { settled?: boolean }).settled) return;
  const settled = async function (this: unknown, bucket: string, key: string) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await original.call(this, bucket, key);
      } catch (error) {
        if (!(error instanceof SyntaxError) || attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  FilesystemStore.prototype.getMetadata = Object.assign(settled, { settled: true });
}

/** True when a request signed with our access key carries a SigV4 signature that our secret does not produce. */
function signatureMismatch(req: IncomingMessage): boolean {
  const authorization = req.headers.authorization ?? "";
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(
      authorization,
    );
  if (!match) return false;
  const [, accessKeyId, day, region, service, signedHeaders, signature] = match;
  if (accessKeyId !== S3_ACCESS_KEY_ID) return false; // s3rver itself answers InvalidAccessKeyId
  const url = new URL(req.url ?? "/", "http://s3.test");
  const encode = (value: string) =>
    encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const query = [...url.searchParams]
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1));
  const headerNames = signedHeaders!.split(";");
  const canonicalRequest = [
    req.method,
    url.pathname,
    query.map(([k, v]) => `${k}=${v}`).join("&"),
    ...headerNames.map(
      (name) =>
        `${name}:${String(req.headers[name] ?? "")
          .trim()
          .replace(/\s+/g, " ")}`,
    ),
    "",
    signedHeaders,
    String(req.headers["x-amz-content-sha256"] ?? "UNSIGNED-PAYLOAD"),
  ].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = [
    "AWS4-HMAC-SHA256",
    String(req.headers["x-amz-date"]),
    scope,
    createHash("sha256").update(canonicalRequest).digest("hex"),
  ].join("\n");
  const key = [day!, region!, service!, "aws4_request"].reduce<Buffer | string>(
    (k, part) => createHmac("sha256", k).update(part).digest(),
    `AWS4${S3_SECRET_ACCESS_KEY}`,
  );
  return createHmac("sha256", key).update(stringToSign).digest("hex") !== signature;
}

/** webdav-server (v2) with HTTP basic auth, one user, and the folder DAV_ROOT. */
export async function startWebdav(): Promise<RunningServer & { url: string }> {
  const users = new webdav.SimpleUserManager();
  const user = users.addUser(DAV_USER.username, DAV_USER.password, false);
  const privileges = new webdav.SimplePathPrivilegeManager();
  privileges.setRights(user, "/", ["all"]);
  const dav = new webdav.WebDAVServer({
    httpAuthentication: new webdav.HTTPBasicAuthentication(users, "Gatehouse test"),
    privilegeManager: privileges,
  });
  await new Promise<void>((resolve, reject) =>
    dav
      .rootFileSystem()
      .addSubTree(
        dav.createExternalContext(),
        { [DAV_ROOT.slice(1)]: { "readme.txt": webdav.ResourceType.File } },
        (error) => (error ? reject(error) : resolve()),
      ),
  );
  const log = requestLog();
  const faults = readFaults();
  const server = createHttpServer((req, res) => {
    if (log(req, res) || faults(req, res)) return;
    dropShortReplies(res);
    dav.executeRequest(req, res);
  });
  const port = await listen(server);
  return { address: `127.0.0.1:${port}`, port, url: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}

/**
 * webdav-server ends a ranged reply when its file stream ends rather than when the reply is written
 * out, so a reply read slowly ends short of its Content-Length (the runner takes the read up again
 * from there: operations.ts resumedRange). Node then keeps the connection open, and the client
 * waits out the keep-alive timeout (5 s) before it learns the reply broke off. Here such a reply's
 * connection is closed at once, as by a server whose send failed: the same break, without the wait.
 */
function dropShortReplies(res: ServerResponse) {
  let written = 0;
  const count = (chunk: unknown) => {
    if (typeof chunk === "string") written += Buffer.byteLength(chunk);
    else if (chunk instanceof Uint8Array) written += chunk.byteLength;
  };
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    // What the range filter still flushes after Get.js ended the reply is dropped, not an error.
    if (res.writableEnded) return true;
    count(chunk);
    return write(chunk, ...rest);
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    count(args[0]);
    const result = end(...args);
    const declared = Number(res.getHeader("content-length"));
    if (res.statusCode === 206 && written < declared) res.socket?.destroy();
    return result;
  }) as typeof res.end;
}

/**
 * Reads that break off or fail, on demand, for tests of the readers of upstream bytes (fs/link-read.ts).
 * `POST /__breakoff?path=<path>&after=<bytes>&count=<n>` cuts the next n GET replies of `path` (the
 * URL's path, decoded) after `after` bytes of body, the connection closed as by a server whose send
 * failed; `count=-1` cuts every one until `count=0` clears it, and `after=0` gives headers and no
 * byte (a storage failing for good). With `status=<code>` instead, those GETs answer that status.
 * True when the request was handled here or is answered as armed.
 */
function readFaults(): (req: IncomingMessage, res: ServerResponse) => boolean {
  const armed = new Map<string, { after: number; count: number; status: number | null }>();
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://dav.test");
    if (req.method === "POST" && url.pathname === "/__breakoff") {
      const path = url.searchParams.get("path") ?? "";
      const count = Number(url.searchParams.get("count") ?? "1");
      const status = url.searchParams.get("status");
      if (count === 0) armed.delete(path);
      else
        armed.set(path, {
          after: Number(url.searchParams.get("after") ?? "0"),
          count,
          status: status === null ? null : Number(status),
        });
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify([...armed.keys()]));
      return true;
    }
    const path = decodeURIComponent(url.pathname);
    const fault = req.method === "GET" ? armed.get(path) : undefined;
    if (!fault) return false;
    if (fault.count > 0 && --fault.count === 0) armed.delete(path);
    if (fault.status !== null) {
      res.writeHead(fault.status, { "Content-Type": "text/plain" });
      res.end("failing on purpose");
      return true;
    }
    cutAfter(res, fault.after);
    return false;
  };
}

/** The reply's body is cut after `after` bytes: headers and those bytes go out, then the connection closes. */
function cutAfter(res: ServerResponse, after: number) {
  let written = 0;
  let cut = false;
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const callbackOf = (rest: unknown[]) => rest.find((item): item is () => void => typeof item === "function");
  const take = (chunk: unknown, rest: unknown[]): boolean => {
    if (cut) {
      callbackOf(rest)?.();
      return true;
    }
    const bytes =
      typeof chunk === "string"
        ? Buffer.from(chunk, typeof rest[0] === "string" ? (rest[0] as BufferEncoding) : "utf8")
        : chunk instanceof Uint8Array
          ? chunk
          : new Uint8Array(0);
    if (written + bytes.byteLength <= after && !(after === 0 && written === 0)) {
      written += bytes.byteLength;
      return write(chunk, ...rest);
    }
    cut = true;
    res.flushHeaders();
    write(bytes.subarray(0, after - written), () => res.socket?.destroy());
    callbackOf(rest)?.();
    return true;
  };
  res.write = ((chunk: unknown, ...rest: unknown[]) => take(chunk, rest)) as typeof res.write;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    const chunk = typeof args[0] === "function" ? undefined : args[0];
    if (!cut && (chunk === undefined || chunk === null)) {
      if (after === 0 && res.statusCode < 300) take(new Uint8Array(0), []);
      else return end(...args);
    }
    if (!cut) take(chunk, args.slice(1));
    if (!cut) return end();
    return res;
  }) as typeof res.end;
}

/**
 * What a test server was asked, for tests that must prove what reached an upstream (a part not
 * read or sent again): each request as `METHOD url` and its Range header if any, in order.
 * `GET /__requests` answers the list as JSON. True when the request was that one.
 */
function requestLog(): (req: IncomingMessage, res: ServerResponse) => boolean {
  const seen: string[] = [];
  return (req, res) => {
    if (req.method === "GET" && req.url === "/__requests") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(seen));
      return true;
    }
    seen.push(`${req.method} ${req.url}${req.headers.range ? ` ${req.headers.range}` : ""}`);
    return false;
  };
}

/**
 * A worker stuck in the middle of a part, seen from S3: `POST /__stall?partNumber=<n>` makes the
 * next UploadPart of part n hang, its body unread and unanswered (its sender stuck, its lease
 * running out, as one that died there); `GET /__stalled` answers how many hang; `POST /__release`
 * takes their bodies in and answers S3's 500 InternalError (the sender comes back to life, its part
 * lost), or with `?pass` hands them on to s3rver and answers once s3rver answered them (their parts
 * stored); `&oldest` releases only the one held longest. True when the request was handled here.
 */
function partStall(
  pass: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const armed = new Set<string>();
  const held = new Map<IncomingMessage, ServerResponse>();
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://s3.test");
    const answer = (body: unknown) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
      return true;
    };
    if (req.method === "POST" && url.pathname === "/__stall") {
      armed.add(url.searchParams.get("partNumber") ?? "");
      return answer(null);
    }
    if (req.method === "GET" && url.pathname === "/__stalled") return answer(held.size);
    if (req.method === "POST" && url.pathname === "/__release") {
      const released = [...held].slice(0, url.searchParams.has("oldest") ? 1 : held.size);
      if (url.searchParams.has("pass")) {
        // Answered once s3rver answered them: their parts are stored.
        const answered = released.map(([stalled, reply]) => {
          held.delete(stalled);
          pass(stalled, reply);
          stalled.resume();
          return new Promise((resolve) => reply.on("close", resolve));
        });
        void Promise.all(answered).then(() => answer(null));
        return true;
      }
      for (const [stalled, reply] of released) {
        held.delete(stalled);
        stalled.on("error", () => reply.destroy());
        stalled.on("end", () => {
          reply.writeHead(500, { "Content-Type": "application/xml" });
          reply.end(
            '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>',
          );
        });
        stalled.resume();
      }
      return answer(null);
    }
    const part = url.searchParams.get("partNumber");
    if (req.method !== "PUT" || part === null || !url.searchParams.has("uploadId") || !armed.delete(part)) return false;
    req.pause();
    held.set(req, res);
    return true;
  };
}

/**
 * A WebDAV stand-in that answers every PROPFIND with a folder after `delayMs`, and records the most
 * requests it had in flight at once: for checks that must run in the background, a few at a time.
 */
export async function startSlowWebdav(
  delayMs: number,
): Promise<RunningServer & { url: string; maxInFlight(): number }> {
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createHttpServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    req.resume();
    setTimeout(() => {
      inFlight--;
      res.writeHead(207, { "Content-Type": "application/xml" });
      res.end(
        '<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>',
      );
    }, delayMs);
  });
  const port = await listen(server);
  return {
    address: `127.0.0.1:${port}`,
    port,
    url: `http://127.0.0.1:${port}`,
    maxInFlight: () => maxInFlight,
    close: () => closeServer(server),
  };
}

/** Files the FTP server holds under FTP_ROOT from the start, for the file-side tests to read. */
const FTP_FILES: Record<string, string | number> = {
  "hello.txt": "hello over ftp\n",
  "docs/a b é.txt": "0123456789abcdef",
  // A size: that many bytes of the pattern ftpPatternByte gives.
  "big.bin": 5 * 1024 * 1024 + 7,
};

/** The byte at `offset` of the sized FTP fixtures. */
export const ftpPatternByte = (offset: number) => (offset * 7 + (offset >> 11)) & 0xff;

/** ftp-srv with one user whose root is a temp folder holding FTP_ROOT and FTP_FILES; passive mode on 127.0.0.1. */
export async function startFtp(): Promise<RunningServer> {
  const root = mkdtempSync(join(tmpdir(), "gatehouse-ftp-"));
  mkdirSync(join(root, FTP_ROOT));
  for (const [path, content] of Object.entries(FTP_FILES)) {
    const file = join(root, FTP_ROOT, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      typeof content === "string" ? content : Uint8Array.from({ length: content }, (_, i) => ftpPatternByte(i)),
    );
  }
  const bunyan = require("bunyan");
  const ftp = new FtpSrv({
    url: "ftp://127.0.0.1:0",
    pasv_url: "127.0.0.1",
    pasv_min: 30000,
    pasv_max: 40000,
    log: bunyan.createLogger({ name: "ftp-srv", level: "fatal" }),
  });
  ftp.on("login", ({ username, password }, resolve, reject) => {
    if (username === FTP_USER.username && password === FTP_USER.password) resolve({ root });
    else reject(new Error("Invalid username or password")); // ftp-srv answers PASS with 530 and this text
  });
  await ftp.listen();
  // ftp-srv keeps its net.Server in a field its types leave out; the port is only known there.
  const server = (ftp as unknown as { server: TcpServer }).server;
  const port = (server.address() as AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    close: async () => {
      await ftp.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A TCP peer that sends `greeting` (if any) on connect and then keeps the connection open, silent. */
export async function startTcpGreeter(greeting?: string): Promise<RunningServer> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    if (greeting !== undefined) socket.write(greeting);
  });
  const port = await listen(server);
  return {
    address: `127.0.0.1:${port}`,
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await closeServer(server);
    },
  };
}

/**
 * An SMB stand-in (no SMB server is installable here): it reads one NetBIOS-framed message and, if it
 * is a well-formed SMB2 NEGOTIATE request (MS-SMB2 §2.2.3), answers with an SMB2 NEGOTIATE response
 * header choosing dialect 3.0.2; anything else gets the connection closed.
 */
export async function startSmbStandIn(): Promise<RunningServer> {
  const server = createTcpServer((socket) => {
    let received = Buffer.alloc(0);
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4 || received.length < 4 + received.readUInt32BE(0)) return;
      const smb = received.subarray(4);
      const dialects = smb.readUInt16LE(64 + 2);
      const wellFormed =
        smb.subarray(0, 4).equals(Buffer.from([0xfe, 0x53, 0x4d, 0x42])) &&
        smb.readUInt16LE(4) === 64 &&
        smb.readUInt16LE(12) === 0 &&
        smb.readUInt16LE(64) === 36 &&
        smb.length === 64 + 36 + dialects * 2;
      if (!wellFormed) return void socket.destroy();
      const reply = Buffer.alloc(4 + 64 + 65);
      reply.writeUInt32BE(64 + 65, 0);
      Buffer.from([0xfe, 0x53, 0x4d, 0x42]).copy(reply, 4);
      reply.writeUInt16LE(64, 4 + 4); // StructureSize
      reply.writeUInt32LE(1, 4 + 16); // Flags: SERVER_TO_REDIR
      reply.writeUInt16LE(65, 4 + 64); // NEGOTIATE response StructureSize
      reply.writeUInt16LE(0x0302, 4 + 64 + 4); // DialectRevision
      socket.end(reply);
    });
  });
  const port = await listen(server);
  return { address: `127.0.0.1:${port}`, port, close: () => closeServer(server) };
}

/** An SFTP-like peer: the SSH identification line, as an OpenSSH server sends it. */
export const startSshGreeter = () => startTcpGreeter(`${SSH_IDENTIFICATION}\r\n`);

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function unusedPort(): Promise<number> {
  const server = createTcpServer();
  const port = await listen(server);
  await closeServer(server);
  return port;
}

function listen(server: HttpServer | TcpServer): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: HttpServer | TcpServer): Promise<void> {
  if ("closeAllConnections" in server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Byte `i` of every file the download server serves: a pattern a test can check anywhere. */
export const downloadByte = (i: number) => i % 251;

/**
 * The URLs offline downloads fetch in the tests: `/bytes/<n>/<name>` is n bytes of `downloadByte`
 * with its length and byte ranges (as a static file server answers), `/disposition/<n>` the same
 * named by Content-Disposition, `/unsized/<n>` without a length (chunked), `/noranges/<n>` that
 * says `Accept-Ranges: bytes` but answers a ranged read with 200 and the whole file, `/status/<code>`
 * that status, `/redirect/<any>?to=<url>` a 302 to `url` (without `to`: to itself, a loop). `/hits` answers how many requests each path got, for tests that must see none.
 */
export async function startDownloads(): Promise<RunningServer & { url: string }> {
  const hits = new Map<string, number>();
  const server = createHttpServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/hits") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(JSON.stringify(Object.fromEntries(hits)));
    }
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const [, kind, arg] = path.split("/");
    if (kind === "redirect") {
      res.writeHead(302, { Location: new URL(req.url ?? "/", "http://x").searchParams.get("to") ?? path });
      return res.end();
    }
    if (kind === "status") {
      res.writeHead(Number(arg));
      return res.end();
    }
    const size = Number(arg);
    // `noranges` advertises ranges but answers every read with the whole file.
    const range = kind === "noranges" ? null : /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
    const [start, end] =
      range && kind !== "unsized" ? [Number(range[1]), Math.min(Number(range[2]), size - 1)] : [0, size - 1];
    const headers: Record<string, string> = { "Content-Type": "application/octet-stream" };
    if (kind !== "unsized") {
      headers["Accept-Ranges"] = "bytes";
      headers["Content-Length"] = String(end - start + 1);
      if (range) headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
    }
    if (kind === "disposition") headers["Content-Disposition"] = `attachment; filename="named by header.bin"`;
    res.writeHead(range && kind !== "unsized" ? 206 : 200, headers);
    let at = start;
    const pump = () => {
      while (at <= end) {
        const chunk = Buffer.alloc(Math.min(65536, end - at + 1));
        for (let i = 0; i < chunk.length; i++) chunk[i] = downloadByte(at + i);
        at += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
  });
  const port = await listen(server);
  return { address: `127.0.0.1:${port}`, port, url: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}
