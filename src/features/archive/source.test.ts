// Range reads of an archive through a storage's link: a server that answers the Range (206), one
// that ignores it (200, read through to the start), a byte source (FTP's kind), and a failure
// worded without the server's address.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesOf, zipFixtures } from "../../../test/support/zip-fixtures.ts";
import { readerOf } from "./source.ts";
import { openEntry, readZipDirectory } from "./zip.ts";

const archive = bytesOf(zipFixtures()["tree.zip"]!.base64);
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? "");
    if (request.url === "/ranged" && range) {
      const [start, end] = [Number(range[1]), Number(range[2])];
      response.writeHead(206, { "Content-Range": `bytes ${start}-${end}/${archive.length}` });
      response.end(archive.subarray(start, end + 1));
    } else if (request.url === "/flaky" && range) {
      // Every reply gives at most 1,000 bytes, then the connection drops.
      const [start, end] = [Number(range[1]), Number(range[2])];
      response.writeHead(206, {
        "Content-Range": `bytes ${start}-${end}/${archive.length}`,
        "Content-Length": String(end - start + 1),
      });
      response.write(archive.subarray(start, Math.min(end + 1, start + 1000)), () => request.socket.destroy());
    } else if (request.url === "/dead" && range) {
      response.writeHead(206, { "Content-Length": "10" });
      response.flushHeaders();
      setTimeout(() => request.socket.destroy(), 5);
    } else if (request.url === "/whole") response.end(archive);
    else response.writeHead(403).end("no");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const readme = async (reader: ReturnType<typeof readerOf>) => {
  const directory = await readZipDirectory(reader);
  const entry = directory.entries.find((e) => e.name === "readme.txt")!;
  return new Response(await openEntry(reader, entry, "")).text();
};

describe("range reads", () => {
  it.each(["/ranged", "/whole"])("reads the archive from a server at %s", async (path) => {
    expect(await readme(readerOf({ url: `${base}${path}` }, "tree.zip", archive.length))).toBe(
      "hello from inside the zip\n",
    );
  });

  it("reads through a byte source", async () => {
    const source = {
      size: archive.length,
      modified: new Date(0),
      read: async (start: number, end: number) => new Response(archive.slice(start, end + 1)).body!,
    };
    expect(await readme(readerOf({ source }, "tree.zip", archive.length))).toBe("hello from inside the zip\n");
  });

  it("takes a read that broke off up again where it stopped, up to 8 times; then fails as the storage's failure", async () => {
    const flaky = readerOf({ url: `${base}/flaky` }, "tree.zip", archive.length);
    const part = await flaky.read(100, 5000);
    expect(Buffer.from(part).equals(Buffer.from(archive.subarray(100, 5100)))).toBe(true);
    await expect(flaky.read(0, 10_000)).rejects.toThrow(
      expect.objectContaining({
        kind: "upstream",
        message: "the storage broke off a read of tree.zip at byte 9000 of 10000",
      }),
    );
    const dead = readerOf({ url: `${base}/dead` }, "tree.zip", archive.length).read(0, 10);
    await expect(dead).rejects.toThrow(
      expect.objectContaining({
        kind: "upstream",
        message: "the storage broke off a read of tree.zip at byte 0 of 10",
      }),
    );
  });

  it("words a refusal by its status alone, never the address", async () => {
    const failed = readerOf({ url: `${base}/nope?secret=1` }, "tree.zip", archive.length).read(0, 10);
    await expect(failed).rejects.toThrow("the storage answered HTTP 403 to a read of tree.zip");
    const unreachable = readerOf({ url: "http://127.0.0.1:1/x" }, "tree.zip", archive.length).read(0, 10);
    await expect(unreachable).rejects.toThrow("the storage could not be reached to read tree.zip");
  });
});
