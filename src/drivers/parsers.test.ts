// The upstream formats the drivers parse, in the shapes real servers send: WebDAV multistatus
// (Apache mod_dav, nginx, Nextcloud, webdav-server) and FTP LIST lines (vsftpd, ProFTPD, Pure-FTPd).
import { describe, expect, it } from "vitest";
import { parseListLine } from "./ftp-files.ts";
import { parseMultistatus } from "./webdav-files.ts";

describe("WebDAV multistatus", () => {
  it("reads Apache mod_dav's lp1: prefixes, a collection and a file with an encoded href", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:" xmlns:ns0="DAV:">
<D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
<D:href>/dav/music/</D:href>
<D:propstat><D:prop><lp1:resourcetype><D:collection/></lp1:resourcetype><lp1:getlastmodified>Mon, 12 Jan 2026 08:00:00 GMT</lp1:getlastmodified></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
</D:response>
<D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
<D:href>/dav/music/Caf%C3%A9%20%26%20Bar.mp3</D:href>
<D:propstat><D:prop><lp1:resourcetype/><lp1:getcontentlength>1234</lp1:getcontentlength><lp1:getlastmodified>Tue, 13 Jan 2026 09:30:00 GMT</lp1:getlastmodified></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
<D:propstat><D:prop><D:displayname/></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>
</D:response>
</D:multistatus>`;
    expect(parseMultistatus(xml)).toEqual([
      { path: "/dav/music", isDir: true, size: 0, modified: new Date("2026-01-12T08:00:00Z"), created: null },
      {
        path: "/dav/music/Café & Bar.mp3",
        isDir: false,
        size: 1234,
        modified: new Date("2026-01-13T09:30:00Z"),
        created: null,
      },
    ]);
  });

  it("reads nginx's and Nextcloud's lower-case d: prefixes, absolute hrefs and entities", () => {
    const xml = `<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:response><d:href>https://cloud.example/remote.php/dav/files/me/a%20%26amp%3B%20b.txt</d:href><d:propstat><d:prop><d:getcontentlength>5</d:getcontentlength><d:resourcetype/><d:creationdate>2026-01-01T00:00:00Z</d:creationdate></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>`;
    expect(parseMultistatus(xml)).toEqual([
      {
        path: "/remote.php/dav/files/me/a &amp; b.txt",
        isDir: false,
        size: 5,
        modified: null,
        created: new Date("2026-01-01T00:00:00Z"),
      },
    ]);
  });

  it("reads responses without a prefix, and ignores properties of a non-200 propstat", () => {
    const xml = `<multistatus xmlns="DAV:"><response><href>/x/</href><propstat><prop><resourcetype><collection/></resourcetype></prop><status>HTTP/1.1 200 OK</status></propstat></response><response><href>/x/y</href><propstat><prop><getcontentlength>9</getcontentlength></prop><status>HTTP/1.1 403 Forbidden</status></propstat></response></multistatus>`;
    expect(parseMultistatus(xml).map((e) => [e.path, e.isDir, e.size])).toEqual([
      ["/x", true, 0],
      ["/x/y", false, 0],
    ]);
  });
});

describe("FTP LIST lines", () => {
  const now = new Date("2026-11-25T12:00:00Z");
  it.each([
    [
      "-rw-r--r--    1 1000     1000         4096 Nov 24 18:05 report final.pdf",
      { name: "report final.pdf", isDir: false, size: 4096, modified: new Date("2026-11-24T18:05:00Z") },
    ],
    [
      "drwxr-xr-x    2 ftp      ftp          4096 Mar  3  2024 archive",
      { name: "archive", isDir: true, size: 4096, modified: new Date("2024-03-03T00:00:00Z") },
    ],
    [
      "-rw-r--r--   1 owner group   10 Dec 31 23:59 last-year.txt",
      { name: "last-year.txt", isDir: false, size: 10, modified: new Date("2025-12-31T23:59:00Z") },
    ],
    [
      "lrwxrwxrwx    1 0        0              11 Jan 05 10:00 current -> releases/v2",
      { name: "current", isDir: false, size: 11, modified: new Date("2026-01-05T10:00:00Z") },
    ],
    [
      "-rw-rw-r--+   1 u g 3 Feb  1 01:02 é ü.txt",
      { name: "é ü.txt", isDir: false, size: 3, modified: new Date("2026-02-01T01:02:00Z") },
    ],
  ])("%s", (line, expected) => {
    expect(parseListLine(line, now)).toEqual(expected);
  });

  it("skips . and .., totals and lines it cannot read", () => {
    for (const line of [
      "drwxr-xr-x 2 u g 4096 Nov 24 18:05 .",
      "drwxr-xr-x 2 u g 4096 Nov 24 18:05 ..",
      "total 12",
      "11-24-26  06:05PM       <DIR>          dos",
    ]) {
      expect(parseListLine(line, now), line).toBeNull();
    }
  });
});
