// The few BER (X.690) forms LDAPv3 messages use (RFC 4511 section 5.1): definite lengths,
// single-byte tags, INTEGER, ENUMERATED, BOOLEAN, OCTET STRING and constructed values. Enough to
// write a bind, a search and an unbind and to read their answers; nothing else of ASN.1.

export class BerError extends Error {
  override name = "BerError";
}

/** Universal and LDAP tags, as bytes (class and constructed bit included). */
const Tag = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  OCTET_STRING: 0x04,
  ENUMERATED: 0x0a,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** One TLV: its tag byte and its contents. */
export interface Element {
  tag: number;
  content: Uint8Array;
}

const utf8 = new TextEncoder();

function lengthBytes(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return [0x80 | bytes.length, ...bytes];
}

/** A TLV of `tag` around `content` (bytes, or already encoded elements to concatenate). */
export function tlv(tag: number, ...content: Uint8Array[]): Uint8Array {
  const size = content.reduce((total, part) => total + part.length, 0);
  const head = [tag, ...lengthBytes(size)];
  const out = new Uint8Array(head.length + size);
  out.set(head);
  let at = head.length;
  for (const part of content) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Two's complement, shortest form: message ids, versions, limits, enumerations. */
export function integer(value: number, tag: number = Tag.INTEGER): Uint8Array {
  if (!Number.isSafeInteger(value)) throw new BerError(`${value} is not an integer`);
  const bytes: number[] = [];
  let rest = value;
  do {
    bytes.unshift(((rest % 256) + 256) % 256);
    rest = Math.floor(rest / 256);
  } while (rest !== 0 && rest !== -1);
  // Keep the sign bit right: a positive value whose top bit is set needs a leading zero.
  if (value >= 0 && (bytes[0]! & 0x80) !== 0) bytes.unshift(0);
  if (value < 0 && (bytes[0]! & 0x80) === 0) bytes.unshift(0xff);
  return tlv(tag, new Uint8Array(bytes));
}

export const enumerated = (value: number) => integer(value, Tag.ENUMERATED);
export const boolean = (value: boolean) => tlv(Tag.BOOLEAN, new Uint8Array([value ? 0xff : 0]));
/** An OCTET STRING (or an implicitly tagged one) of UTF-8 text or raw bytes. */
export const octets = (value: string | Uint8Array, tag: number = Tag.OCTET_STRING) =>
  tlv(tag, typeof value === "string" ? utf8.encode(value) : value);
export const sequence = (...items: Uint8Array[]) => tlv(Tag.SEQUENCE, ...items);

/**
 * How many bytes the element at the start of `bytes` takes, or -1 while it is incomplete: a
 * stream reader waits for that many before it decodes.
 */
export function elementLength(bytes: Uint8Array): number {
  if (bytes.length < 2) return -1;
  const first = bytes[1]!;
  if (first < 0x80) return 2 + first;
  const count = first & 0x7f;
  // 0x80 is the indefinite form, which LDAP forbids; more than 4 length bytes is no message we read.
  if (count === 0 || count > 4) throw new BerError(`length of ${count} bytes`);
  if (bytes.length < 2 + count) return -1;
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + bytes[2 + i]!;
  return 2 + count + length;
}

/** The elements one after another in `bytes` (the contents of a constructed element). */
export function readElements(bytes: Uint8Array): Element[] {
  const elements: Element[] = [];
  let at = 0;
  while (at < bytes.length) {
    const rest = bytes.subarray(at);
    const length = elementLength(rest);
    if (length < 0 || length > rest.length) throw new BerError("element runs past its container");
    const headLength = rest[1]! < 0x80 ? 2 : 2 + (rest[1]! & 0x7f);
    elements.push({ tag: rest[0]!, content: rest.subarray(headLength, length) });
    at += length;
  }
  return elements;
}

/** The one element `bytes` holds. */
export function readElement(bytes: Uint8Array): Element {
  const [element, ...rest] = readElements(bytes);
  if (!element || rest.length > 0) throw new BerError("expected exactly one element");
  return element;
}

export function readInteger(element: Element): number {
  const { content } = element;
  if (content.length === 0 || content.length > 6) throw new BerError(`integer of ${content.length} bytes`);
  let value = content[0]! & 0x80 ? -1 : 0;
  for (const byte of content) value = value * 256 + byte;
  return value;
}

export const readText = (element: Element) => new TextDecoder().decode(element.content);
