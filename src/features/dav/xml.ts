// The XML of WebDAV (RFC 4918 §14): request bodies parsed into a small namespace-resolved tree
// (saxes does the well-formedness and namespace work, and expands no external entities), and
// replies written as text. A dead property's value is kept as XML that declares its own
// namespaces, so it reads back the same whatever prefixes the client used.
import { SaxesParser } from "saxes";
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

/** Parses a request body. An empty body is null (methods where one is optional treat that as the default). */
export function parseXml(text: string): XmlElement | null {
  if (text.trim() === "") return null;
  const parser = new SaxesParser({ xmlns: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  parser.on("error", (error) => {
    throw new BadXml(error.message);
  });
  parser.on("doctype", () => {
    throw new BadXml(DOCTYPE_REFUSED);
  });
  parser.on("opentag", (tag) => {
    const element: XmlElement = {
      ns: tag.uri ?? "",
      local: tag.local ?? tag.name,
      attributes: Object.values(tag.attributes)
        .filter((attribute) => attribute.prefix !== "xmlns" && attribute.name !== "xmlns")
        .map((attribute) => ({ ns: attribute.uri, local: attribute.local, value: attribute.value })),
      children: [],
    };
    if (stack.length > 0) stack.at(-1)!.children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on("text", (text) => stack.at(-1)?.children.push(text));
  parser.on("cdata", (text) => stack.at(-1)?.children.push(text));
  parser.on("closetag", () => void stack.pop());
  try {
    parser.write(text).close();
  } catch (error) {
    throw error instanceof BadXml ? error : new BadXml(error instanceof Error ? error.message : String(error));
  }
  if (!root) throw new BadXml(NO_ROOT_ELEMENT);
  return root;
}

export const elements = (element: XmlElement) =>
  element.children.filter((child): child is XmlElement => typeof child !== "string");
export const isDav = (element: XmlElement, local: string) => element.ns === DAV_NS && element.local === local;
export const childDav = (element: XmlElement, local: string) => elements(element).find((child) => isDav(child, local));

/** `{namespace}local`: how a property is named in storage and compared. */
export const clarkName = (element: { ns: string; local: string }) => `{${element.ns}}${element.local}`;

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
