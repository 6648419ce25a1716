// LDAP search filters: the string form (RFC 4515) parsed and written in BER (RFC 4511 section
// 4.5.1), and the escaping that puts a user name into the configured template as a value only
// (docs/decisions.md D21.2). And, or, not, equality, presence, substrings, >=, <= and ~=;
// extensible matches are refused.
import { BerError, octets, sequence, tlv } from "./ber.ts";

export class FilterError extends Error {
  override name = "FilterError";
}

/**
 * `value` with RFC 4515's special characters (`*`, `(`, `)`, `\` and NUL) written as `\hh`, so a
 * user name is one assertion value whatever it holds: `*` matches a literal star, `)(uid=*` closes
 * nothing.
 */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (char) => `\\${char.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** The template with every `%s` replaced by the escaped user name (OpenList's fmt.Sprintf). */
export function userFilter(template: string, username: string): string {
  const escaped = escapeFilterValue(username);
  return template.replaceAll("%s", () => escaped);
}

/**
 * The attribute the template compares the user name with (`uid` in `(&(objectClass=person)(uid=%s))`),
 * or null when no item is exactly `(attr=%s)`: the sign-in reads it to learn the directory's spelling.
 */
export function nameAttribute(template: string): string | null {
  return /\(([A-Za-z][A-Za-z0-9-]*)=%s\)/.exec(template)?.[1] ?? null;
}

const utf8 = new TextEncoder();

/** An assertion value's bytes: `\hh` escapes decoded, everything else UTF-8. */
function valueBytes(text: string): Uint8Array {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === "\\") {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new FilterError(`bad escape "\\${hex}" in a filter value`);
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (char === "(" || char === ")" || char === "\0") {
      throw new FilterError(`unescaped "${char}" in a filter value`);
    } else {
      const point = text.codePointAt(i)!;
      const encoded = utf8.encode(String.fromCodePoint(point));
      bytes.push(...encoded);
      if (point > 0xffff) i++;
    }
  }
  return new Uint8Array(bytes);
}

const ATTRIBUTE = /^[A-Za-z][A-Za-z0-9-]*(;[A-Za-z0-9-]+)*$|^[0-9]+(\.[0-9]+)*(;[A-Za-z0-9-]+)*$/;

/** The BER of one item `attr<op>value` (the text between a filter's parentheses). */
function item(text: string): Uint8Array {
  const match = /^([^=<>~]*)(=|~=|>=|<=)(.*)$/s.exec(text);
  if (!match) throw new FilterError(`"${text}" is not attr=value`);
  const [, attribute = "", operator, value = ""] = match;
  if (attribute.includes(":")) throw new FilterError("extensible match filters are not supported");
  if (!ATTRIBUTE.test(attribute)) throw new FilterError(`"${attribute}" is not an attribute description`);
  const type = octets(attribute);
  if (operator === ">=") return tlv(0xa5, type, octets(valueBytes(value)));
  if (operator === "<=") return tlv(0xa6, type, octets(valueBytes(value)));
  if (operator === "~=") return tlv(0xa8, type, octets(valueBytes(value)));
  if (value === "*") return octets(attribute, 0x87);
  if (!value.includes("*")) return tlv(0xa3, type, octets(valueBytes(value)));
  // Substrings: the unescaped stars split initial, any... and final; empty ends are left out.
  const parts = value.split("*");
  const pieces: Uint8Array[] = [];
  parts.forEach((part, index) => {
    if (part === "") {
      if (index > 0 && index < parts.length - 1) throw new FilterError(`"**" in a filter value`);
      return;
    }
    const kind = index === 0 ? 0x80 : index === parts.length - 1 ? 0x82 : 0x81;
    pieces.push(octets(valueBytes(part), kind));
  });
  return tlv(0xa4, type, sequence(...pieces));
}

/** Parses the filter at `text[at]` (an opening parenthesis); returns its BER and where it ends. */
function parse(text: string, at: number, depth: number): { ber: Uint8Array; end: number } {
  if (depth > 32) throw new FilterError("filter nested too deep");
  if (text[at] !== "(") throw new FilterError(`expected "(" at ${at}`);
  const kind = text[at + 1];
  if (kind === "&" || kind === "|" || kind === "!") {
    const children: Uint8Array[] = [];
    let next = at + 2;
    while (text[next] === "(") {
      const child = parse(text, next, depth + 1);
      children.push(child.ber);
      next = child.end;
    }
    if (text[next] !== ")") throw new FilterError(`expected ")" at ${next}`);
    if (kind === "!" && children.length !== 1) throw new FilterError("(! ...) takes exactly one filter");
    if (kind !== "!" && children.length === 0) throw new FilterError(`(${kind}) needs at least one filter`);
    const tag = kind === "&" ? 0xa0 : kind === "|" ? 0xa1 : 0xa2;
    return { ber: tlv(tag, ...children), end: next + 1 };
  }
  const close = text.indexOf(")", at + 1);
  if (close < 0) throw new FilterError(`missing ")" after ${at}`);
  const inner = text.slice(at + 1, close);
  if (inner.includes("(")) throw new FilterError(`unescaped "(" in "${inner}"`);
  return { ber: item(inner), end: close + 1 };
}

/** The BER of an RFC 4515 filter string; a bare `attr=value` is taken as `(attr=value)`. */
export function encodeFilter(filter: string): Uint8Array {
  const text = filter.trim().startsWith("(") ? filter.trim() : `(${filter.trim()})`;
  try {
    const { ber, end } = parse(text, 0, 0);
    if (end !== text.length) throw new FilterError(`text after the filter: "${text.slice(end)}"`);
    return ber;
  } catch (error) {
    if (error instanceof BerError) throw new FilterError(error.message);
    throw error;
  }
}
