// The header rules of the WebDAV methods that change or list (RFC 4918 §9), each read back from
// the upstream: If-None-Match: * on PUT, the Depth a DELETE of a folder takes, the Depth a
// PROPFIND without one means, and a COPY or MOVE of a folder into itself.
import { beforeAll, describe, expect, it } from "vitest";
import { dav, hrefs } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { mountS3Root, s3Keys, s3Text } from "../../../test/support/upstreams.ts";
import { signIn } from "../../../test/support/workerd-client.ts";

const ROOT = "davmethods";

beforeAll(async () => {
  const admin = await signIn("dav-methods");
  await sql("DELETE FROM storages");
  await mountS3Root(admin, ROOT);
});

describe("PUT with If-None-Match: *", () => {
  it("never overwrites a file that exists (412), and creates one that does not", async () => {
    expect((await dav("PUT", "/s3/once.txt", { body: "first", headers: { "If-None-Match": "*" } })).status).toBe(201);
    const again = await dav("PUT", "/s3/once.txt", { body: "second", headers: { "If-None-Match": "*" } });
    expect(again.status).toBe(412);
    expect(await again.text()).toBe("the file exists\n");
    expect(await s3Text(`${ROOT}/once.txt`)).toBe("first");
  });
});

describe("DELETE of a folder", () => {
  it("with Depth 0 or 1 is refused (400) and deletes nothing; with Depth infinity it goes", async () => {
    expect((await dav("MKCOL", "/s3/shallow")).status).toBe(201);
    expect((await dav("PUT", "/s3/shallow/in.txt", { body: "in" })).status).toBe(201);
    for (const depth of ["0", "1"]) {
      const refused = await dav("DELETE", "/s3/shallow", { headers: { Depth: depth } });
      expect(refused.status, `Depth ${depth}`).toBe(400);
      expect(await refused.text()).toBe("DELETE of a folder takes Depth: infinity\n");
      expect(await s3Text(`${ROOT}/shallow/in.txt`)).toBe("in");
    }
    expect((await dav("DELETE", "/s3/shallow", { headers: { Depth: "infinity" } })).status).toBe(204);
    expect(await s3Keys(`${ROOT}/shallow/`)).toEqual([]);
  });
});

describe("PROPFIND without a Depth header", () => {
  it("answers the folder and its members, as Depth 1", async () => {
    expect((await dav("MKCOL", "/s3/listed")).status).toBe(201);
    expect((await dav("MKCOL", "/s3/listed/inner")).status).toBe(201);
    expect((await dav("PUT", "/s3/listed/inner/deep.txt", { body: "d" })).status).toBe(201);
    expect((await dav("PUT", "/s3/listed/top.txt", { body: "t" })).status).toBe(201);
    const listed = await dav("PROPFIND", "/s3/listed/");
    expect(listed.status).toBe(207);
    expect(hrefs(await listed.text())).toEqual(["/dav/s3/listed/", "/dav/s3/listed/inner/", "/dav/s3/listed/top.txt"]);
  });
});

describe("COPY and MOVE of a folder into itself", () => {
  beforeAll(async () => {
    expect((await dav("MKCOL", "/s3/self")).status).toBe(201);
    expect((await dav("PUT", "/s3/self/in.txt", { body: "in" })).status).toBe(201);
  });
  const keys = () => s3Keys(`${ROOT}/self/`);

  it.each([
    ["MOVE", "infinity"],
    ["COPY", "infinity"],
    ["COPY", "0"],
  ] as const)(
    "%s with Depth %s into a sub-folder of itself is refused (403) and changes nothing upstream",
    async (method, depth) => {
      const before = await keys();
      const refused = await dav(method, "/s3/self", { headers: { Destination: "/dav/s3/self/inner", Depth: depth } });
      expect(refused.status).toBe(403);
      expect(await refused.text()).toBe(`cannot ${method.toLowerCase()} a folder into itself\n`);
      expect(await keys()).toEqual(before);
      expect(await s3Text(`${ROOT}/self/in.txt`)).toBe("in");
    },
  );
});
