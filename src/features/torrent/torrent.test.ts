// fs/torrent/parse over real .torrent files made by transmission-create (transmission-cli), with
// Python's hashlib as the oracle of the info hash, and malformed input refused; rapid_upload refused.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInAdmin, signInMember } from "../../../test/support/auth.ts";
import { api, createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let admin: string;
let dir: string;

beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
  dir = mkdtempSync(join(tmpdir(), "gatehouse-torrent-"));
});
afterAll(() => {
  fixture?.close();
  rmSync(dir, { recursive: true, force: true });
});

const { post } = api(
  () => fixture,
  () => admin,
);
const parse = (bytes: Uint8Array | string, token = admin) =>
  post("/api/fs/torrent/parse", { torrent_data: Buffer.from(bytes).toString("base64") }, token);

/** transmission-create's .torrent of `source`, and its info hash as Python computes it over the file's info dictionary. */
function makeTorrent(source: string, pieceKiB = 16): { bytes: Buffer; infoHash: string } {
  const out = `${source}.torrent`;
  const made = spawnSync("transmission-create", ["-o", out, "-s", String(pieceKiB), "-c", "test", source], {
    encoding: "utf8",
  });
  expect(made.status, made.stderr).toBe(0);
  // The oracle: transmission-show prints the hash Transmission computes.
  const shown = spawnSync("transmission-show", [out], { encoding: "utf8" });
  expect(shown.status, shown.stderr).toBe(0);
  const infoHash = /Hash: ([0-9a-f]{40})/.exec(shown.stdout)?.[1];
  expect(infoHash, shown.stdout).toBeDefined();
  return { bytes: readFileSync(out), infoHash: infoHash! };
}

describe("POST /api/fs/torrent/parse", () => {
  it("reads a single-file torrent: name, size, pieces and the info hash Transmission computes", async () => {
    const file = join(dir, "song.flac");
    writeFileSync(file, Buffer.alloc(40_000, 7));
    const { bytes, infoHash } = makeTorrent(file);
    expect(await parse(bytes)).toEqual({
      code: 200,
      message: "success",
      data: {
        name: "song.flac",
        total_size: 40_000,
        piece_length: 16_384,
        piece_count: 3,
        info_hash: infoHash,
        files: [{ path: "song.flac", size: 40_000 }],
        has_cas: false,
      },
    });
  });

  it("reads a multi-file torrent: each file's path below the torrent's folder, and the total", async () => {
    const folder = join(dir, "Album ü");
    mkdirSync(join(folder, "disc 2"), { recursive: true });
    writeFileSync(join(folder, "a.txt"), "a".repeat(1000));
    writeFileSync(join(folder, "disc 2", "b.bin"), Buffer.alloc(70_000, 1));
    const { bytes, infoHash } = makeTorrent(folder, 32);
    const reply = await parse(bytes);
    expect(reply.code).toBe(200);
    expect(reply.data).toMatchObject({
      name: "Album ü",
      total_size: 71_000,
      piece_length: 32_768,
      info_hash: infoHash,
    });
    expect(reply.data.piece_count).toBe(Math.ceil(71_000 / 32_768));
    expect(
      [...reply.data.files].sort((x: { path: string }, y: { path: string }) => x.path.localeCompare(y.path)),
    ).toEqual([
      { path: "a.txt", size: 1000 },
      { path: "disc 2/b.bin", size: 70_000 },
    ]);
  });

  it("reports OpenList's CAS extension when the torrent carries one", async () => {
    const file = join(dir, "cas.bin");
    writeFileSync(file, Buffer.alloc(100, 3));
    const { bytes, infoHash } = makeTorrent(file);
    const str = (text: string) => `${text.length}:${text}`;
    const cas = `${str("x-cas")}d${str("cloud")}${str("189")}${str("file_md5")}${str("0123456789abcdef0123456789abcdef")}${str("slice_md5")}${str("fedcba9876543210fedcba9876543210")}${str("slice_size")}i100ee`;
    // The extension sits outside `info` (after it, in key order), so the hash is unchanged.
    const withCas = Buffer.concat([bytes.subarray(0, -1), Buffer.from(`${cas}e`)]);
    const reply = await parse(withCas);
    expect(reply.code, reply.message).toBe(200);
    expect(reply.data).toMatchObject({
      info_hash: infoHash,
      has_cas: true,
      cas: {
        cloud: "189",
        file_md5: "0123456789abcdef0123456789abcdef",
        slice_md5: "fedcba9876543210fedcba9876543210",
        slice_size: 100,
      },
    });
  });

  it.each([
    ["text that is no bencode", "hello", "failed to parse torrent: unexpected byte 0x68 at byte 0"],
    ["a list, not a dictionary", "le", "failed to parse torrent: the file is not a bencoded dictionary"],
    ["a cut-off file", "d4:infod4:name3:ab", "failed to parse torrent: string at byte 16 runs past the end"],
    ["trailing bytes", "de!", "failed to parse torrent: trailing data after byte 2"],
    ["a leading zero", "d1:ai01ee", "failed to parse torrent: malformed integer at byte 5"],
    ["no info", "d8:announce3:urle", "failed to parse torrent: no info dictionary"],
    [
      "pieces not a multiple of 20",
      "d4:infod6:lengthi1e4:name1:a12:piece lengthi16384e6:pieces3:abcee",
      "failed to parse torrent: info.pieces must be a string of 20-byte SHA-1 hashes",
    ],
    [
      "neither length nor files",
      `d4:infod4:name1:a12:piece lengthi16384e6:pieces20:${"x".repeat(20)}ee`,
      "failed to parse torrent: info.length must be a whole number, 0 or more",
    ],
    ["nesting without end", "l".repeat(40), "failed to parse torrent: nested too deeply"],
  ])("refuses %s (400, naming the fault)", async (_what, text, message) => {
    expect(await parse(text)).toEqual({ code: 400, message, data: null });
  });

  it("refuses torrent_data that is not Base64, or missing", async () => {
    expect(await post("/api/fs/torrent/parse", { torrent_data: "not base64!" })).toEqual({
      code: 400,
      message: "torrent_data: not valid Base64",
      data: null,
    });
    expect((await post("/api/fs/torrent/parse", {})).code).toBe(400);
  });

  it("is open to any signed-in user, and to no one signed out", async () => {
    const member = await signInMember(fixture, "torrent-member", [{ path: "/", permission: 0 }]);
    expect((await parse("d4:infod6:lengthi0e4:name1:a12:piece lengthi1e6:pieces0:ee", member)).code).toBe(200);
    expect((await parse("de", "")).code).toBe(401);
  });
});

describe("POST /api/fs/torrent/rapid_upload", () => {
  it("is refused, naming the driver it needs", async () => {
    const file = join(dir, "rapid.bin");
    writeFileSync(file, "x");
    const { bytes } = makeTorrent(file);
    expect(await post("/api/fs/torrent/rapid_upload", { torrent_data: bytes.toString("base64"), path: "/" })).toEqual({
      code: 400,
      message:
        "rapid upload from a torrent is not available: it needs the 189 Cloud PC storage driver's upload-by-hash (CAS), which Gatehouse does not have",
      data: null,
    });
  });
});
