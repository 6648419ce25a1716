import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashStaticHash, staticHash } from "../../auth/password.ts";
import { settings, sshPublicKeys, users } from "../../db/schema.ts";
import { MAX_KEYS_PER_USER } from "./routes.ts";
import { getAs, login, postJson, signInAdmin } from "../../../test/support/auth.ts";
import { encode, generateTestKeys, wireFields, type TestKey } from "../../../test/support/ssh-keys.ts";
import { createUnitFixture, readEnvelope, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
let keys: TestKey[];
let dsa: string;
let rsa768Blob: string;
let alice: string;
let bob: string;
let aliceId: number;
beforeAll(async () => {
  ({ keys, dsa, rsa768Blob } = generateTestKeys());
  fixture = await createUnitFixture();
  for (const name of ["alice", "bob"]) {
    await fixture.db
      .insert(users)
      .values({ username: name, passwordHash: await hashStaticHash(await staticHash(`${name} pw`)), roleIds: [] });
  }
  aliceId = (await fixture.db.select().from(users).where(eq(users.username, "alice")))[0]!.id;
  alice = (await login(fixture, { username: "alice", password: "alice pw" })).data!.token;
  bob = (await login(fixture, { username: "bob", password: "bob pw" })).data!.token;
});
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(sshPublicKeys);
});

const addKey = async (token: string, title: string, key: string) =>
  readEnvelope(await postJson(fixture, "/api/me/sshkey/add", { title, key }, { Authorization: token }));
const remove = async (token: string, query: string) =>
  readEnvelope(
    await fixture.request(`/api/me/sshkey/delete${query}`, { method: "POST", headers: { Authorization: token } }),
  );

describe("POST /api/me/sshkey/add and GET /api/me/sshkey/list", () => {
  it("accepts every supported key type and lists the fingerprint ssh-keygen prints, never the key", async () => {
    for (const key of keys)
      expect(await addKey(alice, key.name, key.line), key.name).toEqual({ code: 200, message: "success", data: null });
    const listed = await getAs(fixture, "/api/me/sshkey/list", alice);
    expect(listed.code).toBe(200);
    expect(listed.data.total).toBe(keys.length);
    expect(listed.data.content.map((k: { title: string; fingerprint: string }) => [k.title, k.fingerprint])).toEqual(
      keys.map((k) => [k.name, k.fingerprint]),
    );
    const first = listed.data.content[0];
    expect(Object.keys(first).sort()).toEqual(["added_time", "fingerprint", "id", "last_used_time", "title"]);
    expect(first.added_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
    for (const key of keys) expect(JSON.stringify(listed)).not.toContain(key.line.split(" ")[1]!.slice(0, 40));
  });

  it("accepts a key line with authorized_keys options in front", async () => {
    const key = keys[0]!;
    expect(
      (await addKey(alice, "restricted", `from="10.0.0.1,192.168.0.0/16",command="echo \\"hi there\\"" ${key.line}`))
        .code,
    ).toBe(200);
    const listed = await getAs(fixture, "/api/me/sshkey/list", alice);
    expect(listed.data.content[0].fingerprint).toBe(key.fingerprint);
  });

  it("pages by id", async () => {
    for (const key of keys.slice(0, 5)) await addKey(alice, key.name, key.line);
    const page = await getAs(fixture, "/api/me/sshkey/list?page=2&per_page=2", alice);
    expect(page.data.total).toBe(5);
    expect(page.data.content.map((k: { title: string }) => k.title)).toEqual([keys[2]!.name, keys[3]!.name]);
  });

  it("shows each user only their own keys", async () => {
    await addKey(alice, "mine", keys[0]!.line);
    expect((await getAs(fixture, "/api/me/sshkey/list", bob)).data).toEqual({ content: [], total: 0 });
  });
});

describe("keys that are refused", () => {
  const ed25519 = () => keys.find((k) => k.name === "ed25519")!.line;
  it.each([
    [
      "a type that does not match the key data",
      () => ed25519().replace("ssh-ed25519", "ssh-rsa"),
      "provided key invalid: the key says ssh-rsa but its data is a ssh-ed25519 key",
    ],
    // "ssh-ed25519 " and 48 base64 characters: whole base64, but the blob stops mid-field.
    ["a truncated key", () => ed25519().slice(0, 60), "provided key invalid: the key data ends inside its public key"],
    ["broken base64", () => ed25519().slice(0, 50), "provided key invalid: the key data is not valid base64"],
    [
      "text that is not a key",
      () => "hello world",
      "provided key invalid: expected one public key line: <type> <base64> [comment]",
    ],
    [
      "two keys at once",
      () => `${ed25519()}\n${ed25519()}`,
      "provided key invalid: expected one public key line: <type> <base64> [comment]",
    ],
    ["a DSA key", () => dsa, /^provided key invalid: unsupported key type ssh-dss; accepted: ssh-ed25519, /],
    [
      "an RSA key under 1024 bits",
      () => `ssh-rsa ${rsa768Blob}`,
      "provided key invalid: the RSA key has 768 bits; at least 1024 are required",
    ],
    [
      "a key with trailing bytes",
      () => `ssh-ed25519 ${encode([...wireFields(ed25519()), Buffer.from("x")]).toString("base64")}`,
      "provided key invalid: the key data has trailing bytes",
    ],
    [
      "an ECDSA point that is not on the curve",
      () => {
        const [type, curve, point] = wireFields(keys.find((k) => k.name === "ecdsa-256")!.line);
        const bent = Buffer.from(point!);
        bent[64] ^= 1;
        return `ecdsa-sha2-nistp256 ${encode([type!, curve!, bent]).toString("base64")}`;
      },
      "provided key invalid: the nistp256 public point is not on the curve",
    ],
    ["an oversized key", () => `ssh-rsa ${"A".repeat(20_000)}`, /^key: /],
  ])("refuses %s with 400 and saves nothing", async (_, key, message) => {
    const body = await addKey(alice, "bad", key());
    expect(body.code).toBe(400);
    if (typeof message === "string") expect(body.message).toBe(message);
    else expect(body.message).toMatch(message);
    expect(await fixture.db.select().from(sshPublicKeys)).toEqual([]);
  });

  it("refuses a second key with the same title for the same user, but not for another user", async () => {
    await addKey(alice, "laptop", keys[0]!.line);
    expect(await addKey(alice, "laptop", keys[1]!.line)).toEqual({
      code: 400,
      message: "key with the same title already exists",
      data: null,
    });
    expect((await addKey(bob, "laptop", keys[1]!.line)).code).toBe(200);
  });

  it("stops at the per-user limit", async () => {
    const rows = Array.from({ length: MAX_KEYS_PER_USER }, (_, i) => ({
      userId: aliceId,
      title: `k${i}`,
      fingerprint: "f",
      keyText: "k",
      addedAt: 1,
      lastUsedAt: 1,
    }));
    await fixture.db.insert(sshPublicKeys).values(rows);
    expect(await addKey(alice, "one more", keys[0]!.line)).toEqual({
      code: 400,
      message: `a user can have at most ${MAX_KEYS_PER_USER} keys`,
      data: null,
    });
  });

  it.each([
    ["a missing title", { key: "x" }, /^title: /],
    ["an empty title", { title: "   ", key: "x" }, /^title: /],
    ["a numeric key", { title: "t", key: 5 }, /^key: /],
  ])("answers %s with 400 naming the field", async (_, body, message) => {
    const envelope = await readEnvelope(await postJson(fixture, "/api/me/sshkey/add", body, { Authorization: alice }));
    expect(envelope.code).toBe(400);
    expect(envelope.message).toMatch(message);
  });
});

describe("POST /api/me/sshkey/delete", () => {
  it("deletes the caller's key", async () => {
    await addKey(alice, "gone soon", keys[0]!.line);
    const [row] = await fixture.db.select().from(sshPublicKeys);
    expect(await remove(alice, `?id=${row!.id}`)).toEqual({ code: 200, message: "success", data: null });
    expect(await fixture.db.select().from(sshPublicKeys)).toEqual([]);
  });

  it("answers someone else's key like a missing one, and keeps it", async () => {
    await addKey(alice, "alice's", keys[0]!.line);
    const [row] = await fixture.db.select().from(sshPublicKeys);
    expect(await remove(bob, `?id=${row!.id}`)).toEqual({ code: 404, message: "failed to get public key", data: null });
    expect(await remove(bob, "?id=999999")).toEqual({ code: 404, message: "failed to get public key", data: null });
    expect(await fixture.db.select().from(sshPublicKeys)).toHaveLength(1);
  });

  it.each(["", "?id=", "?id=0", "?id=-3", "?id=abc", "?id=1.5"])("refuses the id in %j with 400", async (query) => {
    const body = await remove(alice, query);
    expect(body.code).toBe(400);
    expect(body.message).toMatch(/^id: /);
  });
});

describe("who may use the key routes", () => {
  it("refuses the guest: 401 while disabled, 401 user invalid once enabled", async () => {
    expect((await getAs(fixture, "/api/me/sshkey/list", "")).message).toBe("Guest user is disabled, login please");
    await fixture.db.update(users).set({ disabled: false }).where(eq(users.username, "guest"));
    const list = await getAs(fixture, "/api/me/sshkey/list", "");
    const added = await addKey("", "guest key", keys[0]!.line);
    // Refused before its body is read: an invalid body gets the same answer.
    const invalid = await readEnvelope(await postJson(fixture, "/api/me/sshkey/add", {}, {}));
    const profile = await readEnvelope(await postJson(fixture, "/api/me/update", { username: 5 }, {}));
    const verify = await readEnvelope(await postJson(fixture, "/api/auth/2fa/verify", {}, {}));
    await fixture.db.update(users).set({ disabled: true }).where(eq(users.username, "guest"));
    expect(list).toEqual({ code: 401, message: "user invalid", data: null });
    expect(added).toEqual({ code: 401, message: "user invalid", data: null });
    expect(invalid).toEqual({ code: 401, message: "user invalid", data: null });
    expect(profile).toEqual({ code: 403, message: "Guest user can not update profile", data: null });
    expect(verify).toEqual({ code: 403, message: "Guest user can not generate 2FA code", data: null });
  });

  it("lets the permanent token manage the admin's keys", async () => {
    const [{ value }] = (await fixture.db
      .select({ value: settings.value })
      .from(settings)
      .where(eq(settings.key, "token"))) as [{ value: string }];
    expect((await addKey(value, "ops", keys[0]!.line)).code).toBe(200);
    expect((await getAs(fixture, "/api/me/sshkey/list", value)).data.total).toBe(1);
  });
});

describe("admin key routes", () => {
  let admin: string;
  beforeAll(async () => {
    admin = await signInAdmin(fixture);
  });

  it("lists and deletes any user's keys", async () => {
    await addKey(alice, "alice's", keys[0]!.line);
    const listed = await getAs(fixture, `/api/admin/user/sshkey/list?uid=${aliceId}`, admin);
    expect(listed.data.total).toBe(1);
    expect(listed.data.content[0].fingerprint).toBe(keys[0]!.fingerprint);
    const id = listed.data.content[0].id;
    const deleted = await readEnvelope(
      await fixture.request(`/api/admin/user/sshkey/delete?id=${id}`, {
        method: "POST",
        headers: { Authorization: admin },
      }),
    );
    expect(deleted).toEqual({ code: 200, message: "success", data: null });
    expect(await fixture.db.select().from(sshPublicKeys)).toEqual([]);
  });

  it("answers a missing user with 404 and a bad uid with 400", async () => {
    expect(await getAs(fixture, "/api/admin/user/sshkey/list?uid=424242", admin)).toEqual({
      code: 404,
      message: "user invalid",
      data: null,
    });
    expect((await getAs(fixture, "/api/admin/user/sshkey/list?uid=x", admin)).code).toBe(400);
    expect(
      (
        await readEnvelope(
          await fixture.request("/api/admin/user/sshkey/delete?id=777", {
            method: "POST",
            headers: { Authorization: admin },
          }),
        )
      ).code,
    ).toBe(404);
  });

  it("refuses a non-admin with 403", async () => {
    expect(await getAs(fixture, `/api/admin/user/sshkey/list?uid=${aliceId}`, alice)).toEqual({
      code: 403,
      message: "You are not an admin",
      data: null,
    });
  });
});
