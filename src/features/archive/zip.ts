// A ZIP reader over range reads (APPNOTE 6.3.10): the End Of Central Directory from the file's
// tail, the central directory (ZIP64 included), and one entry's bytes from its local header on,
// inflated by the runtime's own DecompressionStream. Nothing is staged: the archive is never read
// whole (docs/decisions.md D13.1).
import { FileError } from "../../http/errors.ts";
import { emptyBody } from "../../lib/streams.ts";
import {
  AES_REFUSED,
  CENTRAL_DIRECTORY_TOO_LARGE,
  entriesOverlap,
  entryLonger,
  entryShorter,
  ENTRY_CHECKSUM,
  methodRefused,
  NOT_A_ZIP,
  PASSWORD_NEEDED,
  WRONG_PASSWORD,
  tooManyEntries,
  ZIP_DAMAGED,
} from "./messages.ts";

/** Bytes of the archive, from a storage (archive/source.ts). */
export interface ByteReader {
  size: number;
  /** `length` bytes from `start`, in memory (small reads: the tail, the directory, a local header). */
  read(start: number, length: number): Promise<Uint8Array>;
  /** `length` bytes from `start`, streamed. */
  stream(start: number, length: number): Promise<ReadableStream<Uint8Array>>;
}

export interface ZipEntry {
  /** As stored, decoded (UTF-8 when flagged or valid, else CP437); `/` separates folders. */
  name: string;
  isDir: boolean;
  /** 0 stored, 8 deflated, 99 AES; others are refused when opened. */
  method: number;
  flags: number;
  encrypted: boolean;
  crc32: number;
  compressedSize: number;
  /** The size the directory declares; the bytes served never exceed it. */
  size: number;
  headerOffset: number;
  modified: Date;
  /** The MS-DOS time field as stored: ZipCrypto's check byte with a data descriptor. */
  dosTime: number;
}

export interface ZipDirectory {
  comment: string;
  entries: ZipEntry[];
}

/**
 * A directory bigger than this is refused, not read into memory: room for MAX_ARCHIVE_ENTRIES
 * entries of 400-byte names, while 10,000 entries of 1,500-byte names would take 60 MB from the
 * directory to the reply (docs/decisions.md D13.7).
 */
const MAX_CENTRAL_DIRECTORY_BYTES = 4 * 1024 * 1024;
/**
 * An archive with more entries than this (or whose tree has more files and folders: rules.ts
 * archiveTree) is refused whole: `archive/meta` answers the whole tree, and each entry costs about
 * a kibibyte of a Worker's 128 MB from the directory to the reply (docs/decisions.md D13.7).
 */
export const MAX_ARCHIVE_ENTRIES = 10_000;

const EOCD = 0x06054b50;
const EOCD64_LOCATOR = 0x07064b50;
const EOCD64 = 0x06064b50;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;

const damaged = () => new FileError("refused", ZIP_DAMAGED);

/** The central directory: one read of the tail (the EOCD and its comment), then the directory if the tail missed it. */
export async function readZipDirectory(reader: ByteReader): Promise<ZipDirectory> {
  if (reader.size < EOCD_SIZE) throw new FileError("refused", NOT_A_ZIP);
  const tailStart = Math.max(0, reader.size - (EOCD_SIZE + MAX_COMMENT));
  const tail = await reader.read(tailStart, reader.size - tailStart);
  const at = findEocd(tail);
  if (at < 0) throw new FileError("refused", NOT_A_ZIP);
  const eocd = view(tail, at);
  const commentLength = eocd.getUint16(20, true);
  const comment = decodeName(tail.subarray(at + EOCD_SIZE, at + EOCD_SIZE + commentLength), false);
  let count = eocd.getUint16(10, true);
  let cdSize = eocd.getUint32(12, true);
  let cdOffset = eocd.getUint32(16, true);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    ({ count, cdSize, cdOffset } = await readZip64End(reader, tail, tailStart + at));
  }
  // Counted before the directory is read: the count declared is the most entries parsed.
  if (count > MAX_ARCHIVE_ENTRIES) throw new FileError("refused", tooManyEntries(MAX_ARCHIVE_ENTRIES));
  if (cdSize > MAX_CENTRAL_DIRECTORY_BYTES) throw new FileError("refused", CENTRAL_DIRECTORY_TOO_LARGE);
  if (cdOffset + cdSize > reader.size) throw damaged();
  const directory =
    cdOffset >= tailStart
      ? tail.subarray(cdOffset - tailStart, cdOffset - tailStart + cdSize)
      : await reader.read(cdOffset, cdSize);
  const { entries, spans } = parseCentralDirectory(directory, count);
  requireApart(entries, spans, cdOffset);
  return { comment, entries };
}

/**
 * Refuses an archive whose entries share or overlap their local data: an overlap bomb (David
 * Fifield's "A better zip bomb") points many directory entries at one kernel of compressed bytes,
 * or quotes each next local header inside the previous entry's data, so each entry passes the
 * ratio check while the whole expands a thousandfold. An entry's local record takes at least its
 * 30-byte header, its name and its compressed data, and ends before the next one starts and before
 * the directory (docs/decisions.md D13.7). Decided from the directory alone: no local header read.
 */
function requireApart(entries: readonly ZipEntry[], spans: readonly number[], cdOffset: number) {
  const order = entries.map((_, i) => i).sort((a, b) => entries[a]!.headerOffset - entries[b]!.headerOffset);
  for (const [at, i] of order.entries()) {
    const next = order[at + 1];
    const limit = next === undefined ? cdOffset : entries[next]!.headerOffset;
    if (entries[i]!.headerOffset + spans[i]! > limit)
      throw new FileError("refused", entriesOverlap(entries[i]!.name, next === undefined ? null : entries[next]!.name));
  }
}

/** The last EOCD signature whose comment fits in the file (bytes after it are tolerated, as Go's reader does). */
function findEocd(tail: Uint8Array): number {
  const data = view(tail, 0);
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (data.getUint32(i, true) === EOCD && i + EOCD_SIZE + data.getUint16(i + 20, true) <= tail.length) return i;
  }
  return -1;
}

async function readZip64End(reader: ByteReader, tail: Uint8Array, eocdOffset: number) {
  const locatorOffset = eocdOffset - 20;
  if (locatorOffset < 0) throw damaged();
  const locator = view(await readAt(reader, tail, locatorOffset, 20), 0);
  if (locator.getUint32(0, true) !== EOCD64_LOCATOR) throw damaged();
  const recordOffset = uint64(locator, 8);
  const record = view(await readAt(reader, tail, recordOffset, 56), 0);
  if (record.getUint32(0, true) !== EOCD64) throw damaged();
  return { count: uint64(record, 32), cdSize: uint64(record, 40), cdOffset: uint64(record, 48) };
}

/** Bytes already in the tail are not read again. */
async function readAt(reader: ByteReader, tail: Uint8Array, offset: number, length: number): Promise<Uint8Array> {
  const tailStart = reader.size - tail.length;
  if (offset >= tailStart && offset + length <= reader.size)
    return tail.subarray(offset - tailStart, offset - tailStart + length);
  if (offset + length > reader.size) throw damaged();
  return reader.read(offset, length);
}

/** The entries, and for each the least its local record spans: header, name (as here) and compressed data. */
function parseCentralDirectory(directory: Uint8Array, count: number): { entries: ZipEntry[]; spans: number[] } {
  const entries: ZipEntry[] = [];
  const spans: number[] = [];
  const data = view(directory, 0);
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > directory.length || data.getUint32(at, true) !== CENTRAL_ENTRY) throw damaged();
    const flags = data.getUint16(at + 8, true);
    const method = data.getUint16(at + 10, true);
    const nameLength = data.getUint16(at + 28, true);
    const extraLength = data.getUint16(at + 30, true);
    const commentLength = data.getUint16(at + 32, true);
    const nameStart = at + 46;
    const extraStart = nameStart + nameLength;
    const next = extraStart + extraLength + commentLength;
    if (next > directory.length) throw damaged();
    const rawName = directory.subarray(nameStart, extraStart);
    const extra = directory.subarray(extraStart, extraStart + extraLength);
    let size = data.getUint32(at + 24, true);
    let compressedSize = data.getUint32(at + 20, true);
    let headerOffset = data.getUint32(at + 42, true);
    // ZIP64 extra field: only the fields that overflowed, in this order.
    const zip64 = extraField(extra, 0x0001);
    if (zip64) {
      let field = 0;
      const next64 = () => {
        if (field + 8 > zip64.length) throw damaged();
        const value = uint64(view(zip64, 0), field);
        field += 8;
        return value;
      };
      if (size === 0xffffffff) size = next64();
      if (compressedSize === 0xffffffff) compressedSize = next64();
      if (headerOffset === 0xffffffff) headerOffset = next64();
    }
    const name = unicodePath(extra, rawName) ?? decodeName(rawName, (flags & 0x800) !== 0);
    entries.push({
      name,
      isDir: name.endsWith("/"),
      method,
      flags,
      encrypted: (flags & 1) !== 0,
      crc32: data.getUint32(at + 16, true),
      compressedSize,
      size,
      headerOffset,
      modified: dosTime(data.getUint16(at + 14, true), data.getUint16(at + 12, true)),
      dosTime: data.getUint16(at + 12, true),
    });
    spans.push(30 + nameLength + compressedSize);
    at = next;
  }
  return { entries, spans };
}

function extraField(extra: Uint8Array, id: number): Uint8Array | null {
  const data = view(extra, 0);
  for (let at = 0; at + 4 <= extra.length; ) {
    const length = data.getUint16(at + 2, true);
    if (data.getUint16(at, true) === id) return extra.subarray(at + 4, at + 4 + length);
    at += 4 + length;
  }
  return null;
}

/** Info-ZIP's Unicode Path field (0x7075): the UTF-8 name, when it still matches the stored one's CRC. */
function unicodePath(extra: Uint8Array, rawName: Uint8Array): string | null {
  const field = extraField(extra, 0x7075);
  if (!field || field.length < 5 || field[0] !== 1) return null;
  if (view(field, 0).getUint32(1, true) !== crc32(rawName)) return null;
  return new TextDecoder().decode(field.subarray(5));
}

const CP437_HIGH =
  "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0";

/**
 * A name as stored: UTF-8 when the entry says so, or when its bytes are valid UTF-8 (what most
 * tools write without saying, and how AList's Go reader shows them); else CP437, the format's
 * legacy code page.
 */
function decodeName(bytes: Uint8Array, utf8: boolean): string {
  if (utf8 || bytes.every((byte) => byte < 0x80)) return new TextDecoder().decode(bytes);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return Array.from(bytes, (byte) => (byte < 0x80 ? String.fromCharCode(byte) : CP437_HIGH[byte - 0x80])).join("");
  }
}

/** MS-DOS date and time, read as UTC (the format has no zone; AList's Go reader does the same). */
function dosTime(date: number, time: number): Date {
  return new Date(
    Date.UTC(
      1980 + (date >> 9),
      ((date >> 5) & 0xf) - 1,
      date & 0x1f,
      time >> 11,
      (time >> 5) & 0x3f,
      (time & 0x1f) * 2,
    ),
  );
}

const view = (bytes: Uint8Array, at: number) =>
  new DataView(bytes.buffer, bytes.byteOffset + at, bytes.byteLength - at);
const uint64 = (data: DataView, at: number) => Number(data.getBigUint64(at, true));

// ---------------------------------------------------------------------------------------------
// One entry's bytes.

/** The offset of an entry's data: its local header's own name and extra lengths may differ from the directory's. */
async function dataOffset(reader: ByteReader, entry: ZipEntry): Promise<number> {
  if (entry.headerOffset + 30 > reader.size) throw damaged();
  const header = view(await reader.read(entry.headerOffset, 30), 0);
  if (header.getUint32(0, true) !== LOCAL_HEADER) throw damaged();
  const start = entry.headerOffset + 30 + header.getUint16(26, true) + header.getUint16(28, true);
  if (start + entry.compressedSize > reader.size) throw damaged();
  return start;
}

/** Refuses what cannot be opened, before any byte is read: AES, methods other than stored and deflated. */
export function requireOpenable(entry: ZipEntry, password: string) {
  if (entry.method === 99) throw new FileError("refused", AES_REFUSED);
  if (entry.method !== 0 && entry.method !== 8) throw new FileError("refused", methodRefused(entry.method));
  if (entry.encrypted && password === "") throw new FileError("refused", PASSWORD_NEEDED);
}

/**
 * The entry's bytes `[start, start + length)` of its uncompressed content. A stored entry without
 * encryption is read at the range itself; otherwise the content is inflated from its start and the
 * bytes before `start` are dropped. The output never runs past the declared size: an entry whose
 * data says more errors there, as one whose data says less or whose checksum differs (when read
 * whole).
 */
export async function openEntry(
  reader: ByteReader,
  entry: ZipEntry,
  password: string,
  start = 0,
  length = entry.size - start,
): Promise<ReadableStream<Uint8Array>> {
  requireOpenable(entry, password);
  const offset = await dataOffset(reader, entry);
  if (length <= 0) return emptyBody();
  if (entry.method === 0 && !entry.encrypted) {
    if (entry.compressedSize !== entry.size) throw damaged();
    return reader.stream(offset + start, length);
  }
  let stream = entry.encrypted
    ? await decrypted(reader, entry, offset, password)
    : await reader.stream(offset, entry.compressedSize);
  if (entry.method === 8) stream = stream.pipeThrough(new DecompressionStream("deflate-raw"));
  return stream.pipeThrough(declaredSlice(entry, start, length));
}

/**
 * Counts the inflated bytes and keeps `[start, start + length)`. Read whole, the last chunk is held
 * back until the entry ended at its declared size with its CRC: an entry that says more, less or
 * other than its directory never gives its last bytes, so an upload of it never completes.
 */
function declaredSlice(entry: ZipEntry, start: number, length: number): TransformStream<Uint8Array, Uint8Array> {
  const end = start + length;
  const whole = start === 0 && length === entry.size;
  let seen = 0;
  let crc = 0xffffffff;
  let held: Uint8Array | null = null;
  return new TransformStream({
    transform(chunk, controller) {
      const from = seen;
      seen += chunk.length;
      const piece =
        seen > start && from < end
          ? chunk.subarray(Math.max(0, start - from), Math.min(chunk.length, end - from))
          : chunk.subarray(0, 0);
      if (!whole && seen >= end) {
        // The range is complete: stop inflating.
        if (held) controller.enqueue(held);
        controller.enqueue(piece);
        controller.terminate();
        return;
      }
      if (seen > entry.size) throw new FileError("refused", entryLonger(entry.size));
      if (whole) crc = crcUpdate(crc, chunk);
      if (held) controller.enqueue(held);
      held = piece.length > 0 ? piece : null;
    },
    flush(controller) {
      if (seen < Math.min(end, entry.size)) throw new FileError("refused", entryShorter(seen, entry.size));
      if (whole && (crc ^ 0xffffffff) >>> 0 !== entry.crc32) throw new FileError("refused", ENTRY_CHECKSUM);
      if (held) controller.enqueue(held);
    },
  });
}

// ---------------------------------------------------------------------------------------------
// CRC-32 and ZipCrypto (traditional PKWARE encryption, APPNOTE 6.1).

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crcUpdate(crc: number, bytes: Uint8Array): number {
  let c = crc;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return c >>> 0;
}

const crc32 = (bytes: Uint8Array) => (crcUpdate(0xffffffff, bytes) ^ 0xffffffff) >>> 0;

/** ZipCrypto's key stream for `password`: `decrypt` takes the bytes in order, chunk after chunk. */
function zipCrypto(password: string) {
  let k0 = 0x12345678;
  let k1 = 0x23456789;
  let k2 = 0x34567890;
  const update = (byte: number) => {
    k0 = (CRC_TABLE[(k0 ^ byte) & 0xff]! ^ (k0 >>> 8)) >>> 0;
    k1 = (Math.imul((k1 + (k0 & 0xff)) >>> 0, 134775813) + 1) >>> 0;
    k2 = (CRC_TABLE[(k2 ^ (k1 >>> 24)) & 0xff]! ^ (k2 >>> 8)) >>> 0;
  };
  for (const byte of new TextEncoder().encode(password)) update(byte);
  return {
    decrypt(chunk: Uint8Array): Uint8Array {
      const out = new Uint8Array(chunk.length);
      for (let i = 0; i < chunk.length; i++) {
        const t = (k2 | 2) & 0xffff;
        const plain = chunk[i]! ^ ((Math.imul(t, t ^ 1) >>> 8) & 0xff);
        update(plain);
        out[i] = plain;
      }
      return out;
    },
  };
}

/**
 * The entry's data decrypted: the 12-byte header is read and checked first (its last byte is the
 * CRC's high byte, or the time's with a data descriptor), so a wrong password is refused before
 * any byte is sent.
 */
async function decrypted(reader: ByteReader, entry: ZipEntry, offset: number, password: string) {
  if (entry.compressedSize < 12) throw damaged();
  const cipher = zipCrypto(password);
  const header = cipher.decrypt(await reader.read(offset, 12));
  const check = entry.flags & 8 ? (entry.dosTime >> 8) & 0xff : entry.crc32 >>> 24;
  if (header[11] !== check) throw new FileError("refused", WRONG_PASSWORD);
  const body = await reader.stream(offset + 12, entry.compressedSize - 12);
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({ transform: (chunk, out) => out.enqueue(cipher.decrypt(chunk)) }),
  );
}
