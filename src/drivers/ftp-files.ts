// The file side of FTP (docs/decisions.md D7; AList v3.58.0 drivers/ftp/driver.go) over Workers TCP
// sockets. A Worker cannot keep a connection between requests, so each operation signs in on its
// own control connection and ends it. Data moves over passive connections (EPSV, else PASV) to the
// control connection's own host: the address a PASV reply names is ignored, so a server cannot
// point the Worker at another machine. Reads are byte sources (REST + RETR), so /d and /p serve
// ranges.
import { cleanPath } from "../lib/path.ts";
import { exactLength } from "../lib/streams.ts";
import { requireText } from "./addition.ts";
import { errorText } from "./failures.ts";
import { hostAndPort, openTcp, workersSockets, type TcpConnection } from "./tcp.ts";
import {
  FileError,
  notAFolder,
  objectNotFound,
  type Addition,
  type ByteSource,
  type FileBackend,
  type FileObject,
  type StorageHandle,
  type Upload,
} from "./types.ts";

/** Most entries a folder removal deletes in one request. */
const MAX_REMOVED_PER_REQUEST = 1000;
const TIMEOUT_MS = 30_000;

interface Reply {
  code: number;
  text: string;
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/**
 * One line of a Unix `ls -l` listing (what LIST answers nearly everywhere): type, size, date, name.
 * Dates without a year are in the last twelve months, as `ls` prints them.
 */
export function parseListLine(
  line: string,
  now = new Date(),
): { name: string; isDir: boolean; size: number; modified: Date } | null {
  const match =
    /^([-dl])[rwxsStT-]{9}\S*\s+\d+\s+\S+\s+\S+\s+(\d+)\s+(\w{3})\s+(\d{1,2})\s+(\d{1,2}:\d{2}|\d{4})\s(.+)$/.exec(
      line,
    );
  if (!match) return null;
  const [, type, size, monthName, day, timeOrYear, rawName] = match;
  const month = MONTHS.indexOf(monthName!.toLowerCase());
  if (month < 0) return null;
  let modified: Date;
  if (timeOrYear!.includes(":")) {
    const [hours, minutes] = timeOrYear!.split(":").map(Number);
    modified = new Date(Date.UTC(now.getUTCFullYear(), month, Number(day), hours, minutes));
    if (modified.getTime() > now.getTime() + 86_400_000) modified.setUTCFullYear(now.getUTCFullYear() - 1);
  } else {
    modified = new Date(Date.UTC(Number(timeOrYear), month, Number(day)));
  }
  const name = type === "l" ? rawName!.replace(/ -> .*$/, "") : rawName!;
  if (name === "." || name === "..") return null;
  return { name, isDir: type === "d", size: Number(size), modified };
}

/** One control connection, signed in. The storage check opens one too (src/drivers/ftp.ts). */
export class FtpSession {
  private constructor(
    private readonly control: TcpConnection,
    private readonly hostname: string,
    private readonly signal: AbortSignal,
  ) {}

  static async open(
    addition: Addition,
    signal: AbortSignal = new AbortController().signal,
    timeoutMs = TIMEOUT_MS,
  ): Promise<FtpSession> {
    const address = requireText(addition, "address");
    // Checked before connecting: a line break would smuggle in another command.
    const username = lineFree(addition.text("username") || "anonymous", "username");
    const password = lineFree(addition.text("password"), "password");
    const control = await openTcp(address, 21, { signal, timeoutMs });
    const session = new FtpSession(control, hostAndPort(address, 21).hostname, signal);
    try {
      await session.expect(await session.reply(), [220], "the connection");
      const user = await session.command(`USER ${username}`);
      if (user.code === 331 || user.code === 332) {
        const pass = await session.command(`PASS ${password}`);
        if (pass.code === 530) throw new FileError("upstream", "wrong username or password");
        await session.expect(pass, [230, 202], "PASS");
      } else if (user.code === 530) {
        throw new FileError("upstream", "wrong username or password");
      } else {
        await session.expect(user, [230], "USER");
      }
      await session.expect(await session.command("TYPE I"), [200], "TYPE I");
      await session.command("OPTS UTF8 ON"); // servers that cannot: names stay as they are
      return session;
    } catch (error) {
      await control.close();
      throw error;
    }
  }

  /** One reply: `ddd text`, or `ddd-` lines up to the `ddd ` line (RFC 959 §4.2). */
  async reply(): Promise<Reply> {
    const first = await this.control.readLine();
    const match = /^(\d{3})([ -])(.*)$/.exec(first);
    if (!match) throw new Error(`${this.control.target} is not an FTP server (it sent "${first.slice(0, 80)}")`);
    if (match[2] === "-")
      for (
        let line = await this.control.readLine();
        !line.startsWith(`${match[1]} `);
        line = await this.control.readLine()
      );
    return { code: Number(match[1]), text: match[3]! };
  }

  async command(line: string): Promise<Reply> {
    await this.control.write(`${line}\r\n`);
    return this.reply();
  }

  /** Refuses a reply outside `codes`; the command is named, never its argument (PASS). */
  async expect(reply: Reply, codes: number[], step: string): Promise<Reply> {
    if (codes.includes(reply.code)) return reply;
    if (reply.code === 550) throw objectNotFound();
    throw new Error(`${this.control.target} answered ${step} with ${reply.code} ${reply.text}`);
  }

  /** A passive data connection, to the control connection's host. */
  async data(): Promise<{
    readable: ReadableStream<Uint8Array>;
    writable: WritableStream<Uint8Array>;
    close(): Promise<void>;
  }> {
    let port: number | undefined;
    const epsv = await this.command("EPSV");
    if (epsv.code === 229) port = Number(/\(\|\|\|(\d+)\|\)/.exec(epsv.text)?.[1]);
    else {
      const pasv = await this.expect(await this.command("PASV"), [227], "PASV");
      const numbers = /(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)/.exec(pasv.text);
      if (numbers) port = Number(numbers[5]) * 256 + Number(numbers[6]);
    }
    if (!port || port > 65535) throw new Error(`${this.control.target} gave no usable passive port`);
    const { connect } = await workersSockets();
    const socket = connect({ hostname: this.hostname, port });
    socket.closed.catch(() => undefined);
    try {
      await socket.opened;
    } catch (error) {
      throw new Error(`cannot open the data connection to ${this.hostname}:${port}: ${errorText(error)}`);
    }
    const close = () => socket.close().catch(() => undefined);
    this.signal.addEventListener("abort", close, { once: true });
    return { readable: socket.readable, writable: socket.writable, close };
  }

  async close(): Promise<void> {
    await this.control.write("QUIT\r\n").catch(() => undefined);
    await this.control.close();
  }
}

/** A value sent as an FTP command argument: a line break in it would smuggle in another command. */
export function lineFree(value: string, name: string): string {
  if (/[\r\n]/.test(value)) throw new FileError("upstream", `${name} must not contain line breaks`);
  return value;
}

/** A path sent as a command argument (RETR, STOR, CWD …). */
const oneLine = (path: string) => lineFree(path, "an FTP path");

async function readAllText(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

/** What every operation on one FTP storage needs: the storage (its addition, signal) and the root. */
interface Ftp {
  storage: StorageHandle;
  root: string;
}

/**
 * The FTP backend: the Files object of one storage, every operation a named function over its
 * context, each on a control connection of its own: listing, reading (a byte source), writing.
 */
export function ftpFiles(storage: StorageHandle): FileBackend {
  const ftp: Ftp = { storage, root: cleanPath(storage.addition.text("root_folder_path")) };
  return {
    list: (dir) => withSession(ftp, (session) => list(ftp, session, dir)),
    get: (path) => withSession(ftp, (session) => find(ftp, session, path)),

    link: (path) => linkOf(ftp, path),

    makeDir: (parentDir, name) => makeFolder(ftp, join(parentDir, name)),
    rename: (path, newName) => renameTo(ftp, path, join(parentOf(path), newName)),
    move: (path, dstDir) => renameTo(ftp, path, join(dstDir, path.slice(path.lastIndexOf("/") + 1))),
    remove: (path) => removePath(ftp, path),
    partialUploads: true,
    put: (dir, upload) => store(ftp, join(dir, upload.name), upload),
  };
}

const serverPath = (ftp: Ftp, path: string) => cleanPath(`${ftp.root}/${path}`);
const join = (dir: string, name: string) => (dir === "/" ? `/${name}` : `${dir}/${name}`);
const parentOf = (path: string) => path.slice(0, Math.max(1, path.lastIndexOf("/")));

async function withSession<T>(ftp: Ftp, work: (session: FtpSession) => Promise<T>): Promise<T> {
  const session = await FtpSession.open(ftp.storage.addition, ftp.storage.signal);
  try {
    return await work(session);
  } finally {
    await session.close();
  }
}

// Listing.

/** The entries of a folder the session has changed into. */
async function listHere(ftp: Ftp, session: FtpSession, dir: string): Promise<FileObject[]> {
  const data = await session.data();
  const started = await session.command("LIST");
  if (started.code !== 150 && started.code !== 125) {
    await data.close();
    await session.expect(started, [150], "LIST");
  }
  const text = await readAllText(data.readable);
  await session.expect(await session.reply(), [226, 250], "LIST");
  const now = new Date();
  return text
    .split(/\r?\n/)
    .map((line) => parseListLine(line, now))
    .filter((entry) => entry !== null)
    .map((entry) => ({
      name: entry.name,
      size: entry.isDir ? 0 : entry.size,
      isDir: entry.isDir,
      modified: entry.modified,
      path: join(serverPath(ftp, dir), entry.name),
    }));
}

async function list(ftp: Ftp, session: FtpSession, dir: string): Promise<FileObject[]> {
  const cwd = await session.command(`CWD ${oneLine(serverPath(ftp, dir))}`);
  if (cwd.code === 550) {
    if (dir === "/") throw objectNotFound();
    const parent = await list(ftp, session, parentOf(dir)).catch(() => [] as FileObject[]);
    throw parent.some((entry) => entry.name === dir.slice(dir.lastIndexOf("/") + 1) && !entry.isDir)
      ? notAFolder()
      : objectNotFound();
  }
  await session.expect(cwd, [250], "CWD");
  return listHere(ftp, session, dir);
}

async function find(ftp: Ftp, session: FtpSession, path: string): Promise<FileObject> {
  if (path === "/") return { name: "root", size: 0, isDir: true, modified: ftp.storage.modified, path: ftp.root };
  const name = path.slice(path.lastIndexOf("/") + 1);
  const found = (await list(ftp, session, parentOf(path))).find((entry) => entry.name === name);
  if (!found) throw objectNotFound();
  return found;
}

// Reading: a byte source, REST + RETR.

async function linkOf(ftp: Ftp, path: string): Promise<{ source: ByteSource }> {
  const file = await withSession(ftp, (session) => find(ftp, session, path));
  const source: ByteSource = {
    size: file.size,
    modified: file.modified,
    read: (start, end) => retrieve(ftp, path, start, end),
  };
  return { source };
}

/** Bytes `start`..`end` of a file: REST, RETR, and exactly that many bytes of the data connection. */
async function retrieve(ftp: Ftp, path: string, start: number, end: number): Promise<ReadableStream<Uint8Array>> {
  const session = await FtpSession.open(ftp.storage.addition, ftp.storage.signal);
  let data: Awaited<ReturnType<FtpSession["data"]>> | undefined;
  try {
    data = await session.data();
    if (start > 0) await session.expect(await session.command(`REST ${start}`), [350], "REST");
    const started = await session.command(`RETR ${oneLine(serverPath(ftp, path))}`);
    await session.expect(started, [150, 125], "RETR");
  } catch (error) {
    await data?.close();
    await session.close();
    throw error;
  }
  const reader = data.readable.getReader();
  let left = end - start + 1;
  const finish = async () => {
    reader.releaseLock();
    await data.close();
    await session.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (left <= 0) {
        controller.close();
        await finish();
        return;
      }
      const { done, value } = await reader.read();
      if (done) {
        controller.error(new Error(`the FTP server ended the file ${left} bytes early`));
        await finish();
        return;
      }
      const chunk = value.byteLength > left ? value.subarray(0, left) : value;
      left -= chunk.byteLength;
      controller.enqueue(chunk);
      if (left <= 0) {
        controller.close();
        await finish();
      }
    },
    async cancel() {
      await reader.cancel().catch(() => undefined);
      await finish();
    },
  });
}

// Writing.

function makeFolder(ftp: Ftp, path: string): Promise<void> {
  return withSession(
    ftp,
    async (session) =>
      void (await session.expect(await session.command(`MKD ${oneLine(serverPath(ftp, path))}`), [257, 250], "MKD")),
  );
}

async function renameTo(ftp: Ftp, path: string, target: string) {
  await withSession(ftp, async (session) => {
    await session.expect(await session.command(`RNFR ${oneLine(serverPath(ftp, path))}`), [350], "RNFR");
    await session.expect(await session.command(`RNTO ${oneLine(serverPath(ftp, target))}`), [250], "RNTO");
  });
}

function removePath(ftp: Ftp, path: string): Promise<void> {
  return withSession(ftp, async (session) => {
    let target: FileObject;
    try {
      target = await find(ftp, session, path);
    } catch (error) {
      if (error instanceof FileError && error.kind === "not_found") return; // already gone: done, as AList
      throw error;
    }
    await removeTree(ftp, session, path, target.isDir, { left: MAX_REMOVED_PER_REQUEST });
  });
}

/** Removes a file or a folder and everything in it, counting against `budget`. */
async function removeTree(
  ftp: Ftp,
  session: FtpSession,
  path: string,
  isDir: boolean,
  budget: { left: number },
): Promise<void> {
  if (--budget.left < 0)
    throw new Error(
      `more than ${MAX_REMOVED_PER_REQUEST} entries: Gatehouse removes at most ${MAX_REMOVED_PER_REQUEST} per request`,
    );
  if (!isDir) {
    await session.expect(await session.command(`DELE ${oneLine(serverPath(ftp, path))}`), [250], "DELE");
    return;
  }
  for (const entry of await list(ftp, session, path))
    await removeTree(ftp, session, join(path, entry.name), entry.isDir, budget);
  await session.expect(await session.command(`RMD ${oneLine(serverPath(ftp, path))}`), [250], "RMD");
}

/** STOR of exactly the upload's declared bytes to `path`. */
async function store(ftp: Ftp, path: string, upload: Upload): Promise<void> {
  await withSession(ftp, async (session) => {
    const data = await session.data();
    const started = await session.command(`STOR ${oneLine(serverPath(ftp, path))}`);
    if (started.code !== 150 && started.code !== 125) {
      await data.close();
      await upload.body.cancel();
      await session.expect(started, [150], "STOR");
    }
    const declared = (sent: number) => new Error(`the upload sent ${sent} bytes, not the ${upload.size} it declared`);
    await exactLength(upload.body, upload.size, { short: declared, long: declared }).body.pipeTo(data.writable);
    await session.expect(await session.reply(), [226, 250], "STOR");
  });
}
