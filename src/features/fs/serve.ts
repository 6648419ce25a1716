// Serving a file's bytes through this server (AList v3.58.0 server/handles/down.go:124,
// server/common/proxy.go:23): a URL link is fetched with the client's Range and If-* headers and
// streamed back as the upstream answers; a byte source is served here with Range and conditional
// requests. Bodies stream: memory stays flat.
import { FileError, type ByteSource, type Link } from "../../drivers/types.ts";
import { redactUserinfo } from "../../drivers/failures.ts";
import { upstreamFailed, upstreamRedirected, upstreamUnreachable } from "./messages.ts";
import { escapePath } from "./path.ts";
import { extensionOf } from "./wire.ts";

/** Client headers a proxied request carries upstream: ranges and validators, not credentials or cookies. */
const FORWARDED_HEADERS = [
  "range",
  "if-range",
  "if-match",
  "if-none-match",
  "if-modified-since",
  "if-unmodified-since",
  "accept",
  "user-agent",
];

/**
 * Upstream reply headers that describe the bytes. The rest (auth challenges, the upstream's CORS,
 * cookies, server banners, hop-by-hop headers) stays upstream: AList copied all but Set-Cookie.
 */
const RETURNED_HEADERS = [
  "content-type",
  "content-length",
  "content-range",
  "accept-ranges",
  "etag",
  "last-modified",
  "content-disposition",
  "content-language",
  "cache-control",
  "expires",
];

/** Upstream statuses that are the client's own answer, passed through rather than turned into an error. */
const CLIENT_STATUSES = new Set([304, 412, 416]);

export async function serveLink(request: Request, link: Link, name: string): Promise<Response> {
  return "source" in link ? serveSource(request, link.source, name) : proxyUrl(request, link);
}

async function proxyUrl(request: Request, link: { url: string; headers?: Record<string, string> }): Promise<Response> {
  const headers = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = request.headers.get(name);
    // A Range that is no single valid byte range is ignored here, as for a byte source: upstreams
    // differ on it (webdav-server drops the connection on `bytes=5-2`).
    if (value !== null && !(name === "range" && parseRange(value) === null)) headers.set(name, value);
  }
  for (const [name, value] of Object.entries(link.headers ?? {})) headers.set(name, value);
  const method = request.method === "HEAD" ? "HEAD" : "GET";
  let upstream: Response;
  try {
    // A link that carries credentials is not followed elsewhere: a redirect would take them along.
    upstream = await fetch(link.url, {
      method,
      headers,
      redirect: link.headers ? "manual" : "follow",
      signal: request.signal,
    });
  } catch (error) {
    throw new FileError(
      "upstream",
      upstreamUnreachable(
        withoutQuery(link.url),
        redactUserinfo(error instanceof Error ? error.message : String(error)),
      ),
    );
  }
  if (upstream.status >= 300 && upstream.status < 400 && upstream.status !== 304) {
    await upstream.body?.cancel();
    throw new FileError("upstream", upstreamRedirected(withoutQuery(link.url), upstream.status));
  }
  if (upstream.status >= 400 && !CLIENT_STATUSES.has(upstream.status)) {
    const text = (await upstream.text().catch(() => "")).slice(0, 512);
    throw new FileError("upstream", upstreamFailed(withoutQuery(link.url), upstream.status, text));
  }
  const replyHeaders = new Headers();
  for (const name of RETURNED_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) replyHeaders.set(name, value);
  }
  return new Response(method === "HEAD" ? null : upstream.body, { status: upstream.status, headers: replyHeaders });
}

/** A URL as errors may show it: presigned queries carry signatures and userinfo carries passwords, so both stay out. */
const withoutQuery = (url: string) => redactUserinfo(url.replace(/[?#].*$/, ""));

/** AList's Etag of a file without hashes: mtime seconds and size, in hex. */
export const etagOf = (source: Pick<ByteSource, "size" | "modified">) =>
  `"${Math.floor(source.modified.getTime() / 1000).toString(16)}-${source.size.toString(16)}"`;

export function contentDisposition(name: string): string {
  const quoted = name.replace(/["\\\r\n]|[^\x20-\x7e]/g, "_");
  return `attachment; filename="${quoted}"; filename*=UTF-8''${escapePath(name).replace(/'/g, "%27")}`;
}

async function serveSource(request: Request, source: ByteSource, name: string): Promise<Response> {
  const etag = etagOf(source);
  const modifiedSeconds = Math.floor(source.modified.getTime() / 1000);
  const headers = new Headers({
    "Content-Type": contentTypeOf(name),
    "Content-Disposition": contentDisposition(name),
    Etag: etag,
    "Last-Modified": source.modified.toUTCString(),
    "Accept-Ranges": "bytes",
  });
  const reply = (status: number) => new Response(null, { status, headers });

  if (preconditionFailed(request.headers, etag, modifiedSeconds)) return reply(412);
  if (notModified(request.headers, etag, modifiedSeconds)) return reply(304);
  // An empty file is not read: a source is asked for one byte at least.
  const bytes = source.size === 0 ? { size: 0, read: async () => null } : source;
  return rangeReply(request, bytes, headers, { etag, modified: modifiedSeconds });
}

/** Bytes this server reads itself and serves with Range: a storage's byte source, an archive's entry. */
export interface RangedBytes {
  size: number;
  /** The bytes from `start` to `end` inclusive; null for none. */
  read(start: number, end: number, signal?: AbortSignal): Promise<ReadableStream<Uint8Array> | null>;
}

/**
 * The reply to a GET or HEAD of `bytes`, whole or the one range asked for (206, Content-Range; 416
 * past the end), with `headers` (the caller's: type, disposition, validators). An If-Range is
 * honoured only with `validators`: without them a Range is always served.
 */
export async function rangeReply(
  request: Request,
  bytes: RangedBytes,
  headers: Headers,
  validators?: { etag: string; modified: number },
): Promise<Response> {
  const reply = (status: number, body: ReadableStream<Uint8Array> | null) =>
    new Response(request.method === "HEAD" ? null : body, { status, headers });
  const range = byteRange(request.headers, bytes.size, validators);
  if (range === "unsatisfiable") {
    headers.set("Content-Range", `bytes */${bytes.size}`);
    return reply(416, null);
  }
  const [start, end] = range ?? [0, bytes.size - 1];
  headers.set("Content-Length", String(Math.max(0, end - start + 1)));
  if (range) headers.set("Content-Range", `bytes ${start}-${end}/${bytes.size}`);
  if (request.method === "HEAD") return reply(range ? 206 : 200, null);
  return reply(range ? 206 : 200, await bytes.read(start, end, request.signal));
}

const etagMatches = (list: string, etag: string) =>
  list.split(",").some((tag) => tag.trim() === "*" || tag.trim().replace(/^W\//, "") === etag);

export const httpDateSeconds = (value: string | null) => {
  const ms = value === null ? Number.NaN : Date.parse(value);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
};

export function preconditionFailed(headers: Headers, etag: string, modified: number): boolean {
  const ifMatch = headers.get("if-match");
  if (ifMatch !== null) return !etagMatches(ifMatch, etag);
  const since = httpDateSeconds(headers.get("if-unmodified-since"));
  return since !== null && modified > since;
}

export function notModified(headers: Headers, etag: string, modified: number): boolean {
  const ifNoneMatch = headers.get("if-none-match");
  if (ifNoneMatch !== null) return etagMatches(ifNoneMatch, etag);
  const since = httpDateSeconds(headers.get("if-modified-since"));
  return since !== null && modified <= since;
}

/** One byte range as a Range header asks it, before the file's size is known. */
export type RangeSpec = { start: number; end: number | null } | { suffix: number };

/**
 * The Range header's one byte range; null when it is not one valid byte range (another unit,
 * several ranges, `bytes=-`, or an end before the start, which RFC 9110 §14.1.1 makes invalid):
 * such a header is ignored and the whole file served, which HTTP allows. The one parser of /d, /p
 * and /dav, run before anything is asked of an upstream.
 */
export function parseRange(header: string): RangeSpec | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") return { suffix: Number(match[2]) };
  const start = Number(match[1]);
  const end = match[2] === "" ? null : Number(match[2]);
  return end !== null && end < start ? null : { start, end };
}

/**
 * The one range asked for, as [start, end] inclusive; null for the whole file (no Range, an
 * If-Range that no longer matches `validators`, a Range parseRange ignores); "unsatisfiable" when
 * the range lies past the end of the file.
 */
function byteRange(
  headers: Headers,
  size: number,
  validators?: { etag: string; modified: number },
): [number, number] | null | "unsatisfiable" {
  const header = headers.get("range");
  if (header === null) return null;
  const ifRange = headers.get("if-range");
  if (validators && ifRange !== null && ifRange !== validators.etag && httpDateSeconds(ifRange) !== validators.modified)
    return null;
  return rangeWithin(header, size);
}

/** A Range header's one byte range within `size` bytes, as [start, end]; null when it asks for none parseRange takes. */
export function rangeWithin(header: string, size: number): [number, number] | null | "unsatisfiable" {
  const range = parseRange(header);
  if (range === null) return null;
  if ("suffix" in range) {
    if (range.suffix === 0 || size === 0) return "unsatisfiable";
    return [Math.max(0, size - range.suffix), size - 1];
  }
  if (range.start >= size) return "unsatisfiable";
  return [range.start, range.end === null ? size - 1 : Math.min(range.end, size - 1)];
}

const CONTENT_TYPES: Record<string, string> = {
  txt: "text/plain; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  json: "application/json",
  xml: "text/xml; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  ico: "image/x-icon",
  bmp: "image/bmp",
  mp4: "video/mp4",
  webm: "video/webm",
  mkv: "video/x-matroska",
  mov: "video/quicktime",
  m3u8: "application/vnd.apple.mpegurl",
  mp3: "audio/mpeg",
  flac: "audio/flac",
  ogg: "audio/ogg",
  m4a: "audio/mp4",
  wav: "audio/wav",
  opus: "audio/opus",
  pdf: "application/pdf",
  zip: "application/zip",
  srt: "text/plain; charset=utf-8",
  vtt: "text/vtt; charset=utf-8",
  ass: "text/plain; charset=utf-8",
};

export const contentTypeOf = (name: string) => CONTENT_TYPES[extensionOf(name)] ?? "application/octet-stream";
