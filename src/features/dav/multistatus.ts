// The multistatus of PROPFIND (RFC 4918 §9.1), written for speed: a folder of 10,000 entries is
// the reply clients wait on longest (docs/decisions.md D25.2). What every entry of one reply shares
// is worked out once: the kind of request, the status lines, the folder's href, the requested
// names' places; each entry is then one string built by concatenation, escaped only where a value
// holds a character XML reserves, its dates formatted once for a run of entries with the same one.
// A reply longer than one chunk streams, chunk by chunk as the client reads.
import type { FileObject } from "../../drivers/types.ts";
import { baseName, escapePath, joinName } from "../fs/path.ts";
import type { Viewer } from "../fs/rules.ts";
import { contentTypeOf } from "../fs/serve.ts";
import { activeLock } from "./locks.ts";
import { covers, etagOfObject, hrefOf, viewOf } from "./rules.ts";
import type { LockRow, PropertyRow } from "./store.ts";
import {
  clarkName,
  DAV_NS,
  emptyElement,
  escapeText,
  escapeXml,
  MULTISTATUS_CLOSE,
  MULTISTATUS_OPEN,
  statusLine,
} from "./xml.ts";

export type PropfindKind =
  | { kind: "allprop"; include: string[] }
  | { kind: "propname" }
  | { kind: "prop"; names: { ns: string; local: string }[] };

/** The live properties (RFC 4918 §15), in the order allprop and propname list them. */
const LIVE = [
  "resourcetype",
  "displayname",
  "getlastmodified",
  "creationdate",
  "getcontentlength",
  "getcontenttype",
  "getetag",
  "supportedlock",
  "lockdiscovery",
] as const;
type Live = (typeof LIVE)[number];
/** The live properties a folder has not. */
const FILE_ONLY: ReadonlySet<Live> = new Set<Live>(["getcontentlength", "getcontenttype", "getetag"]);
const isLive = (local: string): local is Live => (LIVE as readonly string[]).includes(local);

const element = (local: string, value: string) =>
  value === "" ? `<D:${local}/>` : `<D:${local}>${value}</D:${local}>`;
const COLLECTION = element("resourcetype", "<D:collection/>");
const NOT_COLLECTION = element("resourcetype", "");
const SUPPORTED_LOCK = element(
  "supportedlock",
  "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry><D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>",
);
const NO_LOCKS = element("lockdiscovery", "");
const liveNames = (isDir: boolean) =>
  LIVE.filter((name) => !isDir || !FILE_ONLY.has(name))
    .map((local) => emptyElement({ ns: DAV_NS, local }))
    .join("");
const PROPNAMES_FOLDER = liveNames(true);
const PROPNAMES_FILE = liveNames(false);
const OK = `<D:status>${statusLine(200)}</D:status></D:propstat>`;
const NOT_FOUND = `<D:status>${statusLine(404)}</D:status></D:propstat>`;

/** A name as encodeURIComponent and escapePath leave it: letters, digits and `_.~-` only. */
const PLAIN_SEGMENT = /^[\w.~-]*$/;
const escapeSegment = (name: string) => (PLAIN_SEGMENT.test(name) ? name : escapePath(name));

const nameOf = (clark: string) => {
  const end = clark.indexOf("}");
  return { ns: clark.slice(1, end), local: clark.slice(end + 1) };
};

/** The <D:response> elements of one PROPFIND reply. */
export class EntryWriter {
  private readonly dead = new Map<string, Map<string, string>>();
  /** The names a `prop` request asks for, each with its live property (if it is one) and its 404 form. */
  private readonly asked: { clark: string; live: Live | null; missing: string }[];
  private readonly lockXml = new Map<LockRow, string>();
  private readonly contentTypes = new Map<string, string>();
  private modifiedAt = Number.NaN;
  private modifiedXml = "";
  private createdAt = Number.NaN;
  private createdXml = "";
  private etagAt = Number.NaN;
  private etagTime = "";

  constructor(
    private readonly viewer: Viewer,
    private readonly kind: PropfindKind,
    private readonly locks: readonly LockRow[],
    properties: readonly PropertyRow[],
  ) {
    for (const row of properties) {
      const own = this.dead.get(row.path) ?? new Map<string, string>();
      this.dead.set(row.path, own.set(row.name, row.xml));
    }
    this.asked =
      kind.kind === "prop"
        ? kind.names.map((name) => ({
            clark: clarkName(name),
            live: name.ns === DAV_NS && isLive(name.local) ? name.local : null,
            missing: emptyElement(name),
          }))
        : [];
  }

  /** The response of the object at full path `path` (the one the request names). */
  entry(path: string, object: FileObject): string {
    const name = path === "/" ? "" : escapeXml(baseName(path));
    return this.write(path, escapeXml(hrefOf(this.viewer, path, object.isDir)), name, object);
  }

  /** The responses of a folder's members, each from its object: the folder's part of the href is escaped once. */
  members(folder: string): (object: FileObject) => string {
    const view = viewOf(this.viewer, folder);
    const prefix = escapeXml(view === "/" ? "/dav/" : `/dav${escapePath(view)}/`);
    // A member's full path is wanted only for its locks and dead properties: most replies have none.
    const pathOf = this.dead.size === 0 && this.locks.length === 0 ? null : (name: string) => joinName(folder, name);
    return (object) =>
      this.write(
        pathOf === null ? "" : pathOf(object.name),
        `${prefix}${escapeXml(escapeSegment(object.name))}${object.isDir ? "/" : ""}`,
        escapeXml(object.name),
        object,
      );
  }

  /** One response: `href` and `name` come escaped; `path` is "" when no lock or dead property can be on it. */
  private write(path: string, href: string, name: string, object: FileObject): string {
    const own = this.dead.size === 0 ? undefined : this.dead.get(path);
    const open = `<D:response><D:href>${href}</D:href><D:propstat><D:prop>`;
    if (this.kind.kind === "allprop") {
      let props = `${object.isDir ? COLLECTION : NOT_COLLECTION}${element("displayname", name)}${this.lastModified(object)}${this.creationDate(object)}`;
      if (!object.isDir)
        props += `<D:getcontentlength>${object.size}</D:getcontentlength>${this.contentType(object)}${this.etag(object)}`;
      props += `${SUPPORTED_LOCK}${this.lockDiscovery(path)}`;
      if (own) for (const xml of own.values()) props += xml;
      return `${open}${props}</D:prop>${OK}</D:response>`;
    }
    if (this.kind.kind === "propname") {
      let props = object.isDir ? PROPNAMES_FOLDER : PROPNAMES_FILE;
      if (own) for (const clark of own.keys()) props += emptyElement(nameOf(clark));
      return `${open}${props}</D:prop>${OK}</D:response>`;
    }
    let found = "";
    let missing = "";
    for (const asked of this.asked) {
      const value =
        asked.live !== null && (!object.isDir || !FILE_ONLY.has(asked.live))
          ? this.live(asked.live, path, name, object)
          : own?.get(asked.clark);
      if (value === undefined) missing += asked.missing;
      else found += value;
    }
    let reply = `<D:response><D:href>${href}</D:href>`;
    if (found !== "") reply += `<D:propstat><D:prop>${found}</D:prop>${OK}`;
    if (missing !== "") reply += `<D:propstat><D:prop>${missing}</D:prop>${NOT_FOUND}`;
    return `${reply}</D:response>`;
  }

  /** One live property of an object, as XML. */
  private live(local: Live, path: string, name: string, object: FileObject): string {
    switch (local) {
      case "resourcetype":
        return object.isDir ? COLLECTION : NOT_COLLECTION;
      case "displayname":
        return element("displayname", name);
      case "getlastmodified":
        return this.lastModified(object);
      case "creationdate":
        return this.creationDate(object);
      case "getcontentlength":
        return `<D:getcontentlength>${object.size}</D:getcontentlength>`;
      case "getcontenttype":
        return this.contentType(object);
      case "getetag":
        return this.etag(object);
      case "supportedlock":
        return SUPPORTED_LOCK;
      case "lockdiscovery":
        return this.lockDiscovery(path);
    }
  }

  // The entries of one folder mostly share their dates (and all of them on a generated storage):
  // each is formatted when it differs from the entry before.
  private lastModified(object: FileObject): string {
    const at = object.modified.getTime();
    if (at !== this.modifiedAt) {
      this.modifiedAt = at;
      this.modifiedXml = element("getlastmodified", object.modified.toUTCString());
    }
    return this.modifiedXml;
  }

  private creationDate(object: FileObject): string {
    const created = object.created ?? object.modified;
    const at = created.getTime();
    if (at !== this.createdAt) {
      this.createdAt = at;
      this.createdXml = element("creationdate", created.toISOString().replace(/\.\d{3}Z$/, "Z"));
    }
    return this.createdXml;
  }

  private contentType(object: FileObject): string {
    const type = contentTypeOf(object.name);
    const known = this.contentTypes.get(type);
    if (known !== undefined) return known;
    const xml = element("getcontenttype", escapeXml(type));
    this.contentTypes.set(type, xml);
    return xml;
  }

  // The usual tag, mtime and size in hex (etagOf), is written here as it is: its quotes need no
  // escaping in text (AList's server sends them bare too; docs/decisions.md D25.10), and its time's
  // hex is kept for the run of entries that share it (a time past 2^30 seconds is no small
  // integer: its toString(16) is V8's slow path).
  private etag(object: FileObject): string {
    if (object.hashInfo !== undefined) return element("getetag", escapeText(etagOfObject(object)));
    const at = object.modified.getTime();
    if (at !== this.etagAt) {
      this.etagAt = at;
      this.etagTime = Math.floor(at / 1000).toString(16);
    }
    return `<D:getetag>"${this.etagTime}-${object.size.toString(16)}"</D:getetag>`;
  }

  private lockDiscovery(path: string): string {
    if (this.locks.length === 0) return NO_LOCKS;
    let xml = "";
    for (const lock of this.locks) {
      if (!covers(lock, path)) continue;
      const active = this.lockXml.get(lock) ?? activeLock(this.viewer, lock);
      this.lockXml.set(lock, active);
      xml += active;
    }
    return element("lockdiscovery", xml);
  }
}

/** About this many characters of XML are written and encoded at a time (D25.3). */
const CHUNK_CHARS = 16 * 1024;
/** The bytes handed to the runtime at a time: the encoded pieces of several pieces of text. */
const BUFFER_BYTES = 256 * 1024;
/** A reply up to about this many characters (a folder of some hundred entries) goes as one string. */
const STRING_CHARS = 128 * 1024;

/**
 * The multistatus body: `first`, then `count` entries written by `entry` as the client reads. A
 * reply of up to about 128 Ki characters is one string, which the runtime encodes and sends
 * without a stream's turns. A longer one is written and encoded 16 KiB of text at a time, into
 * buffers of 256 KiB: each turn of the stream carries a dozen pieces (docs/decisions.md D25.7).
 */
export function multistatusBody(
  first: string,
  count: number,
  entry: (index: number) => string,
): string | ReadableStream {
  let index = 0;
  const next = (text: string) => {
    while (index < count && text.length < CHUNK_CHARS) text += entry(index++);
    return index < count ? text : `${text}${MULTISTATUS_CLOSE}\n`;
  };
  // The first pieces are written to learn whether the reply is short; a long one sends them first.
  const pending: string[] = [next(`${MULTISTATUS_OPEN}${first}`)];
  for (let written = pending[0]!.length; index < count && written < STRING_CHARS; ) {
    const piece = next("");
    pending.push(piece);
    written += piece.length;
  }
  if (index >= count) return pending.length === 1 ? pending[0]! : pending.join("");
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const buffer = new Uint8Array(BUFFER_BYTES);
      let used = 0;
      while (pending.length > 0 || index < count) {
        const text = pending.shift() ?? next("");
        // At most three bytes a UTF-16 unit: a piece that may not fit waits for the next buffer,
        // and one larger than a buffer (an entry with big dead properties) goes on its own.
        if (text.length * 3 > BUFFER_BYTES - used) {
          if (used > 0) {
            pending.unshift(text);
            break;
          }
          controller.enqueue(encoder.encode(text));
          break;
        }
        used += encoder.encodeInto(text, buffer.subarray(used)).written;
      }
      if (used > 0) controller.enqueue(buffer.subarray(0, used));
      if (pending.length === 0 && index >= count) controller.close();
    },
  });
}
