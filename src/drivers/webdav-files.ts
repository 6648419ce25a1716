// The file side of WebDAV (docs/decisions.md D7; AList v3.58.0 drivers/webdav/driver.go:50):
// PROPFIND Depth 1 lists, Depth 0 looks one object up; downloads are proxied (the upstream needs
// credentials, which never reach the client); writes are PUT with a known length, MKCOL, MOVE, COPY
// and DELETE. Basic auth is sent with every request (one round trip each); Digest is not supported.
import { cleanPath } from "../lib/path.ts";
import { requireText } from "./addition.ts";
import { anySignal, withLength } from "../lib/streams.ts";
import { errorText } from "./failures.ts";
import {
  FileError,
  notAFolder,
  objectNotFound,
  type FileBackend,
  type FileObject,
  type StorageHandle,
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

export function webDavFiles(storage: StorageHandle): FileBackend {
  const { addition } = storage;
  const address = requireText(addition, "address").replace(/\/+$/, "");
  const root = cleanPath(addition.text("root_folder_path"));
  const username = addition.text("username");
  const auth: Record<string, string> =
    username === "" ? {} : { Authorization: `Basic ${base64(`${username}:${addition.text("password")}`)}` };
  const host = (() => {
    try {
      return new URL(address).host;
    } catch {
      return "the WebDAV server";
    }
  })();

  /** The full path on the server of an actual path, and its URL (each segment encoded). */
  const serverPath = (path: string) => cleanPath(`${root}/${path}`);
  const urlOf = (path: string, folder = false) => {
    const encoded = serverPath(path).split("/").map(encodeURIComponent).join("/");
    return `${address}${encoded}${folder && encoded !== "/" && encoded !== "" ? "/" : ""}`;
  };
  /** The server's path prefix (the address may carry one, as /remote.php/dav/files/me). */
  const addressPath = (() => {
    try {
      return decodeURIComponent(new URL(address).pathname).replace(/\/+$/, "");
    } catch {
      return "";
    }
  })();

  async function send(
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
        headers: { ...auth, ...headers },
        body,
        signal: anySignal(storage.signal, signal),
      });
    } catch (error) {
      throw new Error(`cannot reach ${host}: ${errorText(error)}`);
    }
    if (response.status === 401) {
      await response.text().catch(() => "");
      throw new FileError("upstream", `${host} refused the credentials of ${username || "(no user)"} (HTTP 401)`);
    }
    return response;
  }

  async function failure(response: Response, what: string): Promise<Error> {
    await response.text().catch(() => "");
    if (response.status === 404) return objectNotFound();
    return new Error(`${what}: ${host} answered HTTP ${response.status} ${response.statusText}`.trim());
  }

  const toObject = (entry: DavEntry, name: string, internal: string): FileObject => ({
    name,
    size: entry.isDir ? 0 : entry.size,
    isDir: entry.isDir,
    modified: entry.modified ?? storage.modified,
    ...(entry.created ? { created: entry.created } : {}),
    path: internal,
  });

  async function propfind(path: string, depth: "0" | "1"): Promise<DavEntry[]> {
    const response = await send(
      "PROPFIND",
      urlOf(path, depth === "1"),
      { Depth: depth, "Content-Type": "application/xml; charset=utf-8" },
      PROPFIND_BODY,
    );
    if (response.status !== 207) throw await failure(response, "PROPFIND");
    return parseMultistatus(await response.text());
  }

  const joinActual = (dir: string, name: string) => (dir === "/" ? `/${name}` : `${dir}/${name}`);

  async function expectOk(response: Response, what: string, okStatuses: number[]) {
    if (!okStatuses.includes(response.status)) throw await failure(response, what);
    await response.body?.cancel();
  }

  return {
    async list(dir) {
      const entries = await propfind(dir, "1");
      const self = addressPath + serverPath(dir);
      const own = entries.find((entry) => entry.path === self || entry.path === serverPath(dir));
      if (own && !own.isDir) throw notAFolder();
      return entries
        .filter((entry) => entry !== own && entry.path !== self)
        .map((entry) => {
          const name = entry.path.slice(entry.path.lastIndexOf("/") + 1);
          return toObject(entry, name, joinActual(serverPath(dir), name));
        });
    },

    async get(path) {
      const [entry] = await propfind(path, "0");
      if (!entry) throw objectNotFound();
      const name = path === "/" ? "root" : path.slice(path.lastIndexOf("/") + 1);
      return toObject(entry, name, serverPath(path));
    },

    async link(path) {
      return { url: urlOf(path), headers: auth };
    },

    async makeDir(parentDir, name) {
      await expectOk(await send("MKCOL", urlOf(joinActual(parentDir, name), true)), "MKCOL", [201]);
    },

    async rename(path, newName) {
      const target = joinActual(path.slice(0, Math.max(1, path.lastIndexOf("/"))), newName);
      await expectOk(
        await send("MOVE", urlOf(path), { Destination: urlOf(target), Overwrite: "T" }),
        "MOVE",
        [201, 204],
      );
    },

    async move(path, dstDir) {
      const target = joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1));
      await expectOk(
        await send("MOVE", urlOf(path), { Destination: urlOf(target), Overwrite: "T" }),
        "MOVE",
        [201, 204],
      );
    },

    async copy(path, dstDir) {
      const target = joinActual(dstDir, path.slice(path.lastIndexOf("/") + 1));
      await expectOk(
        await send("COPY", urlOf(path), { Destination: urlOf(target), Overwrite: "T", Depth: "infinity" }),
        "COPY",
        [201, 204],
      );
    },

    async remove(path) {
      const response = await send("DELETE", urlOf(path));
      if (response.status === 404) return void (await response.body?.cancel());
      await expectOk(response, "DELETE", [200, 204]);
    },

    partialUploads: true,

    async put(dir, upload) {
      const response = await send(
        "PUT",
        urlOf(joinActual(dir, upload.name)),
        { "Content-Type": upload.contentType || "application/octet-stream", "Content-Length": String(upload.size) },
        withLength(upload.body, upload.size),
        upload.signal,
      );
      await expectOk(response, "PUT", [200, 201, 204]);
    },
  };
}

/** Base64 of UTF-8 text (btoa alone takes Latin-1 only). */
export function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}
