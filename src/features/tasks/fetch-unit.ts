// An offline download's unit (docs/decisions.md D15.7, D15.9): a URL streamed straight into a
// storage, whole or in parts, every redirect hop checked before it is fetched.
import type { Env } from "../../env.ts";
import { makeDirs } from "../fs/operations.ts";
import { joinName, parentOf } from "../fs/path.ts";
import {
  fetchFailed,
  privateAddress,
  RANGE_IGNORED,
  REDIRECT_NOT_HTTP,
  SIZE_UNKNOWN,
  tooManyRedirects,
} from "./messages.ts";
import type { FetchPayload } from "./payload.ts";
import { downloadTargetAllowed, privateHostsOptIn } from "./rules.ts";
import { setTotalBytes } from "./store.ts";
import { indexed, writeFile } from "./transfer.ts";
import { type Ending, partSize, Unrecoverable, type UnitWork } from "./work.ts";

/**
 * An offline download (OpenList's `upload_download_stream`: the URL streamed straight into the
 * storage, no temporary file; OpenList internal/offline_download/tool/transfer.go:55-79).
 */
export async function fetchUnit(work: UnitWork, env: Env, download: FetchPayload): Promise<Ending> {
  const tree = await work.tree([download.toDir]);
  if (parentOf(download.toDir) !== download.toDir) await makeDirs(tree, download.toDir);
  const target = await tree.mount(download.toDir);
  const optIn = privateHostsOptIn(env.OFFLINE_DOWNLOAD_PRIVATE_HOSTS);
  const get = (headers?: Record<string, string>) => fetchGuarded(download.url, optIn, work.signal, headers);
  const ranged = async (range?: { start: number; end: number }) => {
    const response = await get(range ? { Range: `bytes=${range.start}-${range.end}` } : undefined);
    if (!response.ok || !response.body || (range && response.status !== 206)) {
      await response.body?.cancel();
      // A 200 to a ranged read is the whole file again: every attempt would get the same (D15.9).
      if (range && response.status === 200) throw new Unrecoverable(RANGE_IGNORED);
      throw new Error(fetchFailed(response.status));
    }
    return response.body;
  };
  const landed = (name: string, size: number, ending: Ending) =>
    indexed(work, download.index, target, joinName(download.toDir, name), size, ending);
  if (download.parted && download.name !== undefined && download.size !== undefined)
    return landed(
      download.name,
      download.size,
      await writeFile(work, partSize(env), target, download.name, download.size, ranged),
    );
  const response = await get();
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(fetchFailed(response.status));
  }
  const length = response.headers.get("Content-Length");
  if (length === null || !/^\d+$/.test(length)) {
    await response.body.cancel();
    throw new Unrecoverable(SIZE_UNKNOWN);
  }
  const size = Number(length);
  const name = download.name ?? fileNameOf(response, download.url);
  work.current = { kind: "fetch", payload: { ...download, name, size } };
  await setTotalBytes(work.db, work.unit.taskId, size);
  const first = response.body;
  // Parts need ranges; a server without them is streamed whole.
  const partBytes = response.headers.get("Accept-Ranges") === "bytes" ? partSize(env) : null;
  return landed(
    name,
    size,
    await writeFile(work, partBytes, target, name, size, async (range) => {
      if (!range) return first;
      await first.cancel().catch(() => undefined);
      return ranged(range);
    }),
  );
}

/** Redirects followed before a download gives up (Go's http.Client, AList's, stops at 10). */
const MAX_REDIRECTS = 10;

/**
 * A GET of `url` that follows redirects itself, checking every hop's host before it is fetched: a
 * public server must not bounce a download to the Worker's own machine or a private network
 * (docs/decisions.md D15.9). A refused hop fails the task at once.
 */
async function fetchGuarded(
  url: string,
  optIn: (hostname: string) => boolean,
  signal: AbortSignal,
  headers?: Record<string, string>,
): Promise<Response> {
  let at = new URL(url);
  for (let hop = 0; ; hop++) {
    if (at.protocol !== "http:" && at.protocol !== "https:") throw new Unrecoverable(REDIRECT_NOT_HTTP);
    if (!downloadTargetAllowed(at, optIn)) throw new Unrecoverable(privateAddress(at.hostname));
    const response = await fetch(at.href, { signal, redirect: "manual", ...(headers ? { headers } : {}) });
    const location = response.headers.get("Location");
    if (![301, 302, 303, 307, 308].includes(response.status) || location === null) return response;
    // A redirect's short body is read out, so its connection can carry the next hop; a long one is dropped.
    if (Number(response.headers.get("Content-Length") ?? Number.NaN) <= 65_536) await response.arrayBuffer();
    else await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new Unrecoverable(tooManyRedirects(MAX_REDIRECTS));
    try {
      at = new URL(location, at);
    } catch {
      throw new Unrecoverable(REDIRECT_NOT_HTTP);
    }
  }
}

/**
 * The file name of a download: Content-Disposition's filename, else the URL's last path segment,
 * else its host with dots as underscores (AList v3.58.0 internal/offline_download/http/client.go:68-76).
 */
function fileNameOf(response: Response, url: string): string {
  const disposition = response.headers.get("Content-Disposition") ?? "";
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition);
  const plain = /filename\s*=\s*"?([^";]+)"?/.exec(disposition);
  const pick = (raw: string | undefined) => {
    if (!raw) return "";
    try {
      return decodeURIComponent(raw).replace(/[/\\]/g, "_").trim();
    } catch {
      return "";
    }
  };
  const fromHeader = pick(star?.[1]) || pick(plain?.[1]);
  if (fromHeader && fromHeader !== "." && fromHeader !== "..") return fromHeader;
  const parsed = new URL(url);
  const segment = pick(parsed.pathname.split("/").filter(Boolean).pop());
  return segment && segment !== "." && segment !== ".." ? segment : parsed.hostname.replace(/\./g, "_");
}
