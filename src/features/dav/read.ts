// GET and HEAD on /dav: a file served by the storage's WebDAV policy (a redirect, the proxy URL or
// streamed through), with the conditions judged against the Etag PROPFIND shows; a folder as a
// plain page of links for a browser.
import { type FileObject, redirectable } from "../../drivers/types.ts";
import { escapePath, baseName, joinName } from "../fs/path.ts";
import { nearestMeta, signFor, visibleEntries } from "../fs/rules.ts";
import { httpDateSeconds, notModified, parseRange, preconditionFailed, serveLink } from "../fs/serve.ts";
import { existing, type DavRequest } from "./request.ts";
import { etagOfObject, hrefOf, viewOf } from "./rules.ts";
import { escapeXml } from "./xml.ts";

export async function get(request: DavRequest): Promise<Response> {
  const { c, path, tree, fs } = request;
  const object = await existing(request, path);
  if (object.isDir) return folderPage(request, object);
  const mounted = await tree.mount(path);
  const policy = mounted.storage.webdavPolicy;
  const proxyOnly = mounted.driver.config.only_proxy || mounted.driver.config.only_local;
  if (policy === "302_redirect" && !proxyOnly) {
    const link = await tree.link(path, { redirect: true, headers: c.req.raw.headers });
    if (redirectable(link))
      return new Response(null, { status: 302, headers: { Location: link.url, "Cache-Control": "no-store" } });
  }
  if (policy === "use_proxy_url" && mounted.storage.downProxyUrl !== "") {
    const base = mounted.storage.downProxyUrl.split("\n")[0]!.trim().replace(/\/+$/, "");
    const sign = mounted.storage.downProxySign ? `?sign=${await signFor(fs, path, mounted.storage, true)}` : "";
    return new Response(null, {
      status: 302,
      headers: { Location: `${base}${escapePath(path)}${sign}`, "Cache-Control": "no-store" },
    });
  }
  // Conditions are judged here against the Etag PROPFIND shows (an upstream's own differs), so
  // If-Match after a PROPFIND means the same thing on every storage; only the range goes upstream.
  const etag = etagOfObject(object);
  const modified = Math.floor(object.modified.getTime() / 1000);
  const validators = { Etag: etag, "Last-Modified": object.modified.toUTCString() };
  if (preconditionFailed(c.req.raw.headers, etag, modified))
    return new Response(null, { status: 412, headers: validators });
  if (notModified(c.req.raw.headers, etag, modified)) return new Response(null, { status: 304, headers: validators });
  const forwarded = new Headers();
  const ifRange = c.req.header("If-Range");
  const range = c.req.header("Range");
  // Checked here, before the link is asked for: an upstream is never sent a range it may choke on.
  if (
    range &&
    parseRange(range) !== null &&
    (ifRange === undefined || ifRange === etag || httpDateSeconds(ifRange) === modified)
  )
    forwarded.set("Range", range);
  const upstreamRequest = new Request(c.req.raw.url, {
    method: c.req.method === "HEAD" ? "HEAD" : "GET",
    headers: forwarded,
    signal: c.req.raw.signal,
  });
  const link = await tree.link(path, { redirect: false, headers: forwarded });
  const reply = await serveLink(upstreamRequest, link, baseName(path));
  const headers = new Headers(reply.headers);
  // WebDAV clients open files in place: no download prompt.
  headers.delete("Content-Disposition");
  headers.set("Etag", etag);
  headers.set("Last-Modified", validators["Last-Modified"]);
  return new Response(reply.body, { status: reply.status, headers });
}

/** A folder opened in a browser: a plain list of links (WebDAV clients PROPFIND instead). */
async function folderPage(request: DavRequest, folder: FileObject): Promise<Response> {
  const entries = await children(request, request.path);
  const rows = entries.map(
    (entry) =>
      `<li><a href="${escapeXml(hrefOf(request.viewer, joinName(request.path, entry.name), entry.isDir))}">${escapeXml(entry.name)}${entry.isDir ? "/" : ""}</a></li>`,
  );
  const title = escapeXml(viewOf(request.viewer, request.path));
  const body = `<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><ul>${rows.join("")}</ul>\n`;
  return new Response(request.c.req.method === "HEAD" ? null : body, {
    headers: { "Content-Type": "text/html; charset=utf-8", "Last-Modified": folder.modified.toUTCString() },
  });
}

export async function children(request: DavRequest, path: string): Promise<FileObject[]> {
  const entries = await request.tree.list(path);
  return visibleEntries(request.viewer, nearestMeta(request.fs.metas, path), path, entries);
}
