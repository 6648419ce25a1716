// The refusals RFC 4918 names, at /dav inside workerd against the real upstreams: bad Depth,
// malformed XML and DOCTYPEs, unknown and live properties, a Destination elsewhere, onto or into
// itself, a bad Overwrite, MKCOL with a body, PUT without a length; never a 500.
import { beforeAll, describe, expect, it } from "vitest";
import { dav } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { setUpDav } from "./workerd-fixture.ts";

beforeAll(async () => {
  await setUpDav("dav-refusals");
});

describe("bad input gets the status RFC 4918 names, never 500", () => {
  it("PROPFIND: Depth infinity, a bad Depth, malformed XML, a DOCTYPE, an unknown property", async () => {
    const infinite = await dav("PROPFIND", "/s3/", { headers: { Depth: "infinity" } });
    expect(infinite.status).toBe(403);
    expect(await infinite.text()).toContain("<D:propfind-finite-depth/>");
    expect((await dav("PROPFIND", "/s3/", { headers: { Depth: "99" } })).status).toBe(400);
    expect((await dav("PROPFIND", "/s3/", { headers: { Depth: "0" }, body: "<D:propfind xmlns:D=" })).status).toBe(400);
    expect(
      (
        await dav("PROPFIND", "/s3/", {
          headers: { Depth: "0" },
          body: '<!DOCTYPE x [<!ENTITY e "e">]><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>',
        })
      ).status,
    ).toBe(400);
    const unknown = await dav("PROPFIND", "/s3/", {
      headers: { Depth: "0" },
      body: '<D:propfind xmlns:D="DAV:"><D:prop><x:color xmlns:x="urn:x"/><D:resourcetype/></D:prop></D:propfind>',
    });
    expect(unknown.status).toBe(207);
    const text = await unknown.text();
    expect(text).toMatch(
      /<D:resourcetype><D:collection\/><\/D:resourcetype><\/D:prop><D:status>HTTP\/1.1 200 OK<\/D:status>/,
    );
    expect(text).toMatch(/<color xmlns="urn:x"\/><\/D:prop><D:status>HTTP\/1.1 404 Not Found<\/D:status>/);
    expect((await dav("PROPFIND", "/s3/nowhere/", { headers: { Depth: "0" } })).status).toBe(404);
    // MAX_BODY_BYTES (1 MiB in wrangler.toml) holds for XML bodies, declared or streamed.
    const huge = `<D:propfind xmlns:D="DAV:"><D:prop>${"<D:displayname/>".repeat(80_000)}</D:prop></D:propfind>`;
    expect((await dav("PROPFIND", "/s3/", { headers: { Depth: "0" }, body: huge })).status).toBe(413);
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(huge));
        controller.close();
      },
    });
    expect((await dav("PROPPATCH", "/s3/", { body: streamed })).status).toBe(413);
  });

  it("PROPPATCH keeps dead properties, refuses live ones whole, and they follow a MOVE", async () => {
    expect((await dav("PUT", "/s3/props.txt", { body: "p" })).status).toBe(201);
    const set = await dav("PROPPATCH", "/s3/props.txt", {
      body: '<D:propertyupdate xmlns:D="DAV:" xmlns:z="urn:z"><D:set><D:prop><z:tag>blue &amp; green</z:tag></D:prop></D:set></D:propertyupdate>',
    });
    expect(set.status).toBe(207);
    const live = await dav("PROPPATCH", "/s3/props.txt", {
      body: '<D:propertyupdate xmlns:D="DAV:" xmlns:z="urn:z"><D:set><D:prop><D:getetag>x</D:getetag><z:other>1</z:other></D:prop></D:set></D:propertyupdate>',
    });
    const refused = await live.text();
    expect(refused).toContain("HTTP/1.1 403 Forbidden");
    expect(refused).toContain("HTTP/1.1 424 Failed Dependency");
    expect((await dav("MOVE", "/s3/props.txt", { headers: { Destination: "/dav/s3/props-moved.txt" } })).status).toBe(
      201,
    );
    const read = await (
      await dav("PROPFIND", "/s3/props-moved.txt", {
        headers: { Depth: "0" },
        body: '<D:propfind xmlns:D="DAV:"><D:prop><q:tag xmlns:q="urn:z"/><q:other xmlns:q="urn:z"/></D:prop></D:propfind>',
      })
    ).text();
    expect(read).toContain('<tag xmlns="urn:z">blue &amp; green</tag>');
    expect(read).toMatch(/<other xmlns="urn:z"\/><\/D:prop><D:status>HTTP\/1.1 404/);
    // The workerd suites share one database: only this test's paths are counted.
    const own = "SELECT path FROM dav_properties WHERE path LIKE '/s3/props%'";
    expect(await sql(own)).toEqual([["/s3/props-moved.txt"]]);
    expect((await dav("DELETE", "/s3/props-moved.txt")).status).toBe(204);
    expect(await sql(own)).toEqual([]);
  });

  it("COPY and MOVE: a Destination elsewhere, onto itself, into itself, with a bad Overwrite; MKCOL with a body; PUT without a length", async () => {
    expect((await dav("MKCOL", "/s3/moving")).status).toBe(201);
    const move = (destination: string, headers: Record<string, string> = {}) =>
      dav("MOVE", "/s3/moving", { headers: { Destination: destination, ...headers } });
    expect((await move("http://elsewhere.test/dav/s3/x")).status).toBe(502);
    expect((await move("http://gatehouse.test/api/fs/list")).status).toBe(502);
    expect((await move("/dav/s3/moving")).status).toBe(403);
    expect((await move("/dav/s3/moving/inner")).status).toBe(403);
    expect((await move("/dav/s3/nowhere/inner")).status).toBe(409);
    expect((await move("/dav/s3/x", { Overwrite: "maybe" })).status).toBe(400);
    expect((await dav("MOVE", "/s3/moving")).status).toBe(400);
    expect((await dav("MKCOL", "/s3/with-body", { body: "<x/>" })).status).toBe(415);
    const unsized = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("x"));
        controller.close();
      },
    });
    expect((await dav("PUT", "/s3/unsized.txt", { body: unsized })).status).toBe(411);
    expect((await dav("DELETE", "/s3")).status).toBe(403);
    expect((await dav("PROPPATCH", "/s3/moving", { body: "<D:propertyupdate" })).status).toBe(400);
    expect(
      (
        await dav("LOCK", "/s3/moving", {
          body: '<D:lockinfo xmlns:D="DAV:"><D:locktype><D:write/></D:locktype></D:lockinfo>',
          headers: { Depth: "1" },
        })
      ).status,
    ).toBe(400);
    expect((await dav("PUT", "/s3/moving/bad", { body: "x", headers: { If: "(<unclosed" } })).status).toBe(400);
    expect((await dav("DELETE", "/s3/moving")).status).toBe(204);
  });
});
