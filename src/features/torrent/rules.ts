// A .torrent file read in the Worker, without disk (docs/decisions.md D18.5): bencode decoded over
// the bytes (BEP 3), the metainfo's fields checked, and the info hash taken as SHA-1 of the info
// dictionary's own bytes as they stand in the file (not re-encoded), which is what a client computes.
import { ApiError } from "../../http/errors.ts";
import { TORRENT_NOT_BASE64, TORRENT_TOO_LARGE, torrentInvalid } from "./messages.ts";

/** OpenList's limit: about 10 MiB once decoded (server/handles/torrent.go maxTorrentBase64Len). */
export const MAX_TORRENT_BASE64 = 14 * 1024 * 1024;
/** Deeper nesting than any metainfo has: a crafted input cannot exhaust the stack. */
const MAX_DEPTH = 32;
/** Longer than any key a metainfo uses. */
const MAX_KEY = 256;

type Bencoded = number | Uint8Array | Bencoded[] | BDict;
/** A dictionary, keys as byte strings read as Latin-1 (one char per byte), with each value's span in the input. */
interface BDict {
  entries: Map<string, Bencoded>;
  spans: Map<string, [number, number]>;
}

const isDict = (value: Bencoded | undefined): value is BDict =>
  value !== undefined && typeof value === "object" && !(value instanceof Uint8Array) && !Array.isArray(value);
const isBytes = (value: Bencoded | undefined): value is Uint8Array => value instanceof Uint8Array;

const fail = (reason: string): never => {
  throw new ApiError(400, torrentInvalid(reason));
};

/** Decodes one bencoded value that must fill `bytes` exactly. */
function decodeBencode(bytes: Uint8Array): Bencoded {
  let at = 0;
  const digitsUntil = (end: number, what: string): number => {
    const stop = bytes.indexOf(end, at);
    if (stop < 0) fail(`unterminated ${what} at byte ${at}`);
    const text = new TextDecoder().decode(bytes.subarray(at, stop));
    if (!/^(0|-?[1-9]\d*)$/.test(text)) fail(`malformed ${what} at byte ${at}`);
    const value = Number(text);
    if (!Number.isSafeInteger(value)) fail(`${what} out of range at byte ${at}`);
    at = stop + 1;
    return value;
  };
  const value = (depth: number): Bencoded => {
    if (depth > MAX_DEPTH) fail("nested too deeply");
    const lead = bytes[at];
    if (lead === undefined) return fail("unexpected end of data");
    if (lead === 0x69 /* i */) {
      at++;
      return digitsUntil(0x65 /* e */, "integer");
    }
    if (lead === 0x6c /* l */) {
      at++;
      const list: Bencoded[] = [];
      while (bytes[at] !== 0x65) {
        if (at >= bytes.length) fail("unterminated list");
        list.push(value(depth + 1));
      }
      at++;
      return list;
    }
    if (lead === 0x64 /* d */) {
      at++;
      const dict: BDict = { entries: new Map(), spans: new Map() };
      while (bytes[at] !== 0x65) {
        if (at >= bytes.length) fail("unterminated dictionary");
        const key = value(depth + 1);
        if (!isBytes(key)) return fail(`dictionary key at byte ${at} is not a string`);
        if (key.length > MAX_KEY) fail(`dictionary key at byte ${at} is too long`);
        const name = String.fromCharCode(...key);
        const start = at;
        dict.entries.set(name, value(depth + 1));
        dict.spans.set(name, [start, at]);
      }
      at++;
      return dict;
    }
    if (lead >= 0x30 && lead <= 0x39) {
      const length = digitsUntil(0x3a /* : */, "string length");
      if (length < 0 || at + length > bytes.length) fail(`string at byte ${at} runs past the end`);
      const text = bytes.subarray(at, at + length);
      at += length;
      return text;
    }
    return fail(`unexpected byte 0x${lead.toString(16).padStart(2, "0")} at byte ${at}`);
  };
  const decoded = value(0);
  if (at !== bytes.length) fail(`trailing data after byte ${at}`);
  return decoded;
}

export interface TorrentSummary {
  name: string;
  total_size: number;
  piece_length: number;
  piece_count: number;
  info_hash: string;
  files: { path: string; size: number }[];
  has_cas: boolean;
  cas?: { file_md5: string; slice_md5: string; slice_size: number; cloud: string };
}

const utf8 = (bytes: Uint8Array, field: string): string => {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return fail(`${field} is not UTF-8`);
  }
};

const size = (value: Bencoded | undefined, field: string): number =>
  typeof value === "number" && value >= 0 ? value : fail(`${field} must be a whole number, 0 or more`);

/** The web UI's Base64 `torrent_data` as bytes; too large or not Base64 is a 400. */
export function torrentBytes(base64: string): Uint8Array {
  if (base64.length > MAX_TORRENT_BASE64) throw new ApiError(400, TORRENT_TOO_LARGE);
  let binary: string;
  try {
    binary = atob(base64);
  } catch {
    throw new ApiError(400, TORRENT_NOT_BASE64);
  }
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/** What OpenList's torrent/parse answers: name, sizes, pieces, info hash, files, and the CAS extension if any. */
export async function summarizeTorrent(bytes: Uint8Array): Promise<TorrentSummary> {
  const root = decodeBencode(bytes);
  if (!isDict(root)) return fail("the file is not a bencoded dictionary");
  const info = root.entries.get("info");
  const span = root.spans.get("info");
  if (!isDict(info) || !span) return fail("no info dictionary");
  const name = info.entries.get("name");
  if (!isBytes(name)) return fail("info.name is missing");
  const pieceLength = info.entries.get("piece length");
  if (typeof pieceLength !== "number" || pieceLength <= 0) fail("info.piece length must be a positive number");
  const pieces = info.entries.get("pieces");
  if (!isBytes(pieces) || pieces.length % 20 !== 0) fail("info.pieces must be a string of 20-byte SHA-1 hashes");

  const torrentName = utf8(name, "info.name");
  let files: TorrentSummary["files"];
  const listed = info.entries.get("files");
  if (listed !== undefined) {
    if (!Array.isArray(listed) || listed.length === 0) return fail("info.files must be a non-empty list");
    files = listed.map((file, i) => {
      if (!isDict(file)) return fail(`info.files[${i}] is not a dictionary`);
      const path = file.entries.get("path");
      if (!Array.isArray(path) || path.length === 0 || !path.every(isBytes))
        return fail(`info.files[${i}].path must be a non-empty list of strings`);
      return {
        path: path.map((part) => utf8(part as Uint8Array, `info.files[${i}].path`)).join("/"),
        size: size(file.entries.get("length"), `info.files[${i}].length`),
      };
    });
  } else {
    files = [{ path: torrentName, size: size(info.entries.get("length"), "info.length") }];
  }

  const digest = await crypto.subtle.digest("SHA-1", bytes.subarray(span[0], span[1]));
  const summary: TorrentSummary = {
    name: torrentName,
    total_size: files.reduce((sum, file) => sum + file.size, 0),
    piece_length: pieceLength as number,
    piece_count: (pieces as Uint8Array).length / 20,
    info_hash: [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join(""),
    files,
    has_cas: false,
  };
  // OpenList's CAS extension (pkg/torrent/torrent.go, key `x-cas`): the hashes one drive's rapid upload takes.
  const cas = root.entries.get("x-cas");
  if (isDict(cas)) {
    const text = (key: string) => {
      const value = cas.entries.get(key);
      return isBytes(value) ? new TextDecoder().decode(value) : "";
    };
    const sliceSize = cas.entries.get("slice_size");
    const found = {
      file_md5: text("file_md5"),
      slice_md5: text("slice_md5"),
      slice_size: typeof sliceSize === "number" ? sliceSize : 0,
      cloud: text("cloud"),
    };
    if (found.file_md5 !== "" && found.slice_md5 !== "") Object.assign(summary, { has_cas: true, cas: found });
  }
  return summary;
}
