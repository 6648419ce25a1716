// PROPFIND and PROPPATCH: the live properties of RFC 4918 §15 and the dead ones clients store, read
// and written. A listing streams: its multistatus is written entry by entry as the client reads.
import type { FileObject } from "../../drivers/types.ts";
import { baseName, joinName } from "../fs/path.ts";
import { Permission } from "../fs/rules.ts";
import { contentTypeOf } from "../fs/serve.ts";
import { activeLock } from "./locks.ts";
import {
  CANNOT_MODIFY_PROTECTED_PROPERTY,
  PROPFIND_EMPTY,
  PROPFIND_FINITE_DEPTH,
  PROPFIND_INFINITY,
  PROPFIND_NOT_PROPFIND,
  PROPFIND_UNKNOWN,
  PROPPATCH_NOT_UPDATE,
  PROPPATCH_UNKNOWN,
  withoutProp,
} from "./messages.ts";
import { children } from "./read.ts";
import { existing, multistatus, requireManage, requireUnlocked, xmlBody, type DavRequest } from "./request.ts";
import { covers, DavError, etagOfObject, hrefOf } from "./rules.ts";
import { patchProperties } from "./store.ts";
import {
  childDav,
  clarkName,
  DAV_NS,
  davResponse,
  elements,
  emptyElement,
  escapeXml,
  isDav,
  MULTISTATUS_CLOSE,
  MULTISTATUS_OPEN,
  serialize,
  type XmlElement,
} from "./xml.ts";

/** The live properties of an object (RFC 4918 §15), as XML, by Clark name. */
function liveProperties(request: DavRequest, path: string, object: FileObject): Map<string, string> {
  const props = new Map<string, string>();
  const dav = (local: string, value: string) =>
    props.set(`{${DAV_NS}}${local}`, value === "" ? `<D:${local}/>` : `<D:${local}>${value}</D:${local}>`);
  dav("resourcetype", object.isDir ? "<D:collection/>" : "");
  dav("displayname", escapeXml(path === "/" ? "" : baseName(path)));
  dav("getlastmodified", object.modified.toUTCString());
  dav("creationdate", (object.created ?? object.modified).toISOString().replace(/\.\d{3}Z$/, "Z"));
  if (!object.isDir) {
    dav("getcontentlength", String(object.size));
    dav("getcontenttype", escapeXml(contentTypeOf(object.name)));
    dav("getetag", escapeXml(etagOfObject(object)));
  }
  dav(
    "supportedlock",
    "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry><D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>",
  );
  dav(
    "lockdiscovery",
    request.dav.locks
      .filter((lock) => covers(lock, path))
      .map((lock) => activeLock(request, lock))
      .join(""),
  );
  return props;
}

type PropfindKind =
  | { kind: "allprop"; include: string[] }
  | { kind: "propname" }
  | { kind: "prop"; names: { ns: string; local: string }[] };

function propfindKind(body: XmlElement | null): PropfindKind {
  if (body === null) return { kind: "allprop", include: [] };
  if (!isDav(body, "propfind")) throw new DavError(400, PROPFIND_NOT_PROPFIND);
  const [first] = elements(body);
  if (!first) throw new DavError(400, PROPFIND_EMPTY);
  if (isDav(first, "propname")) return { kind: "propname" };
  if (isDav(first, "allprop"))
    return { kind: "allprop", include: elements(childDav(body, "include") ?? first).map(clarkName) };
  if (isDav(first, "prop")) return { kind: "prop", names: elements(first).map((e) => ({ ns: e.ns, local: e.local })) };
  throw new DavError(400, PROPFIND_UNKNOWN);
}

export async function propfind(request: DavRequest, depth: 0 | 1 | -1): Promise<Response> {
  if (depth === -1) throw new DavError(403, PROPFIND_INFINITY, PROPFIND_FINITE_DEPTH);
  const kind = propfindKind(await xmlBody(request.c));
  const object = await existing(request, request.path);
  const members = depth === 1 && object.isDir ? await children(request, request.path) : [];
  const dead = new Map<string, Map<string, string>>();
  for (const row of request.dav.properties) {
    if (!dead.has(row.path)) dead.set(row.path, new Map());
    dead.get(row.path)!.set(row.name, row.xml);
  }
  const responseOf = (path: string, entry: FileObject) => {
    const live = liveProperties(request, path, entry);
    const own = dead.get(path) ?? new Map<string, string>();
    const href = hrefOf(request.viewer, path, entry.isDir);
    if (kind.kind === "propname")
      return davResponse(href, {
        propstats: [{ status: 200, props: [...live.keys(), ...own.keys()].map((name) => emptyElement(nameOf(name))) }],
      });
    if (kind.kind === "allprop")
      return davResponse(href, { propstats: [{ status: 200, props: [...live.values(), ...own.values()] }] });
    const found: string[] = [];
    const missing: string[] = [];
    for (const name of kind.names) {
      const clark = clarkName(name);
      const value = live.get(clark) ?? own.get(clark);
      if (value === undefined) missing.push(emptyElement(name));
      else found.push(value);
    }
    return davResponse(href, {
      propstats: [
        { status: 200, props: found },
        { status: 404, props: missing },
      ],
    });
  };
  // Written as it goes: a folder of 10,000 entries is never one string in memory.
  const encoder = new TextEncoder();
  let index = -1;
  const CHUNK = 200;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index === -1) {
        controller.enqueue(encoder.encode(MULTISTATUS_OPEN + responseOf(request.path, object)));
        index = 0;
        return;
      }
      if (index >= members.length) {
        controller.enqueue(encoder.encode(`${MULTISTATUS_CLOSE}\n`));
        controller.close();
        return;
      }
      const slice = members.slice(index, index + CHUNK);
      index += CHUNK;
      controller.enqueue(
        encoder.encode(slice.map((entry) => responseOf(joinName(request.path, entry.name), entry)).join("")),
      );
    },
  });
  return new Response(body, { status: 207, headers: { "Content-Type": "application/xml; charset=utf-8" } });
}

const nameOf = (clark: string) => {
  const end = clark.indexOf("}");
  return { ns: clark.slice(1, end), local: clark.slice(end + 1) };
};

export async function proppatch(request: DavRequest): Promise<Response> {
  const body = await xmlBody(request.c);
  if (body === null || !isDav(body, "propertyupdate")) throw new DavError(400, PROPPATCH_NOT_UPDATE);
  const object = await existing(request, request.path);
  requireManage(request, request.path, [Permission.WEBDAV_MANAGE]);
  requireUnlocked(request, [{ path: request.path, tree: false }], new Map([[request.path, etagOfObject(object)]]));
  const changes: ({ set: { name: string; xml: string } } | { remove: string })[] = [];
  const names: { ns: string; local: string }[] = [];
  for (const action of elements(body)) {
    const set = isDav(action, "set");
    if (!set && !isDav(action, "remove")) throw new DavError(400, PROPPATCH_UNKNOWN);
    const prop = childDav(action, "prop");
    if (!prop) throw new DavError(400, withoutProp(action.local));
    for (const property of elements(prop)) {
      names.push(property);
      changes.push(
        set ? { set: { name: clarkName(property), xml: serialize(property) } } : { remove: clarkName(property) },
      );
    }
  }
  // Live properties are the server's: one refused makes the whole update fail (RFC 4918 §9.2).
  const protectedNames = names.filter((name) => name.ns === DAV_NS);
  const href = hrefOf(request.viewer, request.path, object.isDir);
  if (protectedNames.length > 0) {
    const others = names.filter((name) => name.ns !== DAV_NS);
    const reply = davResponse(href, {
      propstats: [
        { status: 403, props: protectedNames.map(emptyElement), error: CANNOT_MODIFY_PROTECTED_PROPERTY },
        { status: 424, props: others.map(emptyElement) },
      ],
    });
    return multistatus(reply);
  }
  await patchProperties(request.c.var.db, request.path, changes);
  return multistatus(davResponse(href, { propstats: [{ status: 200, props: names.map(emptyElement) }] }));
}
