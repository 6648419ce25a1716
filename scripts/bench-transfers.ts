// The transfers `npm run bench` measures beside the request rates (BENCH_ONLY=multipart,
// BENCH_ONLY=tasks, BENCH_ONLY=s3-transfers): big files through the chunked upload API, the
// background tasks at scale, and the same bytes through /s3 beside /d and fs/put; copies between
// storages beside `rclone copy` are in bench-copy-pace.ts.
// Each run checks what a user would: the bytes landed exactly, the listing shows the size, nothing
// is left pending or staged upstream; and prints the Worker's resident memory (the workerd
// processes of wrangler dev, and the Worker isolate's own) before and at its peak.
import { createHash, randomBytes } from "node:crypto";
import { AwsClient } from "aws4fetch";
import { readdirSync, readFileSync } from "node:fs";
import { type Inspector, isolateMemory } from "./inspector.ts";
import {
  DAV_ROOT,
  DAV_USER,
  downloadByte,
  S3_ACCESS_KEY_ID,
  S3_BUCKET,
  S3_SECRET_ACCESS_KEY,
  s3TestClient,
  startDownloads,
  startS3,
  startWebdav,
} from "../test/support/storage-servers.ts";

const MIB = 1024 ** 2;
const DAV_AUTH = `Basic ${Buffer.from(`${DAV_USER.username}:${DAV_USER.password}`).toString("base64")}`;

interface Envelope {
  code: number;
  message: string;
  // biome-ignore lint/suspicious/noExplicitAny: each caller reads its own route's fields
  data: any;
}

/** The resident memory of the workerd processes (wrangler dev runs the Worker in them). */
export function workerdRss(): number {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd")) continue;
      total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/**
 * Memory before, and at its peak until `stop()`: the workerd processes' resident memory, and the
 * Worker isolate's own (its JavaScript heap in use plus the ArrayBuffers it holds, through the
 * inspector, after a garbage collection: what it holds alive), which is what a Worker is held to
 * (128 MB on Cloudflare). Sampled every 500 ms.
 */
function memoryWatch(inspector: Inspector) {
  const mib = (bytes: number) => (bytes / MIB).toFixed(0);
  const before = workerdRss();
  let peak = before;
  let isolateBefore: number | undefined;
  let isolatePeak = 0;
  const sample = async () => {
    peak = Math.max(peak, workerdRss());
    const { heap, buffers } = await isolateMemory(inspector, { collected: true });
    isolateBefore ??= heap + buffers;
    isolatePeak = Math.max(isolatePeak, heap + buffers);
  };
  const first = sample();
  const timer = setInterval(() => void sample(), 500);
  return {
    async stop() {
      clearInterval(timer);
      await first;
      return `the isolate's live heap and buffers ${mib(isolateBefore!)} MiB before, at most ${mib(isolatePeak)} MiB during; workerd's resident memory ${mib(before)} MiB before, at most ${mib(peak)} MiB`;
    },
  };
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
export const rate = (bytes: number, ms: number) => `${(bytes / MIB / (ms / 1000)).toFixed(0)} MiB/s`;
export const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The Gatehouse API as the admin: JSON in, the envelope out. */
export function apiOf(base: string, token: string) {
  return async (path: string, body?: unknown, init: RequestInit = {}): Promise<Envelope> => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      ...init,
      headers: {
        Authorization: token,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        ...(init.headers as Record<string, string>),
      },
      body: body === undefined ? init.body : JSON.stringify(body),
      duplex: "half",
    } as RequestInit);
    return (await response.json()) as Envelope;
  };
}

export async function mount(api: ReturnType<typeof apiOf>, mountPath: string, driver: string, addition: object) {
  const created = await api("/api/admin/storage/create", {
    mount_path: mountPath,
    driver,
    addition: JSON.stringify(addition),
  });
  if (created.code !== 200) throw new Error(`${driver} storage at ${mountPath}: ${created.message}`);
}

export const s3Addition = (endpoint: string, root: string) => ({
  endpoint,
  bucket: S3_BUCKET,
  access_key_id: S3_ACCESS_KEY_ID,
  secret_access_key: S3_SECRET_ACCESS_KEY,
  root_folder_path: root,
});

export const davAddition = (url: string, root: string) => ({
  address: url,
  username: DAV_USER.username,
  password: DAV_USER.password,
  root_folder_path: root,
});

/** A client of the bucket itself, to read what landed without the Worker. */
export function bucketOf(endpoint: string) {
  const client = s3TestClient();
  const url = (key: string) => `${endpoint}/${S3_BUCKET}/${key.split("/").map(encodeURIComponent).join("/")}`;
  return {
    put: (key: string, body: Uint8Array) => client.fetch(url(key), { method: "PUT", body }),
    async bytes(key: string): Promise<Uint8Array> {
      const response = await client.fetch(url(key));
      if (!response.ok) throw new Error(`GET ${key}: HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    },
    /**
     * The files under `prefix`, folder markers left out: ListObjects (v1) page by page, as
     * s3rver answers a truncated ListObjectsV2 with an internal error.
     */
    async files(prefix: string): Promise<string[]> {
      const keys: string[] = [];
      for (let marker = "", truncated = true; truncated; marker = keys.at(-1) ?? "") {
        const xml = await (
          await client.fetch(
            `${endpoint}/${S3_BUCKET}?prefix=${encodeURIComponent(prefix)}&marker=${encodeURIComponent(marker)}`,
          )
        ).text();
        if (!xml.includes("<ListBucketResult")) throw new Error(`listing ${prefix}: ${xml.slice(0, 200)}`);
        keys.push(...[...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) => match[1]!.replace(/&amp;/g, "&")));
        truncated = xml.includes("<IsTruncated>true</IsTruncated>");
      }
      // A folder is a marker key or, as the S3 driver makes them, a `.alist` placeholder in it.
      return keys.filter((key) => !key.endsWith("/") && !key.endsWith("/.alist"));
    },
    /** Opens a multipart upload of `key`; its UploadId. */
    async beginParts(key: string): Promise<string> {
      const xml = await (await client.fetch(`${url(key)}?uploads`, { method: "POST" })).text();
      const id = /<UploadId>([^<]*)</.exec(xml)?.[1];
      if (!id) throw new Error(`create multipart upload ${key}: ${xml.slice(0, 200)}`);
      return id;
    },
    async completeParts(key: string, uploadId: string, tags: string[]) {
      const parts = tags.map((tag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${tag}</ETag></Part>`).join("");
      const response = await client.fetch(`${url(key)}?uploadId=${encodeURIComponent(uploadId)}`, {
        method: "POST",
        body: `<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`,
      });
      if (!response.ok) throw new Error(`complete multipart upload ${key}: HTTP ${response.status}`);
      await response.arrayBuffer();
    },
    /** The headers of a signed request with an unsigned payload, for another client to send. */
    async sign(target: string, method: string): Promise<Record<string, string>> {
      const signed = await client.sign(target, { method, headers: { "X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD" } });
      return Object.fromEntries(signed.headers);
    },
    /** The multipart uploads the bucket still holds open (none once an upload completed or aborted). */
    async pending(): Promise<number> {
      const xml = await (await client.fetch(`${endpoint}/${S3_BUCKET}?uploads`)).text();
      return [...xml.matchAll(/<UploadId>/g)].length;
    },
  };
}

/** A WebDAV server's file, or null when it is not there. */
async function davBytes(url: string, path: string): Promise<Uint8Array | null> {
  const response = await fetch(`${url}${DAV_ROOT}${path}`, { headers: { Authorization: DAV_AUTH } });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`WebDAV GET ${path}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** The names in a WebDAV folder (PROPFIND, depth 1). */
async function davNames(url: string, path: string): Promise<string[]> {
  const response = await fetch(`${url}${DAV_ROOT}${path}`, {
    method: "PROPFIND",
    headers: { Authorization: DAV_AUTH, Depth: "1" },
  });
  if (response.status === 404) return [];
  const hrefs = [...(await response.text()).matchAll(/<D:href>([^<]*)<\/D:href>/gi)].map((match) =>
    decodeURIComponent(match[1]!.replace(/\/$/, "")),
  );
  return hrefs.slice(1).map((href) => href.slice(href.lastIndexOf("/") + 1));
}

export async function davPut(url: string, path: string, body: Uint8Array | string) {
  const response = await fetch(`${url}${DAV_ROOT}${path}`, {
    method: "PUT",
    headers: { Authorization: DAV_AUTH },
    body,
  });
  if (!response.ok) throw new Error(`WebDAV PUT ${path}: HTTP ${response.status}`);
}

export async function davGet(url: string, path: string): Promise<Uint8Array> {
  const response = await fetch(`${url}${DAV_ROOT}${path}`, { headers: { Authorization: DAV_AUTH } });
  if (!response.ok) throw new Error(`WebDAV GET ${path}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

export async function davMkcol(url: string, path: string) {
  const response = await fetch(`${url}${DAV_ROOT}${path}`, { method: "MKCOL", headers: { Authorization: DAV_AUTH } });
  if (!response.ok) throw new Error(`WebDAV MKCOL ${path}: HTTP ${response.status}`);
}

/**
 * One file through /api/fs/multipart in `chunkSize` chunks, three in flight as the web UI sends
 * them; the milliseconds the chunks took and the whole upload took.
 */
async function chunkedUpload(api: ReturnType<typeof apiOf>, path: string, file: Uint8Array, chunkSize: number) {
  const started = performance.now();
  const opened = await api("/api/fs/multipart/init", undefined, {
    headers: {
      "File-Path": encodeURIComponent(path),
      "X-File-Size": String(file.length),
      "X-Chunk-Size": String(chunkSize),
    },
  });
  if (opened.code !== 200) throw new Error(`init ${path}: ${opened.message}`);
  const id = opened.data.upload_id as string;
  let next = 0;
  const sender = async () => {
    while (next < opened.data.total_chunks) {
      const index = next++;
      const sent = await api("/api/fs/multipart/chunk", undefined, {
        method: "PUT",
        headers: { "X-Upload-Id": id, "X-Chunk-Index": String(index) },
        body: file.subarray(index * chunkSize, Math.min(file.length, (index + 1) * chunkSize)),
      });
      if (sent.code !== 200) throw new Error(`chunk ${index} of ${path}: ${sent.message}`);
    }
  };
  await Promise.all([sender(), sender(), sender()]);
  const chunksMs = performance.now() - started;
  const done = await api("/api/fs/multipart/complete", undefined, { headers: { "X-Upload-Id": id } });
  if (done.code !== 200) throw new Error(`complete ${path}: ${done.message}`);
  return { chunksMs, totalMs: performance.now() - started };
}

/**
 * An S3 multipart upload of `file` made by this process, each part signed here, three in flight:
 * sent straight to s3rver, or through the bare worker's /forward (what the chunks cost with a
 * Worker that does nothing).
 */
async function handMadeMultipart(
  bucket: ReturnType<typeof bucketOf>,
  endpoint: string,
  key: string,
  file: Uint8Array,
  chunkSize: number,
  forwarder?: string,
) {
  const started = performance.now();
  const uploadId = await bucket.beginParts(key);
  const total = Math.ceil(file.length / chunkSize);
  const tags: string[] = [];
  let next = 0;
  const sender = async () => {
    while (next < total) {
      const index = next++;
      const target = `${endpoint}/${S3_BUCKET}/${key}?partNumber=${index + 1}&uploadId=${encodeURIComponent(uploadId)}`;
      const signed = await bucket.sign(target, "PUT");
      const response = await fetch(forwarder ? `${forwarder}/forward?to=${encodeURIComponent(target)}` : target, {
        method: "PUT",
        headers: signed,
        body: file.subarray(index * chunkSize, Math.min(file.length, (index + 1) * chunkSize)),
      });
      if (!response.ok) throw new Error(`part ${index + 1}: HTTP ${response.status}`);
      tags[index] = response.headers.get("etag") ?? "";
    }
  };
  await Promise.all([sender(), sender(), sender()]);
  const chunksMs = performance.now() - started;
  await bucket.completeParts(key, uploadId, tags);
  return { chunksMs, totalMs: performance.now() - started };
}

/** The size /api/fs/get shows for `path`. */
async function listedSize(api: ReturnType<typeof apiOf>, path: string): Promise<number> {
  const got = await api("/api/fs/get", { path });
  if (got.code !== 200) throw new Error(`get ${path}: ${got.message}`);
  return got.data.size as number;
}

/**
 * 300 MiB in 16 MiB chunks through /api/fs/multipart into s3rver and into webdav-server. Against
 * S3 it is set beside the same bytes PUT straight to s3rver (no Worker between) and PUT through
 * /api/fs/put (one request through the Worker, what the web UI sends below 100 MB), and the same
 * S3 multipart upload made by hand, sent straight to s3rver and with its parts sent through a bare
 * Worker that forwards them untouched (the ceiling of any Worker in the path).
 */
export async function benchChunkedUploads(
  base: string,
  token: string,
  inspector: Inspector,
  /** The bare worker's URL: its /forward sends a body on untouched. */
  forwarder: string,
): Promise<string[]> {
  const size = 300 * MIB;
  const chunkSize = 16 * MIB;
  const file = randomBytes(size);
  const digest = sha256(file);
  const api = apiOf(base, token);
  const lines: string[] = [];
  const s3 = await startS3();
  const dav = await startWebdav();
  try {
    const bucket = bucketOf(s3.endpoint);
    await mount(api, "/mp", "S3", s3Addition(s3.endpoint, "/multipart"));
    await davMkcol(dav.url, "/multipart");
    await mount(api, "/mpdav", "WebDav", davAddition(dav.url, `${DAV_ROOT}/multipart`));

    let started = performance.now();
    const straight = await bucket.put("multipart/straight.bin", file);
    if (!straight.ok) throw new Error(`straight PUT: HTTP ${straight.status}`);
    const straightMs = performance.now() - started;

    started = performance.now();
    const put = await api("/api/fs/put", undefined, {
      method: "PUT",
      headers: { "File-Path": encodeURIComponent("/mp/put.bin"), "Content-Type": "application/octet-stream" },
      body: file,
    });
    if (put.code !== 200) throw new Error(`/api/fs/put: ${put.message}`);
    const putMs = performance.now() - started;

    const direct = await handMadeMultipart(bucket, s3.endpoint, "multipart/direct.bin", file, chunkSize);
    const directExact = sha256(await bucket.bytes("multipart/direct.bin")) === digest;
    const forwarded = await handMadeMultipart(
      bucket,
      s3.endpoint,
      "multipart/forwarded.bin",
      file,
      chunkSize,
      forwarder,
    );
    const forwardedExact = sha256(await bucket.bytes("multipart/forwarded.bin")) === digest;

    let memory = memoryWatch(inspector);
    const toS3 = await chunkedUpload(api, "/mp/chunked.bin", file, chunkSize);
    const s3Memory = await memory.stop();
    const s3Exact = sha256(await bucket.bytes("multipart/chunked.bin")) === digest;
    const s3Listed = await listedSize(api, "/mp/chunked.bin");
    const pending = await bucket.pending();
    lines.push(
      `300 MiB in 16 MiB chunks (3 in flight) through /api/fs/multipart to s3rver: ${rate(size, toS3.totalMs)} in all (${seconds(toS3.totalMs)}): ` +
        `the chunks ${seconds(toS3.chunksMs)} (${rate(size, toS3.chunksMs)}), s3rver's CompleteMultipartUpload, which copies the parts into one file on its disk, ${seconds(toS3.totalMs - toS3.chunksMs)}. ` +
        `The same bytes: PUT straight to s3rver ${rate(size, straightMs)} (multipart ${((straightMs / toS3.totalMs) * 100).toFixed(0)}% of it, its chunks ${((straightMs / toS3.chunksMs) * 100).toFixed(0)}%); ` +
        `one PUT through /api/fs/put ${rate(size, putMs)} (multipart ${((putMs / toS3.totalMs) * 100).toFixed(0)}% of it, its chunks ${((putMs / toS3.chunksMs) * 100).toFixed(0)}%); ` +
        `the same S3 multipart upload sent straight to s3rver (16 MiB parts, 3 in flight, no Worker) ${rate(size, direct.totalMs)} in all, its parts ${rate(size, direct.chunksMs)}${directExact ? "" : " (MISMATCH)"} (multipart ${((direct.totalMs / toS3.totalMs) * 100).toFixed(0)}% of it, its chunks ${((direct.chunksMs / toS3.chunksMs) * 100).toFixed(0)}%); ` +
        `the same S3 multipart upload with its parts sent through a bare Worker that forwards them untouched ${rate(size, forwarded.totalMs)} in all, its parts ${rate(size, forwarded.chunksMs)}${forwardedExact ? "" : " (MISMATCH)"} (multipart ${((forwarded.totalMs / toS3.totalMs) * 100).toFixed(0)}% of it, its chunks ${((forwarded.chunksMs / toS3.chunksMs) * 100).toFixed(0)}%). ` +
        `${s3Exact ? "Byte-exact" : "MISMATCH"}, listed at ${s3Listed === size ? "its size" : `${s3Listed} bytes`}, ${pending} upload(s) left pending; ${s3Memory}.`,
    );

    memory = memoryWatch(inspector);
    const toDav = await chunkedUpload(api, "/mpdav/chunked.bin", file, chunkSize);
    const davMemory = await memory.stop();
    const landed = await davBytes(dav.url, "/multipart/chunked.bin");
    const davExact = landed !== null && sha256(landed) === digest;
    const davListed = await listedSize(api, "/mpdav/chunked.bin");
    const leftovers = (await davNames(dav.url, "/multipart")).filter((name) => name !== "chunked.bin");
    lines.push(
      `300 MiB in 16 MiB chunks through /api/fs/multipart to webdav-server: ${rate(size, toDav.totalMs)} in all (${seconds(toDav.totalMs)}): ` +
        `the chunks staged ${seconds(toDav.chunksMs)}, the joining upload ${seconds(toDav.totalMs - toDav.chunksMs)}. ` +
        `${davExact ? "Byte-exact" : "MISMATCH"}, listed at ${davListed === size ? "its size" : `${davListed} bytes`}, ${leftovers.length === 0 ? "no staging left" : `LEFT: ${leftovers.join(", ")}`}; ${davMemory}.`,
    );
  } finally {
    await Promise.all([s3.close(), dav.close()]);
  }
  return lines;
}

/** Polls a task until it ends; every progress it showed on the way. */
async function settle(api: ReturnType<typeof apiOf>, kind: string, id: string, onPoll?: () => Promise<void>) {
  const progress: number[] = [];
  for (;;) {
    const info = await api(`/api/task/${kind}/info?tid=${encodeURIComponent(id)}`);
    if (info.code !== 200) throw new Error(`task ${id}: ${info.message}`);
    progress.push(Math.round(info.data.progress));
    if (info.data.state === 2 || info.data.state === 4 || info.data.state === 7)
      return { task: info.data as { state: number; error: string }, progress };
    await onPoll?.();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** "0, 12, 47, 100": the distinct progress values a task page showed, in order. */
const shown = (progress: number[]) => progress.filter((value, i) => value !== progress[i - 1]).join(", ");

/**
 * The background tasks at scale: a tree of 1,500 small files and one 200 MiB file copied from
 * webdav-server to s3rver, then the same tree moved (its source watched: nothing removed before
 * every byte arrived); and a 300 MiB URL download into s3rver.
 */
export async function benchTasks(base: string, token: string, inspector: Inspector): Promise<string[]> {
  const FOLDERS = 15;
  const PER_FOLDER = 100;
  const bigSize = 200 * MIB;
  const big = randomBytes(bigSize);
  const api = apiOf(base, token);
  const lines: string[] = [];
  const s3 = await startS3();
  const dav = await startWebdav();
  const downloads = await startDownloads();
  try {
    const bucket = bucketOf(s3.endpoint);
    await mount(api, "/tsrc", "WebDav", davAddition(dav.url, DAV_ROOT));
    await mount(api, "/tdst", "S3", s3Addition(s3.endpoint, "/tasks"));
    const smallText = (folder: number, file: number) => `file ${file} of folder ${folder}\n`;
    await davMkcol(dav.url, "/tree");
    for (let folder = 0; folder < FOLDERS; folder++) {
      await davMkcol(dav.url, `/tree/d${folder}`);
      const puts: Promise<void>[] = [];
      for (let file = 0; file < PER_FOLDER; file++)
        puts.push(davPut(dav.url, `/tree/d${folder}/f${file}.txt`, smallText(folder, file)));
      await Promise.all(puts);
    }
    await davPut(dav.url, "/tree/big.bin", big);
    const files = FOLDERS * PER_FOLDER + 1;

    /** What the target holds of the tree under `prefix`: its count, and whether every byte is right. */
    const arrived = async (prefix: string) => {
      return (await bucket.files(`tasks/${prefix}/`)).length;
    };
    const exact = async (prefix: string) => {
      for (let folder = 0; folder < FOLDERS; folder++)
        for (let file = 0; file < PER_FOLDER; file++) {
          const text = new TextDecoder().decode(await bucket.bytes(`tasks/${prefix}/d${folder}/f${file}.txt`));
          if (text !== smallText(folder, file)) return false;
        }
      return sha256(await bucket.bytes(`tasks/${prefix}/big.bin`)) === sha256(big);
    };

    // The copy, into /tdst/copied.
    await api("/api/fs/mkdir", { path: "/tdst/copied" });
    let memory = memoryWatch(inspector);
    let started = performance.now();
    const copy = await api("/api/fs/copy", { src_dir: "/tsrc", dst_dir: "/tdst/copied", names: ["tree"] });
    const answeredMs = performance.now() - started;
    if (copy.code !== 200) throw new Error(`copy: ${copy.message}`);
    const copied = await settle(api, "copy", copy.data.tasks[0].id);
    const copyMs = performance.now() - started;
    const copyMemory = await memory.stop();
    if (copied.task.state !== 2) throw new Error(`copy ended ${copied.task.state}: ${copied.task.error}`);
    const copyCount = await arrived("copied/tree");
    lines.push(
      `Copy of a tree of ${files - 1} small files in ${FOLDERS} folders and one 200 MiB file, webdav-server to s3rver, as one task: ` +
        `answered in ${(answeredMs).toFixed(0)} ms, done in ${seconds(copyMs)}; the task page showed progress ${shown(copied.progress)}; ` +
        `${copyCount} of ${files} files arrived, ${(await exact("copied/tree")) ? "byte-exact" : "NOT byte-exact"}, ${await bucket.pending()} upload(s) pending; ${copyMemory}.`,
    );

    // The move, into /tdst/moved: the source is counted at every poll of the task.
    await api("/api/fs/mkdir", { path: "/tdst/moved" });
    const sourceCount = async () => {
      let count = (await davNames(dav.url, "/tree")).filter((name) => name === "big.bin").length;
      for (let folder = 0; folder < FOLDERS; folder++) count += (await davNames(dav.url, `/tree/d${folder}`)).length;
      return count;
    };
    let early = 0;
    let polls = 0;
    memory = memoryWatch(inspector);
    started = performance.now();
    const move = await api("/api/fs/move", { src_dir: "/tsrc", dst_dir: "/tdst/moved", names: ["tree"] });
    if (move.code !== 200) throw new Error(`move: ${move.message}`);
    const moved = await settle(api, "move", move.data.tasks[0].id, async () => {
      polls++;
      const left = await sourceCount();
      if (left < files && (await arrived("moved/tree")) < files) early++;
    });
    const moveMs = performance.now() - started;
    const moveMemory = await memory.stop();
    if (moved.task.state !== 2) throw new Error(`move ended ${moved.task.state}: ${moved.task.error}`);
    const sourceLeft = await sourceCount();
    lines.push(
      `The same tree moved: done in ${seconds(moveMs)}; progress ${shown(moved.progress)}; ${await arrived("moved/tree")} of ${files} files arrived, ` +
        `${(await exact("moved/tree")) ? "byte-exact" : "NOT byte-exact"}; at ${polls} polls the source was ${early === 0 ? "never" : `${early} times`} short before every file arrived, and ${sourceLeft} source files are left; ${moveMemory}.`,
    );

    // A 300 MiB URL download into /tdst/downloads.
    const downloadSize = 300 * MIB;
    memory = memoryWatch(inspector);
    started = performance.now();
    const download = await api("/api/fs/add_offline_download", {
      path: "/tdst/downloads",
      urls: [`${downloads.url}/bytes/${downloadSize}/big.bin`],
      tool: "SimpleHttp",
      delete_policy: "delete_on_upload_succeed",
    });
    if (download.code !== 200) throw new Error(`offline download: ${download.message}`);
    const fetched = await settle(api, "offline_download", download.data.tasks[0].id);
    const downloadMs = performance.now() - started;
    const downloadMemory = await memory.stop();
    if (fetched.task.state !== 2) throw new Error(`download ended ${fetched.task.state}: ${fetched.task.error}`);
    const stored = await bucket.bytes("tasks/downloads/big.bin");
    let wrong = stored.length === downloadSize ? -1 : stored.length;
    for (let i = 0; i < stored.length && wrong < 0; i++) if (stored[i] !== downloadByte(i)) wrong = i;
    lines.push(
      `300 MiB URL download (SimpleHttp) into s3rver: ${rate(downloadSize, downloadMs)} (${seconds(downloadMs)}); progress ${shown(fetched.progress)}; ` +
        `${wrong < 0 ? "byte-exact" : `WRONG from byte ${wrong}`}, ${await bucket.pending()} upload(s) pending; ${downloadMemory}.`,
    );
  } finally {
    await Promise.all([s3.close(), dav.close(), downloads.close()]);
  }
  return lines;
}

/** Reads a reply's body whole, timed; its SHA-256. */
async function timedDownload(reply: Response): Promise<{ ms: number; digest: string; status: number }> {
  const started = performance.now();
  const bytes = new Uint8Array(await reply.arrayBuffer());
  return { ms: performance.now() - started, digest: sha256(bytes), status: reply.status };
}

/**
 * The same bytes up and down through the S3 endpoint beside the file API (docs/decisions.md D22.18):
 * PUT by /api/fs/put and by PutObject (unsigned, and with a signed SHA-256 the Worker checks as it
 * streams), GET by /d (the storage proxied through the Worker) and by GetObject, into s3rver.
 * The S3 requests are signed by aws4fetch with an access key made through the API.
 */
export async function benchS3Transfers(base: string, token: string): Promise<string[]> {
  const size = 64 * MIB;
  const file = randomBytes(size);
  const digest = sha256(file);
  const api = apiOf(base, token);
  const s3 = await startS3();
  try {
    const created = await api("/api/admin/storage/create", {
      mount_path: "/s3xfer",
      driver: "S3",
      web_proxy: true,
      addition: JSON.stringify(s3Addition(s3.endpoint, "/s3xfer")),
    });
    if (created.code !== 200) throw new Error(`S3 storage: ${created.message}`);
    const key = await api("/api/me/access_key/create", {
      name: "bench s3",
      path: "/",
      permission: 1 | 2 | 8 | 16 | 32 | 64 | 128 | 256 | 512,
      usage: ["s3"],
    });
    if (key.code !== 200) throw new Error(`access key: ${key.message}`);
    const client = new AwsClient({
      accessKeyId: key.data.access_key_id,
      secretAccessKey: key.data.secret_access_key,
      service: "s3",
      region: "us-east-1",
      retries: 0,
    });
    const timed = async (send: () => Promise<Response>) => {
      const started = performance.now();
      const reply = await send();
      await reply.arrayBuffer();
      if (!reply.ok) throw new Error(`HTTP ${reply.status}`);
      return performance.now() - started;
    };
    const putMs = await timed(() =>
      fetch(`${base}/api/fs/put`, {
        method: "PUT",
        headers: { Authorization: token, "File-Path": "/s3xfer/put.bin", "Content-Type": "application/octet-stream" },
        body: file,
      }),
    );
    const unsignedMs = await timed(async () =>
      fetch(
        await client.sign(`${base}/s3/s3xfer/unsigned.bin`, {
          method: "PUT",
          body: file,
          headers: { "X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD" },
        }),
      ),
    );
    // aws4fetch hashes the body to sign it: that time is the client's, not the endpoint's.
    const signedRequest = await client.sign(`${base}/s3/s3xfer/signed.bin`, { method: "PUT", body: file });
    const signedMs = await timed(() => fetch(signedRequest));
    const got = await api("/api/fs/get", { path: "/s3xfer/put.bin" });
    if (got.code !== 200) throw new Error(`fs/get: ${got.message}`);
    const viaD = await timedDownload(await fetch(got.data.raw_url as string));
    const viaS3 = await timedDownload(await fetch(await client.sign(`${base}/s3/s3xfer/put.bin`)));
    const stored = await timedDownload(await fetch(await client.sign(`${base}/s3/s3xfer/signed.bin`)));
    const exact = (result: { digest: string; status: number }) =>
      result.status === 200 && result.digest === digest ? "byte-exact" : `MISMATCH (HTTP ${result.status})`;
    return [
      `64 MiB into s3rver, PUT: /api/fs/put ${rate(size, putMs)}; /s3 PutObject (UNSIGNED-PAYLOAD) ${rate(size, unsignedMs)} ` +
        `(${((putMs / unsignedMs) * 100).toFixed(0)}% of fs/put's time); /s3 PutObject with a signed SHA-256, checked as it streams, ${rate(size, signedMs)} (${exact(stored)}).`,
      `64 MiB from s3rver, GET: /d (proxied) ${rate(size, viaD.ms)} (${exact(viaD)}); /s3 GetObject ${rate(size, viaS3.ms)} (${exact(viaS3)}).`,
    ];
  } finally {
    await s3.close();
  }
}
