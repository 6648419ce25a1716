// The refusals an extraction makes before its first write, over archives made by Python's zipfile
// (test/fixtures/make-zips.py) read from memory, and the rule a whole read holds entries to: each a
// decision of docs/decisions.md D13.4-D13.5 that a test must fail without. What decompress leaves in
// a real storage is archive-guards.workerd.test.ts's.
import { describe, expect, it } from "vitest";
import { bytesOf, zipFixtures } from "../../../test/support/zip-fixtures.ts";
import { planSteps } from "./extract.ts";
import { MAX_EXTRACT_BYTES, MAX_EXTRACT_ENTRIES, requireSafeNames, requireWithinCaps } from "./rules.ts";
import { type ByteReader, openEntry, readZipDirectory, type ZipEntry } from "./zip.ts";

const fixtures = zipFixtures();

function readerOf(name: string): ByteReader {
  const bytes = bytesOf(fixtures[name]!.base64);
  return {
    size: bytes.length,
    read: async (start, length) => bytes.slice(start, start + length),
    stream: async (start, length) => new Response(bytes.slice(start, start + length)).body!,
  };
}
const entriesOf = async (name: string) => (await readZipDirectory(readerOf(name))).entries;
const job = (innerPath = "/") => ({
  archive: "/s/a.zip",
  innerPath,
  destDir: "/s/out",
  password: "",
  intoNewFolder: false,
});
const template = (await entriesOf("tree.zip")).find((entry) => !entry.isDir)!;

describe("an archive with an absolute entry name is refused whole", () => {
  it.each([
    ["absolute.zip", "/abs.txt"],
    ["drive.zip", "C:/x.txt"],
  ])("%s (%s): refused by its names, even when only its harmless entry is asked for", async (name, entry) => {
    const entries = await entriesOf(name);
    expect(entries.map((e) => e.name)).toEqual(["fine.txt", entry]);
    const refusal = `the archive holds an entry whose name leaves its folder (${JSON.stringify(entry)}): the archive is refused`;
    expect(() => requireSafeNames(entries)).toThrow(refusal);
    expect(() => planSteps(entries, new Date(0), job())).toThrow(refusal);
    expect(() => planSteps(entries, new Date(0), job("/fine.txt"))).toThrow(refusal);
  });
});

describe("one decompress never writes more than its declared cap", () => {
  /** `count` entries of tree.zip's first file, named `<prefix>-<i>`, each declaring `size` bytes at a ratio no bomb check refuses. */
  const declaring = (prefix: string, count: number, size: number): ZipEntry[] =>
    Array.from({ length: count }, (_, i) => ({
      ...template,
      name: `${prefix}-${i}.bin`,
      size,
      compressedSize: Math.ceil(size / 50),
    }));

  it(`an archive declaring over ${MAX_EXTRACT_BYTES} bytes is refused when planned, before any write; the cap itself passes`, () => {
    const tooLarge = `extracting this would write more than ${MAX_EXTRACT_BYTES} bytes: over the limit of one request`;
    const atTheCap = declaring("big", 2, MAX_EXTRACT_BYTES / 2);
    expect(() => planSteps([...atTheCap, ...declaring("one", 1, 1)], new Date(0), job())).toThrow(tooLarge);
    expect(planSteps(atTheCap, new Date(0), job()).bytes).toBe(MAX_EXTRACT_BYTES);
  });

  it(`the archives of one request count together: two of ${MAX_EXTRACT_BYTES / 2 + 1} bytes are refused`, () => {
    const half = planSteps(declaring("half", 1, MAX_EXTRACT_BYTES / 2 + 1), new Date(0), job());
    expect(() => requireWithinCaps([half])).not.toThrow();
    expect(() => requireWithinCaps([half, half])).toThrow(/^extracting this would write more than \d+ bytes/);
  });

  it(`over ${MAX_EXTRACT_ENTRIES} files and folders is refused when planned`, () => {
    const tooMany = `extracting this would write more than ${MAX_EXTRACT_ENTRIES} files and folders: over the limit of one request`;
    expect(() => planSteps(declaring("file", MAX_EXTRACT_ENTRIES + 1, 1), new Date(0), job())).toThrow(tooMany);
    expect(planSteps(declaring("file", MAX_EXTRACT_ENTRIES, 1), new Date(0), job()).steps).toHaveLength(
      MAX_EXTRACT_ENTRIES,
    );
    const half = planSteps(declaring("file", MAX_EXTRACT_ENTRIES / 2 + 1, 1), new Date(0), job());
    expect(() => requireWithinCaps([half, half])).toThrow(tooMany);
  });
});

describe("an entry whose bytes do not match its CRC-32", () => {
  it("is refused when read whole, after its declared size, so its last bytes are never given", async () => {
    const reader = readerOf("badcrc.zip");
    const [entry] = (await readZipDirectory(reader)).entries;
    expect(fixtures["badcrc.zip"]!.oracle.entries[0]!.error).toMatch(/Bad CRC-32/);
    const received: number[] = [];
    const failure = await (async () => {
      try {
        for await (const chunk of await openEntry(reader, entry!, "")) received.push(chunk.length);
      } catch (error) {
        return error as Error;
      }
    })();
    expect(failure?.message).toBe("the entry's checksum does not match: the archive is damaged");
    expect(received.reduce((a, b) => a + b, 0)).toBeLessThan(entry!.size);
  });

  it("is served in part: a range knows no CRC", async () => {
    const reader = readerOf("badcrc.zip");
    const [entry] = (await readZipDirectory(reader)).entries;
    const range = await new Response(await openEntry(reader, entry!, "", 0, 7)).text();
    expect(range).toBe("checked");
  });
});
