// The part of CBOR (RFC 8949) WebAuthn needs: attestation objects and COSE keys are small,
// definite-length items (CTAP2's canonical encoding), so indefinite lengths, integers past 2^53 and
// floats are refused rather than guessed at (docs/decisions.md D19.1).

/** A decoded item: maps keep integer keys (COSE) and text keys (attestation objects) apart. */
export type CborValue =
  | number
  | string
  | boolean
  | null
  | undefined
  | Uint8Array
  | CborValue[]
  | Map<number | string, CborValue>;

export class CborError extends Error {}

/** Deep enough for any attestation object; stops a crafted item from exhausting the stack. */
const MAX_DEPTH = 16;

/** Decodes the item at `offset`; returns it and where the next byte is (authenticator data goes on after its key). */
export function decodeCbor(bytes: Uint8Array, offset = 0): { value: CborValue; end: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = offset;

  /** Moves past `count` bytes and returns where they start. */
  const take = (count: number): number => {
    if (at + count > bytes.length) throw new CborError("CBOR item runs past the end");
    at += count;
    return at - count;
  };
  const argument = (info: number): number => {
    if (info < 24) return info;
    if (info === 24) return view.getUint8(take(1));
    if (info === 25) return view.getUint16(take(2));
    if (info === 26) return view.getUint32(take(4));
    if (info === 27) {
      const value = view.getBigUint64(take(8));
      if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new CborError("CBOR integer too large");
      return Number(value);
    }
    throw new CborError("indefinite or reserved CBOR length");
  };

  const item = (depth: number): CborValue => {
    if (depth > MAX_DEPTH) throw new CborError("CBOR nested too deep");
    const initial = view.getUint8(take(1));
    const major = initial >> 5;
    const info = initial & 0x1f;
    if (major === 7) {
      if (info === 20) return false;
      if (info === 21) return true;
      if (info === 22) return null;
      if (info === 23) return undefined;
      // Floats appear in no attestation object or COSE key WebAuthn defines.
      throw new CborError("unsupported CBOR simple value or float");
    }
    const length = argument(info);
    switch (major) {
      case 0:
        return length;
      case 1:
        return -1 - length;
      case 2: {
        const start = take(length);
        return bytes.slice(start, start + length);
      }
      case 3: {
        const start = take(length);
        return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
          bytes.subarray(start, start + length),
        );
      }
      case 4: {
        const list: CborValue[] = [];
        for (let i = 0; i < length; i++) list.push(item(depth + 1));
        return list;
      }
      case 5: {
        const map = new Map<number | string, CborValue>();
        for (let i = 0; i < length; i++) {
          const key = item(depth + 1);
          if (typeof key !== "number" && typeof key !== "string")
            throw new CborError("CBOR map key is not a number or text");
          if (map.has(key)) throw new CborError("CBOR map repeats a key");
          map.set(key, item(depth + 1));
        }
        return map;
      }
      default: // 6: a tag; what it tags is the value
        return item(depth + 1);
    }
  };

  const value = item(0);
  return { value, end: at };
}
