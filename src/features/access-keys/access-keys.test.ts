// Access key routes on their own (docs/decisions.md D16): app passwords read as keys of the user's
// whole reach and WebDAV use, someone else's key never touched, the admin's list and revocation,
// bad bodies refused; and the page of our own, served without the database.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { appPasswords, users } from "../../db/schema.ts";
import { getAs, login, signInAdmin } from "../../../test/support/auth.ts";
import { api, createUnitFixture, readEnvelope, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let alice: string;
let bob: string;
let admin: string;
beforeAll(async () => {
  fixture = await createUnitFixture();
  for (const name of ["alice", "bob"]) {
    await fixture.db.insert(users).values({
      username: name,
      passwordHash: await hashStaticHash(await staticHash(`${name} pw`)),
      roleIds: [],
      basePath: "/home",
    });
  }
  alice = (await login(fixture, { username: "alice", password: "alice pw" })).data!.token;
  bob = (await login(fixture, { username: "bob", password: "bob pw" })).data!.token;
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture.close());

const { post } = api(() => fixture);

describe("access keys and app passwords", () => {
  it("lists an app password as a key of the whole reach, all rights and WebDAV use", async () => {
    const reply = await post("/api/me/app_password/create", { name: "laptop" }, alice);
    expect(reply.code).toBe(200);
    const made = reply as { data: { id: number; created: string; password: string } };
    const listed = await getAs(fixture, "/api/me/access_key/list", alice);
    expect(listed.data).toEqual([
      {
        id: made.data.id,
        name: "laptop",
        path: "/",
        permission: -1,
        expires_at: 0,
        usage: ["webdav"],
        access_key_id: null,
        created: made.data.created,
        last_used: null,
      },
    ]);
    // As an API token it is refused: WebDAV use only.
    expect(await getAs(fixture, "/api/me", made.data.password)).toEqual({
      code: 403,
      message: "this access key is not for the API",
      data: null,
    });
  });

  it("never revokes someone else's key; the admin lists and revokes anyone's", async () => {
    const [mine] = await fixture.db
      .select()
      .from(appPasswords)
      .innerJoin(users, eq(users.id, appPasswords.userId))
      .where(eq(users.username, "alice"));
    expect(await post("/api/me/access_key/delete", { id: mine!.app_passwords.id }, bob)).toEqual({
      code: 404,
      message: "access key not found",
      data: null,
    });
    for (const body of [{}, { id: 0 }, { id: "1" }])
      expect((await post("/api/me/access_key/delete", body, alice)).code).toBe(400);
    const page = await getAs(fixture, "/api/admin/access_key/list", admin);
    expect(page.data).toMatchObject({ total: 1, content: [{ username: "alice", name: "laptop", path: "/" }] });
    expect(await getAs(fixture, "/api/admin/access_key/list", alice)).toMatchObject({ code: 403 });
    expect(await post("/api/admin/access_key/delete", { id: mine!.app_passwords.id }, admin)).toMatchObject({
      code: 200,
    });
    expect((await getAs(fixture, "/api/me/access_key/list", alice)).data).toEqual([]);
  });

  it("refuses bad bodies and the guest", async () => {
    for (const body of [
      { name: "" },
      { name: "x", usage: ["ftp"] },
      { name: "x", usage: [] },
      { name: "x", permission: -1 },
      { name: "x", expires_at: -5 },
    ])
      expect((await post("/api/me/access_key/create", body, alice)).code, JSON.stringify(body)).toBe(400);
    expect(await fixture.db.select().from(appPasswords)).toEqual([]);
  });
});

describe("the page of our own", () => {
  it("is served at /@keys, alone: no database, nothing from elsewhere", async () => {
    const reply = await fixture.request("/@keys");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await reply.text();
    expect(html).toContain("/api/me/access_key/create");
    expect(html).toContain('localStorage.getItem("token")');
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    expect(html).not.toContain("innerHTML");
    expect((await fixture.request("/@keys", { method: "HEAD" })).status).toBe(200);
  });

  it("is page.html as written, from the assets folder (not the bundle)", async () => {
    const written = readFileSync(join(import.meta.dirname, "page.html"), "utf8");
    expect(await (await fixture.request("/@keys")).text()).toBe(written);
  });

  it("is a misconfiguration, not a crash, when the assets folder lacks it", async () => {
    // A Fetcher with only `fetch`, the one member the app calls.
    const emptyAssets = { fetch: async () => new Response("not found", { status: 404 }) } as unknown as Fetcher;
    for (const env of [{ ASSETS: emptyAssets }, { ASSETS: undefined }]) {
      expect(await readEnvelope(await fixture.request("/@keys", {}, env))).toEqual({
        code: 500,
        message: "server misconfigured: the access keys page is not in the assets folder (npm run webui puts it there)",
        data: null,
      });
    }
  });
});
