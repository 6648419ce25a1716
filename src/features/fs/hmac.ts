// HMAC-SHA256 (RFC 2104 over FIPS 180-4's SHA-256) for download signs, synchronous, with the key's
// two padded blocks hashed once per key. A listing signs every file in it: through WebCrypto each
// sign was a native call, a key schedule and a promise (docs/decisions.md D26.9). hmac.test.ts
// checks it against Node's HMAC on random keys and messages of every length around the blocks.

/** SHA-256's round constants and initial state: the first 32 bits of the fractional parts of the cube and square roots of the first primes. */
const PRIMES: number[] = [];
for (let n = 2; PRIMES.length < 64; n++) if (PRIMES.every((p) => n % p !== 0)) PRIMES.push(n);
const fraction = (x: number) => ((x - Math.floor(x)) * 2 ** 32) | 0;
const K = Int32Array.from(PRIMES, (p) => fraction(Math.cbrt(p)));
const INITIAL = Int32Array.from(PRIMES.slice(0, 8), (p) => fraction(Math.sqrt(p)));

const words = new Int32Array(64);

/** One 64-byte block of `bytes` at `offset` into `state`. */
function compress(state: Int32Array, bytes: Uint8Array, offset: number): void {
  const w = words;
  for (let i = 0; i < 16; i++) {
    const j = offset + i * 4;
    w[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15]!;
    const b = w[i - 2]!;
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}

/** The digest of `message` hashed on from `start` (which `prefix` bytes already went into), as bytes. */
function finish(start: Int32Array, prefix: number, message: Uint8Array): Uint8Array {
  const state = start.slice();
  const whole = message.length - (message.length % 64);
  for (let offset = 0; offset < whole; offset += 64) compress(state, message, offset);
  // The rest, 0x80, zeros, and the length in bits as 64 bits: one block or two.
  const rest = message.length - whole;
  const tail = new Uint8Array(rest < 56 ? 64 : 128);
  tail.set(message.subarray(whole));
  tail[rest] = 0x80;
  const bits = (prefix + message.length) * 8;
  const end = tail.length;
  tail[end - 5] = Math.floor(bits / 2 ** 32) & 0xff;
  tail[end - 4] = bits >>> 24;
  tail[end - 3] = bits >>> 16;
  tail[end - 2] = bits >>> 8;
  tail[end - 1] = bits;
  for (let offset = 0; offset < end; offset += 64) compress(state, tail, offset);
  const digest = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const word = state[i]!;
    digest[i * 4] = word >>> 24;
    digest[i * 4 + 1] = word >>> 16;
    digest[i * 4 + 2] = word >>> 8;
    digest[i * 4 + 3] = word;
  }
  return digest;
}

/** A key's inner and outer states (RFC 2104: the key, hashed first when longer than a block, XOR ipad and opad). */
export interface HmacKey {
  inner: Int32Array;
  outer: Int32Array;
}

export function hmacKey(secret: Uint8Array): HmacKey {
  const block = new Uint8Array(64);
  block.set(secret.length > 64 ? finish(INITIAL, 0, secret) : secret);
  const inner = INITIAL.slice();
  const outer = INITIAL.slice();
  compress(
    inner,
    block.map((byte) => byte ^ 0x36),
    0,
  );
  compress(
    outer,
    block.map((byte) => byte ^ 0x5c),
    0,
  );
  return { inner, outer };
}

/** HMAC-SHA256 of `message` under `key`. */
export function hmacSha256(key: HmacKey, message: Uint8Array): Uint8Array {
  return finish(key.outer, 64, finish(key.inner, 64, message));
}
