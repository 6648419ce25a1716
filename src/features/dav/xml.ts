// The XML of WebDAV (RFC 4918 §14): request bodies parsed into a small namespace-resolved tree by a
// reader of our own (docs/decisions.md D27.3: well-formedness and namespaces, no DTD, so no entity
// beyond XML's five), and replies written as text. A dead property's value is kept as XML that declares its own
// namespaces, so it reads back the same whatever prefixes the client used.
import { DOCTYPE_REFUSED, NO_ROOT_ELEMENT, REASON_PHRASES } from "./messages.ts";

export const DAV_NS = "DAV:";

export interface XmlElement {
  /** Namespace URI, "" for none. */
  ns: string;
  local: string;
  attributes: { ns: string; local: string; value: string }[];
  children: (XmlElement | string)[];
}

/** A body that is not well-formed XML, or not the element the method expects: 400. */
export class BadXml extends Error {
  override name = "BadXml";
}

const XML_NS = "http://www.w3.org/XML/1998/namespace";
const XMLNS_NS = "http://www.w3.org/2000/xmlns/";
/** Deeper than any WebDAV body nests; writing a dead property back recurses once per level. */
const MAX_DEPTH = 100;
// XML 1.0 (fifth edition), section 2.3 Name, colons included (namespaces split them after), and 2.2 Char.
const NAME_START =
  ":A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}";
const NAME = new RegExp(`[${NAME_START}][${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F\\u2040]*`, "uy");
const NOT_CHAR = /[^\t\n\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const XML_DECLARATION =
  /^\s+version\s*=\s*(["'])1\.\d+\1(\s+encoding\s*=\s*(["'])[A-Za-z][\w.-]*\3)?(\s+standalone\s*=\s*(["'])(yes|no)\5)?\s*$/;
const PREDEFINED = new Map([
  ["lt", "<"],
  ["gt", ">"],
  ["amp", "&"],
  ["quot", '"'],
  ["apos", "'"],
]);

const isXmlChar = (code: number) =>
  code === 0x9 ||
  code === 0xa ||
  code === 0xd ||
  (code >= 0x20 && code <= 0xd7ff) ||
  (code >= 0xe000 && code <= 0xfffd) ||
  (code >= 0x10000 && code <= 0x10ffff);

/** The namespace bindings of an element, falling back to its parent's. */
interface Scope {
  parent: Scope | null;
  prefixes: Map<string, string>;
  defaultNs: string;
}

const TOP: Scope = { parent: null, prefixes: new Map([["xml", XML_NS]]), defaultNs: "" };

function lookup(scope: Scope, prefix: string): string | undefined {
  for (let at: Scope | null = scope; at; at = at.parent) {
    const ns = at.prefixes.get(prefix);
    if (ns !== undefined) return ns;
  }
  return undefined;
}

/**
 * The reader of docs/decisions.md D27.3: one pass over the text, no DTD (a DOCTYPE is refused, so
 * no entity but the five predefined ones and character references), nesting held to MAX_DEPTH.
 */
class Reader {
  at = 0;
  readonly text: string;
  constructor(text: string) {
    // XML 1.0 section 2.11: every line break reads as one LF.
    this.text = text.replace(/\r\n?/g, "\n");
  }

  fail(reason: string, at = this.at): never {
    const before = this.text.slice(0, at).split("\n");
    throw new BadXml(`${before.length}:${before.at(-1)!.length + 1}: ${reason}`);
  }

  has(prefix: string): boolean {
    return this.text.startsWith(prefix, this.at);
  }

  expect(token: string, what: string) {
    if (!this.has(token)) this.fail(`${what} expected`);
    this.at += token.length;
  }

  /** Skips blanks; whether there were any. */
  space(): boolean {
    const from = this.at;
    while (/[ \t\n]/.test(this.text[this.at] ?? "")) this.at++;
    return this.at > from;
  }

  name(): string {
    NAME.lastIndex = this.at;
    const match = NAME.exec(this.text);
    if (!match) this.fail(this.at >= this.text.length ? "unexpected end" : "a name expected");
    this.at += match[0].length;
    return match[0];
  }

  /** The text up to `end`, which is skipped. */
  until(end: string, what: string): string {
    const stop = this.text.indexOf(end, this.at);
    if (stop < 0) this.fail(`unclosed ${what}`);
    const inside = this.text.slice(this.at, stop);
    this.at = stop + end.length;
    return inside;
  }

  /** `raw` with its references replaced: the five predefined entities and character references. */
  references(raw: string, at: number): string {
    if (!raw.includes("&")) return raw;
    return raw.replace(/&([^&;]*)(;?)/g, (_, ref: string, semicolon: string) => {
      if (!semicolon) this.fail("& that starts no reference", at);
      const predefined = PREDEFINED.get(ref);
      if (predefined !== undefined) return predefined;
      const number = /^#(?:x([0-9A-Fa-f]{1,6})|(\d{1,7}))$/.exec(ref);
      if (!number) this.fail(`undefined entity &${ref};`, at);
      const code = number[1] !== undefined ? Number.parseInt(number[1], 16) : Number(number[2]);
      if (!isXmlChar(code)) this.fail(`&${ref}; is not an XML character`, at);
      return String.fromCodePoint(code);
    });
  }

  /** `qname` split at its colon: at most one, with a name on each side. */
  qualified(qname: string): string[] {
    const parts = qname.split(":");
    if (parts.length > 2 || parts.some((part) => part === "")) this.fail(`${qname} is not a qualified name`);
    return parts;
  }

  /** A qualified name split at its colon, the prefix resolved in `scope`. */
  resolve(qname: string, scope: Scope, isAttribute: boolean): { ns: string; local: string } {
    const parts = this.qualified(qname);
    if (parts.length === 1) return { ns: isAttribute ? "" : scope.defaultNs, local: qname };
    const ns = lookup(scope, parts[0]!);
    if (ns === undefined) this.fail(`unbound namespace prefix: ${parts[0]}`);
    return { ns, local: parts[1]! };
  }
}

interface Open {
  element: XmlElement;
  qname: string;
  scope: Scope;
}

/** A start tag at `reader.at` (past its `<`): the element, its scope, and whether it closed itself. */
function startTag(reader: Reader, parent: Scope): Open & { empty: boolean } {
  const qname = reader.name();
  const raw: [string, string][] = [];
  let empty = false;
  for (;;) {
    const spaced = reader.space();
    if (reader.has(">")) break;
    if (reader.has("/>")) {
      empty = true;
      break;
    }
    if (reader.at >= reader.text.length) reader.fail(`unclosed start tag ${qname}`);
    if (!spaced) reader.fail("a blank expected before an attribute");
    const name = reader.name();
    reader.space();
    reader.expect("=", "= after an attribute name");
    reader.space();
    const quote = reader.text[reader.at];
    if (quote !== '"' && quote !== "'") reader.fail("a quoted attribute value expected");
    reader.at++;
    const from = reader.at;
    const value = reader.until(quote, "attribute value");
    if (value.includes("<")) reader.fail("< in an attribute value", from);
    if (raw.some(([seen]) => seen === name)) reader.fail(`attribute ${name} given twice`);
    // XML 1.0 section 3.3.3: blanks in a value read as spaces; character references keep theirs.
    raw.push([name, reader.references(value.replace(/[\t\n]/g, " "), from)]);
  }
  reader.at += empty ? 2 : 1;
  const scope: Scope = { parent, prefixes: new Map(), defaultNs: parent.defaultNs };
  for (const [name, declared] of raw) {
    reader.qualified(name);
    const value = declared.trim(); // as saxes read it, so stored property names stay the same
    if (name === "xmlns") {
      if (value === XML_NS || value === XMLNS_NS) reader.fail(`${value} cannot be the default namespace`);
      scope.defaultNs = value;
    } else if (name.startsWith("xmlns:")) {
      const prefix = name.slice(6);
      if (prefix === "xmlns" || (prefix === "xml") !== (value === XML_NS) || value === XMLNS_NS)
        reader.fail(`${name} cannot be bound to ${value}`);
      if (value === "") reader.fail(`${name} cannot be undeclared`);
      scope.prefixes.set(prefix, value);
    }
  }
  const attributes: XmlElement["attributes"] = [];
  const seen = new Set<string>();
  for (const [name, value] of raw) {
    if (name === "xmlns" || name.startsWith("xmlns:")) continue;
    const { ns, local } = reader.resolve(name, scope, true);
    const expanded = `{${ns}}${local}`;
    if (seen.has(expanded)) reader.fail(`attribute ${expanded} given twice`);
    seen.add(expanded);
    attributes.push({ ns, local, value });
  }
  const element = { ...reader.resolve(qname, scope, false), attributes, children: [] };
  return { element, qname, scope, empty };
}

/** Markup other than a tag at `reader.at`: a comment, CDATA (returned), a PI; a DOCTYPE is refused. */
function otherMarkup(reader: Reader, inRoot: boolean): string | null {
  if (reader.has("<!--")) {
    reader.at += 4;
    const from = reader.at;
    const comment = reader.until("-->", "comment");
    if (comment.includes("--") || comment.endsWith("-")) reader.fail("-- in a comment", from);
    return null;
  }
  if (reader.has("<![CDATA[")) {
    if (!inRoot) reader.fail("CDATA outside the root element");
    reader.at += 9;
    return reader.until("]]>", "CDATA section");
  }
  if (reader.has("<!DOCTYPE")) throw new BadXml(DOCTYPE_REFUSED);
  if (reader.has("<!")) reader.fail("unexpected <!");
  reader.at += 2;
  const from = reader.at;
  const target = reader.name();
  if (target.toLowerCase() === "xml") reader.fail("an XML declaration is only allowed at the start", from);
  if (!reader.space() && !reader.has("?>")) reader.fail("a blank expected after a processing instruction's target");
  reader.until("?>", "processing instruction");
  return null;
}

/** Parses a request body. An empty body is null (methods where one is optional treat that as the default). */
export function parseXml(text: string): XmlElement | null {
  if (text.trim() === "") return null;
  const reader: Reader = new Reader(text);
  const bad = NOT_CHAR.exec(reader.text);
  if (bad) reader.fail("a character XML does not allow", bad.index);
  if (/^<\?xml[ \t\n]/.test(reader.text)) {
    reader.at = 5;
    if (!XML_DECLARATION.test(reader.until("?>", "XML declaration"))) reader.fail("a malformed XML declaration", 0);
  }
  const stack: Open[] = [];
  let root: XmlElement | null = null;
  while (reader.at < reader.text.length) {
    const top = stack.at(-1);
    if (!reader.has("<")) {
      const from = reader.at;
      const stop = reader.text.indexOf("<", from);
      reader.at = stop < 0 ? reader.text.length : stop;
      const raw = reader.text.slice(from, reader.at);
      if (!top) {
        if (/[^ \t\n]/.test(raw)) reader.fail("text outside the root element", from);
        continue;
      }
      if (raw.includes("]]>")) reader.fail("]]> in text", from);
      top.element.children.push(reader.references(raw, from));
    } else if (reader.has("</")) {
      reader.at += 2;
      const qname = reader.name();
      reader.space();
      reader.expect(">", `> closing ${qname}`);
      if (!top) reader.fail(`end tag ${qname} without a start tag`);
      if (top.qname !== qname) reader.fail(`end tag ${qname} closes ${top.qname}`);
      stack.pop();
    } else if (reader.has("<!") || reader.has("<?")) {
      const cdata = otherMarkup(reader, top !== undefined);
      if (cdata !== null) top?.element.children.push(cdata);
    } else {
      if (!top && root) reader.fail("a second root element");
      if (stack.length >= MAX_DEPTH) reader.fail(`elements nested deeper than ${MAX_DEPTH}`);
      reader.at++;
      const open = startTag(reader, top?.scope ?? TOP);
      if (top) top.element.children.push(open.element);
      else root = open.element;
      if (!open.empty) stack.push(open);
    }
  }
  if (stack.length > 0) reader.fail(`unclosed element ${stack.at(-1)!.qname}`);
  if (!root) throw new BadXml(NO_ROOT_ELEMENT);
  return root;
}

export const elements = (element: XmlElement) =>
  element.children.filter((child): child is XmlElement => typeof child !== "string");
export const isDav = (element: XmlElement, local: string) => element.ns === DAV_NS && element.local === local;
export const childDav = (element: XmlElement, local: string) => elements(element).find((child) => isDav(child, local));

/** `{namespace}local`: how a property is named in storage and compared. */
export const clarkName = (element: { ns: string; local: string }) => `{${element.ns}}${element.local}`;

/** A character escapeText replaces: a quote needs no escaping outside an attribute. */
const RESERVED_IN_TEXT = /[&<>\r]/;

/** Text content (an element's, never an attribute's): as escapeXml, with quotes left as they are. */
export const escapeText = (text: string) =>
  !RESERVED_IN_TEXT.test(text)
    ? text
    : text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\r/g, "&#13;");

/** A character escapeXml replaces: most names and values have none, and are returned as they are. */
const RESERVED = /[&<>"\r]/;

export const escapeXml = (text: string) =>
  !RESERVED.test(text)
    ? text
    : text
        .replace(/&/g, "&amp;")
        .replace(/</g, "&lt;")
        .replace(/>/g, "&gt;")
        .replace(/"/g, "&quot;")
        .replace(/\r/g, "&#13;");

/**
 * An element as XML text that stands on its own: each element declares its default namespace
 * when it differs from its parent's (`xmlns=""` for none), attributes in a namespace get a prefix.
 */
export function serialize(element: XmlElement, parentNs: string | null = null): string {
  const declarations = element.ns === parentNs ? "" : ` xmlns="${escapeXml(element.ns)}"`;
  const attributes = element.attributes
    .map((attribute, i) =>
      attribute.ns
        ? ` xmlns:a${i}="${escapeXml(attribute.ns)}" a${i}:${attribute.local}="${escapeXml(attribute.value)}"`
        : ` ${attribute.local}="${escapeXml(attribute.value)}"`,
    )
    .join("");
  const inner = element.children
    .map((child) => (typeof child === "string" ? escapeXml(child) : serialize(child, element.ns)))
    .join("");
  return inner === ""
    ? `<${element.local}${declarations}${attributes}/>`
    : `<${element.local}${declarations}${attributes}>${inner}</${element.local}>`;
}

/** An empty element of `name` (propname replies, and statuses of properties without a value). */
export const emptyElement = (name: { ns: string; local: string }) =>
  name.ns === DAV_NS ? `<D:${name.local}/>` : `<${name.local} xmlns="${escapeXml(name.ns)}"/>`;

/** One `<D:response>` of a multistatus: an href and either propstats or one status. */
export function davResponse(
  href: string,
  body: { propstats: { status: number; props: string[]; error?: string }[] } | { status: number; error?: string },
): string {
  const parts = [`<D:response><D:href>${escapeXml(href)}</D:href>`];
  if ("propstats" in body) {
    for (const propstat of body.propstats) {
      if (propstat.props.length === 0) continue;
      parts.push(
        `<D:propstat><D:prop>${propstat.props.join("")}</D:prop><D:status>${statusLine(propstat.status)}</D:status>`,
      );
      if (propstat.error) parts.push(`<D:error>${propstat.error}</D:error>`);
      parts.push("</D:propstat>");
    }
  } else {
    parts.push(`<D:status>${statusLine(body.status)}</D:status>`);
    if (body.error) parts.push(`<D:error>${body.error}</D:error>`);
  }
  parts.push("</D:response>");
  return parts.join("");
}

export const MULTISTATUS_OPEN = `<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">`;
export const MULTISTATUS_CLOSE = "</D:multistatus>";

export const statusLine = (status: number) => `HTTP/1.1 ${status} ${REASON_PHRASES[status] ?? ""}`.trimEnd();
