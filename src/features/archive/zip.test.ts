// The ZIP reader against archives made by Python's zipfile: the directory reads as zipfile (and
// `unzip -l`) read it, entries come out byte-exact, whole or as a range, and what must be refused
// is refused. The archive is read through the same range interface the storages give, counting reads.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bytesOf, zipFixtures } from "../../../test/support/zip-fixtures.ts";
import { archiveTree, nodeAt, requireNoBomb, requireSafeNames } from "./rules.ts";
import { type ByteReader, MAX_ARCHIVE_ENTRIES, openEntry, readZipDirectory } from "./zip.ts";

const fixtures = zipFixtures();

function memoryReader(bytes: Uint8Array) {
  const reads: [number, number][] = [];
  const reader: ByteReader = {
    size: bytes.length,
    read: async (start, length) => {
      reads.push([start, length]);
      return bytes.slice(start, start + length);
    },
    stream: async (start, length) => {
      reads.push([start, length]);
      return new Response(bytes.slice(start, start + length)).body!;
    },
  };
  return { reader, reads };
}

const readerOf = (name: string) => memoryReader(bytesOf(fixtures[name]!.base64));
const text = async (stream: ReadableStream<Uint8Array>) => Buffer.from(await new Response(stream).arrayBuffer());
/** Buffers compared whole: vitest's deep equality walks big arrays byte by byte. */
const expectSame = (got: Buffer, expected: Uint8Array, what: string) =>
  expect(got.equals(Buffer.from(expected)), `${what}: ${got.length} bytes vs ${expected.length}`).toBe(true);

describe("the central directory", () => {
  it.each(["tree.zip", "cp437.zip", "zip64.zip", "secret.zip"])(
    "%s lists as Python's zipfile reads it",
    async (name) => {
      const { reader } = readerOf(name);
      const directory = await readZipDirectory(reader);
      const oracle = fixtures[name]!.oracle;
      expect(directory.comment).toBe(oracle.comment);
      expect(directory.entries.map((e) => ({ name: e.name, size: e.size, dir: e.isDir }))).toEqual(
        oracle.entries.map(({ name, size, dir }) => ({ name, size, dir })),
      );
    },
  );

  it("lists tree.zip and zip64.zip as `unzip -l` does (names and sizes)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "zips-"));
    for (const name of ["tree.zip", "zip64.zip"]) {
      const path = join(dir, name);
      writeFileSync(path, bytesOf(fixtures[name]!.base64));
      const lines = execFileSync("unzip", ["-l", path], {
        encoding: "utf8",
        env: { ...process.env, LC_ALL: "C.UTF-8" },
      })
        .split("\n")
        .map((line) => /^\s*(\d+)\s+\S+\s+\S+\s+(.+)$/.exec(line))
        .filter((match) => match !== null)
        .map((match) => ({ size: Number(match[1]), name: match[2] }));
      const directory = await readZipDirectory(readerOf(name).reader);
      expect(directory.entries.map((e) => ({ size: e.size, name: e.name }))).toEqual(lines);
    }
  });

  it("reads a small archive's directory with one read of its tail; ZIP64 structures are really there", async () => {
    const { reader, reads } = readerOf("tree.zip");
    await readZipDirectory(reader);
    expect(reads).toEqual([[reader.size - 65557, 65557]]);
    const zip64 = Buffer.from(bytesOf(fixtures["zip64.zip"]!.base64));
    expect(zip64.includes(Buffer.from([0x50, 0x4b, 6, 6]))).toBe(true);
    expect(zip64.includes(Buffer.from([0x50, 0x4b, 6, 7]))).toBe(true);
  });

  it("refuses what is not a zip, clearly", async () => {
    await expect(
      readZipDirectory(memoryReader(new TextEncoder().encode("just text, no zip at all")).reader),
    ).rejects.toThrow("zip: not a valid zip file");
  });
});

describe("entries", () => {
  it.each(["tree.zip", "cp437.zip", "zip64.zip"])("%s: every file comes out byte-exact", async (name) => {
    const { reader } = readerOf(name);
    const directory = await readZipDirectory(reader);
    for (const [i, entry] of directory.entries.entries()) {
      if (entry.isDir) continue;
      const expected = bytesOf(fixtures[name]!.oracle.entries[i]!.content!);
      expectSame(await text(await openEntry(reader, entry, "")), expected, entry.name);
    }
  });

  it("serves ranges of a deflated and a stored entry byte-exact; a stored range reads only its bytes", async () => {
    const { reader, reads } = readerOf("tree.zip");
    const directory = await readZipDirectory(reader);
    const oracle = fixtures["tree.zip"]!.oracle.entries;
    for (const name of ["data/random.bin", "docs/stored.bin", "docs/guide.txt"]) {
      const i = directory.entries.findIndex((e) => e.name === name);
      const whole = bytesOf(oracle[i]!.content!);
      for (const [start, length] of [
        [0, 10],
        [1234, 2000],
        [whole.length - 7, 7],
      ] as const) {
        reads.length = 0;
        const got = await text(await openEntry(reader, directory.entries[i]!, "", start, length));
        expectSame(got, whole.slice(start, start + length), `${name} ${start}+${length}`);
        if (name === "docs/stored.bin") expect(reads.at(-1)![1]).toBe(length);
      }
    }
  });

  it("opens ZipCrypto entries with the password; a wrong or missing one is refused before any byte", async () => {
    const { reader } = readerOf("secret.zip");
    const directory = await readZipDirectory(reader);
    expect(directory.entries.every((e) => e.encrypted)).toBe(true);
    for (const [i, entry] of directory.entries.entries()) {
      const expected = bytesOf(fixtures["secret.zip"]!.oracle.entries[i]!.content!);
      expectSame(await text(await openEntry(reader, entry, "open sesame")), expected, entry.name);
      expectSame(
        await text(await openEntry(reader, entry, "open sesame", 100, 50)),
        expected.slice(100, 150),
        entry.name,
      );
    }
    await expect(openEntry(reader, directory.entries[0]!, "wrong")).rejects.toThrow("wrong archive password");
    await expect(openEntry(reader, directory.entries[0]!, "")).rejects.toThrow(
      /^wrong archive password: this entry is encrypted/,
    );
  });

  it("refuses AES entries clearly", async () => {
    const { reader } = readerOf("aes.zip");
    const [entry] = (await readZipDirectory(reader)).entries;
    await expect(openEntry(reader, entry!, "pw")).rejects.toThrow(/AES-encrypted.*only ZipCrypto/);
  });

  it("a lying entry never gives more than its declared size, and fails there", async () => {
    const { reader } = readerOf("liar.zip");
    const [entry] = (await readZipDirectory(reader)).entries;
    expect(entry!.size).toBe(10);
    const received: number[] = [];
    const stream = await openEntry(reader, entry!, "");
    const failure = await (async () => {
      try {
        for await (const chunk of stream) received.push(chunk.length);
      } catch (error) {
        return error as Error;
      }
    })();
    expect(received.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10);
    expect(failure?.message).toBe(
      "the entry holds more than the 10 bytes the archive's directory declares: cut off there",
    );
  });
});

describe("the archive's rules", () => {
  it.each([
    ["evil.zip", "../escape.txt"],
    ["backslash.zip", "a\\..\\..\\escape.txt"],
  ])("%s is refused whole, naming the entry", async (name, entry) => {
    const directory = await readZipDirectory(readerOf(name).reader);
    expect(() => requireSafeNames(directory.entries)).toThrow(
      `the archive holds an entry whose name leaves its folder (${JSON.stringify(entry)}): the archive is refused`,
    );
  });

  it("refuses a bomb by its declared sizes, without inflating it", async () => {
    const [entry] = (await readZipDirectory(readerOf("bomb.zip").reader)).entries;
    expect(() => requireNoBomb(entry!)).toThrow(/^the entry "zeros.bin" expands to 20971520 bytes, over 100 times/);
  });

  it("refuses an overlap bomb: entries that share one local header, or quote the next one", async () => {
    await expect(readZipDirectory(readerOf("overlap.zip").reader)).rejects.toThrow(
      'the entries "000.bin" and "001.bin" share their data in the archive: refused as a zip bomb',
    );
    await expect(readZipDirectory(readerOf("quoted.zip").reader)).rejects.toThrow(
      'the entries "q00.txt" and "q01.txt" share their data in the archive: refused as a zip bomb',
    );
  });

  it("refuses an archive of more than 10,000 entries before reading its directory; 10,000 are listed", async () => {
    expect(MAX_ARCHIVE_ENTRIES).toBe(10_000);
    const { reader, reads } = readerOf("many.zip");
    await expect(readZipDirectory(reader)).rejects.toThrow(
      "zip: the archive holds more than 10000 files and folders: too many to list or open here",
    );
    expect(reads).toEqual([[reader.size - 65557, 65557]]);
    const directory = await readZipDirectory(readerOf("tenthousand.zip").reader);
    expect(archiveTree(directory.entries, new Date(0)).children).toHaveLength(10_000);
  });

  it("refuses a directory over 4 MiB before reading it", async () => {
    const end = new Uint8Array(22);
    const eocd = new DataView(end.buffer);
    eocd.setUint32(0, 0x06054b50, true);
    eocd.setUint16(8, 10, true);
    eocd.setUint16(10, 10, true);
    eocd.setUint32(12, 4 * 1024 * 1024 + 1, true);
    const { reader, reads } = memoryReader(end);
    await expect(readZipDirectory(reader)).rejects.toThrow(
      "zip: the archive's directory is over 4 MiB: too many entries or too long names to open here",
    );
    expect(reads).toHaveLength(1);
  });

  it("refuses a tree of more than 10,000 files and folders, implied folders counted", async () => {
    const directory = await readZipDirectory(readerOf("deep.zip").reader);
    expect(directory.entries).toHaveLength(1);
    expect(() => archiveTree(directory.entries, new Date(0))).toThrow(
      "zip: the archive holds more than 10000 files and folders: too many to list or open here",
    );
  });

  it("builds the tree with implicit folders; a missing inner path is object not found", async () => {
    const directory = await readZipDirectory(readerOf("tree.zip").reader);
    const root = archiveTree(directory.entries, new Date(0));
    expect(root.children.map((c) => c.name)).toEqual(["readme.txt", "docs", "deep", "données", "data"]);
    expect(nodeAt(root, "/deep/er").children.map((c) => c.name)).toEqual(["still"]);
    expect(nodeAt(root, "deep/er/still/leaf.txt").size).toBe(5);
    expect(() => nodeAt(root, "/nope")).toThrow("object not found");
  });
});
