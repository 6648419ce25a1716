// Big and mixed listings over PROPFIND Depth 1, read back as a client reads them: the reply parsed
// as XML, each entry's href, name, size and tag against what /api/fs/list shows of the same
// folder. The 10,000 entries of a generated storage stream in many chunks; the mount's name holds
// a space, so every href carries the folder's escaped part.
import { beforeAll, describe, expect, it } from "vitest";
import { dav } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { callApi, mountStorage, signIn } from "../../../test/support/workerd-client.ts";
import { childDav, elements, isDav, parseXml, type XmlElement } from "./xml.ts";

let admin: string;

beforeAll(async () => {
  admin = await signIn("dav-listing");
  await sql("DELETE FROM storages");
  for (const [mount, files, folders] of [
    ["/wide listing", 10_000, 0],
    ["/mixed", 4, 3],
  ] as const) {
    const made = await mountStorage(admin, mount, "Virtual", {
      num_file: files,
      num_folder: folders,
      min_file_size: 1,
      max_file_size: 4096,
    });
    expect(made.code, made.message).toBe(200);
  }
});

const text = (element: XmlElement | undefined): string =>
  element === undefined
    ? ""
    : element.children.map((child) => (typeof child === "string" ? child : text(child))).join("");

/** Each <D:response> of a multistatus: its href and, by status line, the properties of its propstats. */
function responsesOf(xml: string) {
  const root = parseXml(xml)!;
  expect(isDav(root, "multistatus")).toBe(true);
  return elements(root).map((response) => {
    expect(isDav(response, "response")).toBe(true);
    const propstats = new Map<string, Map<string, XmlElement>>();
    for (const propstat of elements(response).filter((element) => isDav(element, "propstat"))) {
      const props = elements(childDav(propstat, "prop")!);
      propstats.set(
        text(childDav(propstat, "status")),
        new Map(props.map((prop) => [`${prop.ns}${prop.local}`, prop])),
      );
    }
    return { href: text(childDav(response, "href")), propstats };
  });
}

interface Listed {
  name: string;
  size: number;
  is_dir: boolean;
}
/** The whole folder as /api/fs/list shows it, page by page (500 at most a page). */
async function listed(path: string): Promise<Listed[]> {
  const entries: Listed[] = [];
  for (let page = 1; ; page++) {
    const { content } = (await callApi(admin, "/api/fs/list", { path, page, per_page: 500 })).data as {
      content: Listed[] | null;
    };
    if (!content || content.length === 0) return entries;
    entries.push(...content);
    if (content.length < 500) return entries;
  }
}

describe("PROPFIND Depth 1 of a big folder", () => {
  it("lists all 10,000 entries, each href the folder's escaped path and the entry's name", async () => {
    const reply = await dav("PROPFIND", "/wide%20listing/", { headers: { Depth: "1" } });
    expect(reply.status).toBe(207);
    expect(reply.headers.get("Content-Type")).toBe("application/xml; charset=utf-8");
    const [folder, ...members] = responsesOf(await reply.text());
    expect(folder!.href).toBe("/dav/wide%20listing/");
    const expected = await listed("/wide listing");
    expect(expected).toHaveLength(10_000);
    expect(members).toHaveLength(10_000);
    const byName = new Map(expected.map((entry) => [entry.name, entry]));
    const seen = new Set<string>();
    for (const member of members) {
      const props = member.propstats.get("HTTP/1.1 200 OK")!;
      expect([...member.propstats.keys()]).toEqual(["HTTP/1.1 200 OK"]);
      const name = text(props.get("DAV:displayname"));
      const entry = byName.get(name)!;
      expect(entry, name).toBeDefined();
      expect(member.href).toBe(`/dav/wide%20listing/${encodeURIComponent(name)}`);
      expect(text(props.get("DAV:getcontentlength"))).toBe(String(entry.size));
      expect(text(props.get("DAV:getetag"))).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
      expect(elements(props.get("DAV:resourcetype")!)).toEqual([]);
      expect([...props.keys()]).toEqual(
        [
          "resourcetype",
          "displayname",
          "getlastmodified",
          "creationdate",
          "getcontentlength",
          "getcontenttype",
          "getetag",
          "supportedlock",
          "lockdiscovery",
        ].map((local) => `DAV:${local}`),
      );
      seen.add(name);
    }
    expect(seen.size).toBe(10_000);
  }, 60_000);

  it("answers named properties per entry: a folder's missing length and an unknown name under 404", async () => {
    const reply = await dav("PROPFIND", "/mixed/", {
      headers: { Depth: "1" },
      body: `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><x:nope xmlns:x="urn:x"/></D:prop></D:propfind>`,
    });
    expect(reply.status).toBe(207);
    const [, ...members] = responsesOf(await reply.text());
    const expected = await listed("/mixed");
    expect(members.map((member) => member.href)).toEqual(
      expected.map((entry) => `/dav/mixed/${encodeURIComponent(entry.name)}${entry.is_dir ? "/" : ""}`),
    );
    for (const [i, member] of members.entries()) {
      const entry = expected[i]!;
      const found = member.propstats.get("HTTP/1.1 200 OK")!;
      const missing = member.propstats.get("HTTP/1.1 404 Not Found")!;
      expect(elements(found.get("DAV:resourcetype")!).map((child) => child.local)).toEqual(
        entry.is_dir ? ["collection"] : [],
      );
      expect([...found.keys()]).toEqual(
        entry.is_dir ? ["DAV:resourcetype"] : ["DAV:resourcetype", "DAV:getcontentlength"],
      );
      expect([...missing.keys()]).toEqual(entry.is_dir ? ["DAV:getcontentlength", "urn:xnope"] : ["urn:xnope"]);
    }
  });
});
