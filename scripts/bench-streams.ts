// The streaming rows of npm run bench (scripts/bench.ts): 1 GiB through /p from a Virtual storage,
// and 1 GiB up to s3rver through PUT /api/fs/put and back, with workerd's resident memory beside.
import { storages } from "../src/db/schema.ts";
import {
  S3_ACCESS_KEY_ID,
  S3_BUCKET,
  S3_SECRET_ACCESS_KEY,
  s3TestClient,
  startS3,
} from "../test/support/storage-servers.ts";
import { workerdRss } from "./bench-transfers.ts";
import { type DatabaseTarget, openNodeDatabase } from "./db.ts";

/**
 * 1 GiB through /p from a Virtual storage: throughput, and the resident memory of the workerd
 * processes sampled while it streams (flat memory: the body is never held).
 */
export async function streamBigFile(base: string, token: string, target: DatabaseTarget) {
  const size = 1024 ** 3;
  const { db, close } = openNodeDatabase(target);
  try {
    await db.insert(storages).values({
      mountPath: "/big",
      driver: "Virtual",
      status: "work",
      addition: JSON.stringify({ num_file: 1, num_folder: 0, min_file_size: size, max_file_size: size }),
      modifiedAtMs: Date.now(),
    });
  } finally {
    close();
  }
  const listed = (await (
    await fetch(`${base}/api/fs/list`, {
      method: "POST",
      headers: { Authorization: token, "Content-Type": "application/json" },
      body: JSON.stringify({ path: "/big" }),
    })
  ).json()) as { data: { content: { name: string; sign: string }[] } };
  const file = listed.data.content[0]!;
  const rss = workerdRss;
  const before = rss();
  let peak = before;
  const started = performance.now();
  const response = await fetch(`${base}/p/big/${file.name}?sign=${file.sign}`);
  let bytes = 0;
  const reader = response.body!.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    bytes += next.value.byteLength;
    if ((bytes & 0x3ffffff) < next.value.byteLength) peak = Math.max(peak, rss());
  }
  const seconds = (performance.now() - started) / 1000;
  const mib = (n: number) => (n / 1024 / 1024).toFixed(0);
  console.log(
    `\n1 GiB through /p (Virtual): ${bytes === size ? "complete" : `INCOMPLETE (${bytes} bytes)`}, ${(bytes / 1024 / 1024 / seconds).toFixed(0)} MiB/s; workerd resident memory ${mib(before)} MiB before, at most ${mib(peak)} MiB while streaming.`,
  );
}

/**
 * 1 GiB to a real S3 (s3rver, as the tests use) through PUT /api/fs/put, then back: straight from
 * s3rver, and through /p (the storage has web_proxy on). Throughput of each, and workerd's memory.
 */
export async function s3RoundTrip(base: string, token: string) {
  const size = 1024 ** 3;
  const s3 = await startS3();
  try {
    const created = (await (
      await fetch(`${base}/api/admin/storage/create`, {
        method: "POST",
        headers: { Authorization: token, "Content-Type": "application/json" },
        body: JSON.stringify({
          mount_path: "/s3",
          driver: "S3",
          web_proxy: true,
          addition: JSON.stringify({
            endpoint: s3.endpoint,
            bucket: S3_BUCKET,
            access_key_id: S3_ACCESS_KEY_ID,
            secret_access_key: S3_SECRET_ACCESS_KEY,
            root_folder_path: "/bench",
          }),
        }),
      })
    ).json()) as { code: number; message: string };
    if (created.code !== 200) throw new Error(`S3 storage: ${created.message}`);
    const mib = (bytes: number, ms: number) => (bytes / 1024 / 1024 / (ms / 1000)).toFixed(0);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= size) return controller.close();
        const chunk = new Uint8Array(Math.min(1024 * 1024, size - sent)).fill(sent & 0xff);
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const before = workerdRss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, workerdRss())), 200);
    let started = performance.now();
    const put = (await (
      await fetch(`${base}/api/fs/put`, {
        method: "PUT",
        headers: { Authorization: token, "File-Path": "/s3/big.bin", "Content-Length": String(size) },
        body,
        duplex: "half",
      } as RequestInit)
    ).json()) as { code: number; message: string };
    const putMs = performance.now() - started;
    clearInterval(sampler);
    if (put.code !== 200) throw new Error(`upload: ${put.message}`);

    const drain = async (response: Response) => {
      let bytes = 0;
      const reader = response.body!.getReader();
      for (let next = await reader.read(); !next.done; next = await reader.read()) bytes += next.value.byteLength;
      return bytes;
    };
    const client = s3TestClient();
    started = performance.now();
    const direct = await drain(await client.fetch(`${s3.endpoint}/${S3_BUCKET}/bench/big.bin`));
    const directMs = performance.now() - started;
    const signed = (await (
      await fetch(`${base}/api/fs/get`, {
        method: "POST",
        headers: { Authorization: token, "Content-Type": "application/json" },
        body: JSON.stringify({ path: "/s3/big.bin" }),
      })
    ).json()) as { data: { sign: string } };
    started = performance.now();
    const proxied = await drain(await fetch(`${base}/p/s3/big.bin?sign=${signed.data.sign}`));
    const proxiedMs = performance.now() - started;
    console.log(
      `1 GiB up through PUT /api/fs/put to s3rver: ${mib(size, putMs)} MiB/s; workerd resident memory ${(before / 2 ** 20).toFixed(0)} MiB before, at most ${(peak / 2 ** 20).toFixed(0)} MiB while uploading.\n` +
        `1 GiB down: straight from s3rver ${mib(direct, directMs)} MiB/s, through /p ${mib(proxied, proxiedMs)} MiB/s (${((directMs / proxiedMs) * 100).toFixed(0)}% of direct; target at least 80%)${direct === size && proxied === size ? "" : " INCOMPLETE"}.`,
    );
  } finally {
    await s3.close();
  }
}
