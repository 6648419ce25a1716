// The file side of WebDAV (docs/decisions.md D7; AList v3.58.0 drivers/webdav/driver.go:50):
// PROPFIND Depth 1 lists, Depth 0 looks one object up; downloads are proxied (the upstream needs
// credentials, which never reach the client); writes are PUT with a known length, MKCOL, MOVE, COPY
// and DELETE. Basic auth is sent with every request (one round trip each); Digest is not supported.
import { cleanPath } from "../lib/path.ts";
import { anySignal, withLength } from "../lib/streams.ts";
import { requireText } from "./addition.ts";
import { errorText } from "./failures.ts";
import {
  FileError,
  notAFolder,
  objectNotFound,
  type FileBackend,
  type FileObject,
  type StorageHandle,
  type Upload,
} from "./types.ts";

/** The properties a listing asks for; the storage check asks the root for the same. */
export const PROPFIND_BODY =
  '<?xml version="1.0" encoding="utf-8"?><propfind xmlns="DAV:"><prop><displayname/><resourcetype/><getcontentlength/><getlastmodified/><creationdate/></prop></propfind>';

export interface DavEntry {
  /** The href, percent-decoded, without a trailing slash. */
  path: string;
  isDir: boolean;
  size: number;
  modified: Date | null;
  created: Date | null;
}

/**
 * The responses of a multistatus body, whatever namespace prefix the server uses (`D:`, `d:`,
 * `lp1:` or none). Only propstats with a 200 status count, as in AList.
 */
export function parseMultistatus(xml: string): DavEntry[] {
  const tag = (name: string) => `<(?:[\\w.-]+:)?${name}\\b[^>]*>([\\s\\S]*?)</(?:[\\w.-]+:)?${name}\\s*>`;
  const first = (text: string, name: string) => new RegExp(tag(name), "i").exec(text)?.[1];
  const all = (text: string, name: string) => [...text.matchAll(new RegExp(tag(name), "gi"))].map((m) => m[1]!);
  return all(xml, "response").map((response) => {
    const href = decodeEntities(first(response, "href") ?? "").trim();
    let path = href.replace(/^[a-z]+:\/\/[^/]+/i, "");
    try {
      path = decodeURIComponent(path);
    } catch {
      // a server that sent a bare %: keep it as it came
    }
    const ok = all(response, "propstat")
      .filter((propstat) => /\s200\b/.test(first(propstat, "status") ?? ""))
      .join("");
    const date = (value: string | undefined) => {
      const time = value ? Date.parse(decodeEntities(value).trim()) : Number.NaN;
      return Number.isNaN(time) ? null : new Date(time);
    };
    return {
      path: path.length > 1 ? path.replace(/\/+$/, "") : path,
      isDir: /<(?:[\w.-]+:)?collection\b/i.test(first(ok, "resourcetype") ?? ""),
      size: Number(first(ok, "getcontentlength")?.trim() || 0),
      modified: date(first(ok, "getlastmodified")),
      created: date(first(ok, "creationdate")),
    };
  });
}

const decodeEntities = (text: string) =>
  text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&amp;/g, "&");

/** What every request to one WebDAV storage needs: its address, root and credentials. */
interface Dav {
  storage: StorageHandle;
  /** The server's address, without a trailing slash. */
  address: string;
  /** The server's path prefix (the address may carry one, as /remote.php/dav/files/me). */
  addressPath: string;
  /** The address's host, as failures name it. */
  host: string;
  root: string;
  username: string;
  /** The Basic credentials every request carries (none without a username). */
  auth: Record<string, string>;
}

/**
 * The WebDAV backend: the Files object of one storage, every operation a named function over its
 * context below, in this order: listing, reading (a proxied link), writing.
 */
export function webDavFiles(storage: StorageHandle): FileBackend {
  const { addition } = storage;
  const address = requireText(addition, "address").replace(/\/+$/, "");
  const username = addition.text("username");
  const dav: Dav = {
    storage,
    address,
    addressPath: (() => {
      try {
        return decodeURIComponent(new URL(address).pathname).replace(/\/+$/, "");
      } catch {
        return "";
      }
    })(),
    host: (() => {
      try {
        return new URL(address).host;
      } catch {
        return "the WebDAV server";
      }
    })(),
    root: cleanPath(addition.text("root_folder_path")),
    username,
    auth: username === "" ? {} : { Authorization: `Basic ${base64(`${username}:${addition.text("password")}`)}` },
  };
  return {
    list: (dir) => listFolder(dav, dir),
    get: (path) => getObject(dav, path),

    link: async (path) => ({ url: urlOf(dav, path), headers: dav.auth }),

    async makeDir(parentDir, name) {
      await expectOk(dav, await send(dav, "MKCOL", urlOf(dav, joinActual(parentDir, name), true)), "MKCOL", [201]);
    },
    rename: (path, newName) =>
      transfer(dav, "MOVE", path, joinActual(path.slice(0, Math.max(1, path.lastIndexOf("/"))), newName)),
    move: (path, dstDir) => transfer(dav, "MOVE", path, joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1))),
    copy: (path, dstDir) => transfer(dav, "COPY", path, joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1))),
    remove: (path) => removePath(dav, path),
    partialUploads: true,
    put: (dir, upload) => putFile(dav, joinActual(dir, upload.name), upload),
  };
}

/** The full path on the server of an actual path. */
const serverPath = (dav: Dav, path: string) => cleanPath(`${dav.root}/${path}`);
/** The URL of an actual path, each segment encoded. */
const urlOf = (dav: Dav, path: string, folder = false) => {
  const encoded = serverPath(dav, path).split("/").map(encodeURIComponent).join("/");
  return `${dav.address}${encoded}${folder && encoded !== "/" && encoded !== "" ? "/" : ""}`;
};
const joinActual = (dir: string, name: string) => (dir === "/" ? `/${name}` : `${dir}/${name}`);

// Requests.

async function send(
  dav: Dav,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: BodyInit | null,
  signal?: AbortSignal,
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { ...dav.auth, ...headers },
      body,
      signal: anySignal(dav.storage.signal, signal),
    });
  } catch (error) {
    throw new Error(`cannot reach ${dav.host}: ${errorText(error)}`);
  }
  if (response.status === 401) {
    await response.text().catch(() => "");
    throw new FileError("upstream", `${dav.host} refused the credentials of ${dav.username || "(no user)"} (HTTP 401)`);
  }
  return response;
}

async function failure(dav: Dav, response: Response, what: string): Promise<Error> {
  await response.text().catch(() => "");
  if (response.status === 404) return objectNotFound();
  return new Error(`${what}: ${dav.host} answered HTTP ${response.status} ${response.statusText}`.trim());
}

async function expectOk(dav: Dav, response: Response, what: string, okStatuses: number[]) {
  if (!okStatuses.includes(response.status)) throw await failure(dav, response, what);
  await response.body?.cancel();
}

// Listing.

const toObject = (dav: Dav, entry: DavEntry, name: string, internal: string): FileObject => ({
  name,
  size: entry.isDir ? 0 : entry.size,
  isDir: entry.isDir,
  modified: entry.modified ?? dav.storage.modified,
  ...(entry.created ? { created: entry.created } : {}),
  path: internal,
});

async function propfind(dav: Dav, path: string, depth: "0" | "1"): Promise<DavEntry[]> {
  const response = await send(
    dav,
    "PROPFIND",
    urlOf(dav, path, depth === "1"),
    { Depth: depth, "Content-Type": "application/xml; charset=utf-8" },
    PROPFIND_BODY,
  );
  if (response.status !== 207) throw await failure(dav, response, "PROPFIND");
  return parseMultistatus(await response.text());
}

async function listFolder(dav: Dav, dir: string): Promise<FileObject[]> {
  const entries = await propfind(dav, dir, "1");
  const self = dav.addressPath + serverPath(dav, dir);
  const own = entries.find((entry) => entry.path === self || entry.path === serverPath(dav, dir));
  if (own && !own.isDir) throw notAFolder();
  return entries
    .filter((entry) => entry !== own && entry.path !== self)
    .map((entry) => {
      const name = entry.path.slice(entry.path.lastIndexOf("/") + 1);
      return toObject(dav, entry, name, joinActual(serverPath(dav, dir), name));
    });
}

async function getObject(dav: Dav, path: string): Promise<FileObject> {
  const [entry] = await propfind(dav, path, "0");
  if (!entry) throw objectNotFound();
  const name = path === "/" ? "root" : path.slice(path.lastIndexOf("/") + 1);
  return toObject(dav, entry, name, serverPath(dav, path));
}

// Writing.

/** A MOVE or COPY of `path` to `target`, replacing what is there (a COPY takes a folder whole). */
async function transfer(dav: Dav, method: "MOVE" | "COPY", path: string, target: string): Promise<void> {
  const headers: Record<string, string> = { Destination: urlOf(dav, target), Overwrite: "T" };
  if (method === "COPY") headers.Depth = "infinity";
  await expectOk(dav, await send(dav, method, urlOf(dav, path), headers), method, [201, 204]);
}

async function removePath(dav: Dav, path: string): Promise<void> {
  const response = await send(dav, "DELETE", urlOf(dav, path));
  if (response.status === 404) return void (await response.body?.cancel());
  await expectOk(dav, response, "DELETE", [200, 204]);
}

async function putFile(dav: Dav, path: string, upload: Upload): Promise<void> {
  const response = await send(
    dav,
    "PUT",
    urlOf(dav, path),
    { "Content-Type": upload.contentType || "application/octet-stream", "Content-Length": String(upload.size) },
    withLength(upload.body, upload.size),
    upload.signal,
  );
  await expectOk(dav, response, "PUT", [200, 201, 204]);
}

/** Base64 of UTF-8 text (btoa alone takes Latin-1 only). */
export function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}
