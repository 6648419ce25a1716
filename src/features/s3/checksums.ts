// S3's additional checksums (docs/decisions.md D22.15): `x-amz-checksum-<algorithm>`, sent as a
// request header or an aws-chunked trailer, the base64 of the big-endian digest of the object's
// bytes. They are computed as the bytes stream past, never over a held body: the CRCs here in
// table form (the SDKs' default is CRC32), SHA-1 and SHA-256 by workerd's DigestStream.

/** The algorithms by their header's suffix: `x-amz-checksum-crc32` is `crc32`. */
export const CHECKSUM_ALGORITHMS = ["crc32", "crc32c", "crc64nvme", "sha1", "sha256"] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

const HEADER_PREFIX = "x-amz-checksum-";

/** The algorithm a `x-amz-checksum-<algorithm>` name gives, or null for any other name. */
export function checksumAlgorithmOf(name: string): ChecksumAlgorithm | null {
  const lower = name.trim().toLowerCase();
  if (!lower.startsWith(HEADER_PREFIX)) return null;
  const suffix = lower.slice(HEADER_PREFIX.length);
  return CHECKSUM_ALGORITHMS.find((algorithm) => algorithm === suffix) ?? null;
}

export const checksumHeader = (algorithm: ChecksumAlgorithm) => `${HEADER_PREFIX}${algorithm}`;

/** The digest's length in bytes, which a sent value must decode to. */
const DIGEST_BYTES: Record<ChecksumAlgorithm, number> = { crc32: 4, crc32c: 4, crc64nvme: 8, sha1: 20, sha256: 32 };

/** Whether `value` is the base64 of a digest of the algorithm's length. */
export function checksumValueValid(algorithm: ChecksumAlgorithm, value: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 !== 0) return false;
  return atob(value).length === DIGEST_BYTES[algorithm];
}

/** A running checksum: bytes in, in order; the base64 digest once at the end. */
export interface Checksum {
  readonly algorithm: ChecksumAlgorithm;
  update(bytes: Uint8Array): Promise<void>;
  base64(): Promise<string>;
  abort(): void;
}

const base64Of = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** A reflected CRC's 256-entry table of a 32-bit polynomial. */
function crc32Table(polynomial: number): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ polynomial : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

const TABLES = new Map<number, Uint32Array>();
const tableOf = (polynomial: number) => {
  const table = TABLES.get(polynomial) ?? crc32Table(polynomial);
  TABLES.set(polynomial, table);
  return table;
};

/** CRC-32 (ISO-HDLC, 0xEDB88320 reflected) or CRC-32C (Castagnoli, 0x82F63B78 reflected). */
function crc32Checksum(algorithm: "crc32" | "crc32c"): Checksum {
  const table = tableOf(algorithm === "crc32" ? 0xedb88320 : 0x82f63b78);
  let crc = 0xffffffff;
  return {
    algorithm,
    async update(bytes) {
      let c = crc;
      for (let i = 0; i < bytes.length; i++) c = table[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
      crc = c;
    },
    async base64() {
      const out = new Uint8Array(4);
      new DataView(out.buffer).setUint32(0, (crc ^ 0xffffffff) >>> 0);
      return base64Of(out);
    },
    abort() {},
  };
}

/** CRC-64/NVME's table (0x9A6C9329AC4BC9B5 reflected), as high and low 32-bit halves. */
let crc64Tables: { hi: Uint32Array; lo: Uint32Array } | null = null;
function crc64Table() {
  if (crc64Tables) return crc64Tables;
  const polyHi = 0x9a6c9329;
  const polyLo = 0xac4bc9b5;
  const hi = new Uint32Array(256);
  const lo = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let h = 0;
    let l = n;
    for (let k = 0; k < 8; k++) {
      const odd = l & 1;
      l = ((l >>> 1) | (h << 31)) >>> 0;
      h = h >>> 1;
      if (odd) {
        h = (h ^ polyHi) >>> 0;
        l = (l ^ polyLo) >>> 0;
      }
    }
    hi[n] = h;
    lo[n] = l;
  }
  crc64Tables = { hi, lo };
  return crc64Tables;
}

function crc64Checksum(): Checksum {
  const table = crc64Table();
  let hi = 0xffffffff;
  let lo = 0xffffffff;
  return {
    algorithm: "crc64nvme",
    async update(bytes) {
      let h = hi;
      let l = lo;
      for (let i = 0; i < bytes.length; i++) {
        const index = (l ^ bytes[i]!) & 0xff;
        l = (((l >>> 8) | (h << 24)) ^ table.lo[index]!) >>> 0;
        h = ((h >>> 8) ^ table.hi[index]!) >>> 0;
      }
      hi = h;
      lo = l;
    },
    async base64() {
      const out = new Uint8Array(8);
      const view = new DataView(out.buffer);
      view.setUint32(0, (hi ^ 0xffffffff) >>> 0);
      view.setUint32(4, (lo ^ 0xffffffff) >>> 0);
      return base64Of(out);
    },
    abort() {},
  };
}

type DigestStreamClass = new (algorithm: string) => WritableStream<Uint8Array> & { digest: Promise<ArrayBuffer> };

/**
 * SHA-1 or SHA-256 fed as bytes arrive: workerd's DigestStream hashes them natively; elsewhere
 * (Node, the unit tests) they are kept for one digest at the end.
 */
function digestChecksum(algorithm: "sha1" | "sha256"): Checksum {
  const name = algorithm === "sha1" ? "SHA-1" : "SHA-256";
  const Digest = (crypto as unknown as { DigestStream?: DigestStreamClass }).DigestStream;
  if (Digest) {
    const digest = new Digest(name);
    digest.digest.catch(() => undefined);
    const writer = digest.getWriter();
    return {
      algorithm,
      update: (bytes) => writer.write(bytes),
      async base64() {
        await writer.close();
        return base64Of(new Uint8Array(await digest.digest));
      },
      abort: () => void writer.abort().catch(() => undefined),
    };
  }
  const kept: Uint8Array[] = [];
  return {
    algorithm,
    update: async (bytes) => void kept.push(bytes.slice()),
    base64: async () => base64Of(new Uint8Array(await crypto.subtle.digest(name, await new Blob(kept).arrayBuffer()))),
    abort: () => void kept.splice(0),
  };
}

export function checksumFor(algorithm: ChecksumAlgorithm): Checksum {
  if (algorithm === "crc32" || algorithm === "crc32c") return crc32Checksum(algorithm);
  if (algorithm === "crc64nvme") return crc64Checksum();
  return digestChecksum(algorithm);
}

/** The base64 checksum of whole bytes (tests, small bodies). */
export async function checksumOf(algorithm: ChecksumAlgorithm, bytes: Uint8Array): Promise<string> {
  const sum = checksumFor(algorithm);
  await sum.update(bytes);
  return sum.base64();
}
