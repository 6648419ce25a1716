// PROPFIND and PROPPATCH: the live properties of RFC 4918 §15 and the dead ones clients store, read
// and written. A listing streams: its multistatus is written entry by entry as the client reads.
import { Permission } from "../fs/rules.ts";
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
import { EntryWriter, multistatusBody, type PropfindKind } from "./multistatus.ts";
import { children } from "./read.ts";
import { existing, multistatus, requireManage, requireUnlocked, xmlBody, type DavRequest } from "./request.ts";
import { DavError, etagOfObject, hrefOf } from "./rules.ts";
import { patchProperties } from "./store.ts";
import {
  childDav,
  clarkName,
  DAV_NS,
  davResponse,
  elements,
  emptyElement,
  isDav,
  serialize,
  type XmlElement,
} from "./xml.ts";

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
  const writer = new EntryWriter(request.viewer, kind, request.dav.locks, request.dav.properties);
  const member = writer.members(request.path);
  const body = multistatusBody(writer.entry(request.path, object), members.length, (i: number) => member(members[i]!));
  return new Response(body, { status: 207, headers: { "Content-Type": "application/xml; charset=utf-8" } });
}

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
