// What uploads and rules .workerd.test.ts share: chunked uploads driven as the web UI drives them
// (init, chunk, status, complete, abort, each answered with an envelope), files of known bytes and
// their hashes, and the clean slate each test starts from (no storages, no upload sessions).
import { exports } from "cloudflare:workers";
import { sql } from "../../../test/support/libsql-http.ts";
import { s3Object } from "../../../test/support/upstreams.ts";
import type { Envelope } from "../../../test/support/workerd-client.ts";

export const MIB = 1024 * 1024;

/** A file of `size` bytes whose every 4 bytes differ from their neighbours'. */
export function fileOf(size: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  let x = seed;
  for (let i = 0; i + 4 <= size; i += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    view.setUint32(i, x);
  }
  return bytes;
}

/** Three chunks of 5 MiB and a tail. */
export const FILE = fileOf(15 * MIB + 123_457);

export const sha = async (bytes: ArrayBuffer | Uint8Array) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

export async function request(
  token: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: BodyInit,
) {
  const response = await exports.default.fetch(
    new Request(`http://gatehouse.test${path}`, { method, headers: { Authorization: token, ...headers }, body }),
  );
  return (await response.json()) as Envelope;
}

export const init = (token: string, path: string, size: number, headers: Record<string, string> = {}) =>
  request(token, "POST", "/api/fs/multipart/init", {
    "File-Path": encodeURIComponent(path),
    "X-File-Size": String(size),
    "X-Chunk-Size": String(5 * MIB),
    ...headers,
  });

export function sendChunk(token: string, id: string, index: number, bytes: Uint8Array) {
  return request(
    token,
    "PUT",
    "/api/fs/multipart/chunk",
    { "X-Upload-Id": id, "X-Chunk-Index": String(index), "Content-Type": "application/octet-stream" },
    bytes,
  );
}

export const slice = (file: Uint8Array, chunkSize: number, index: number) =>
  file.subarray(index * chunkSize, Math.min(file.length, (index + 1) * chunkSize));

export const status = (token: string, id: string) =>
  request(token, "GET", `/api/fs/multipart/status?upload_id=${id}`, {});
export const complete = (token: string, id: string) =>
  request(token, "POST", "/api/fs/multipart/complete", { "X-Upload-Id": id });
export const abort = (token: string, id: string) =>
  request(token, "POST", "/api/fs/multipart/abort", { "X-Upload-Id": id });

/** An object's bytes on s3rver; null when it is not there. */
export async function s3Bytes(key: string): Promise<ArrayBuffer | null> {
  const response = await s3Object(key);
  return response.status === 404 ? null : response.arrayBuffer();
}

/** Before each test: no storage mounted, no upload session left by another test or file. */
export async function clearUploads(): Promise<void> {
  await sql("DELETE FROM storages");
  await sql("DELETE FROM upload_sessions");
}
