import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deviceSessions, passkeys, settings, users, webauthnChallenges } from "../../db/schema.ts";
import { getAs, login, postJson, send, signInAdmin, totpCode } from "../../../test/support/auth.ts";
import { FLAG_UP, FLAG_UV, type KeyKind, SoftAuthenticator, type Tamper } from "../../../test/support/passkeys.ts";
import { createUnitFixture, insertUser, type UnitFixture } from "../../../test/support/unit.ts";
import { decodeCbor } from "./cbor.ts";
import {
  BAD_SIGNATURE,
  CHALLENGE_INVALID,
  CHALLENGE_MISMATCH,
  COUNTER_REGRESSED,
  CREDENTIAL_MALFORMED,
  CREDENTIAL_NOT_FOUND,
  CREDENTIAL_TAKEN,
  GUEST_PASSKEYS,
  NEEDS_USER_VERIFICATION,
  ORIGIN_MISMATCH,
  REGISTERED,
  RP_ID_MISMATCH,
  UNKNOWN_CREDENTIAL,
  USER_NOT_PRESENT,
  WEBAUTHN_DISABLED,
  WRONG_CEREMONY,
  WRONG_USER,
} from "./messages.ts";
import { USER_DISABLED } from "../../auth/messages.ts";

/** app.request() resolves paths against http://localhost: the site the tests' browser would be on. */
const ORIGIN = "http://localhost";

let fixture: UnitFixture;
let alice: string;
let bob: string;
let aliceId: number;
beforeAll(async () => {
  fixture = await createUnitFixture();
  aliceId = await insertUser(fixture, "alice", "alice pw");
  await insertUser(fixture, "bob", "bob pw");
  alice = (await login(fixture, { username: "alice", password: "alice pw" })).data!.token;
  bob = (await login(fixture, { username: "bob", password: "bob pw" })).data!.token;
});
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(passkeys);
  await fixture.db.delete(webauthnChallenges);
  await fixture.db.update(users).set({ disabled: false, otpSecret: null });
  await setSetting("webauthn_login_enabled", "true");
  await setSiteUrl("");
});

async function setSetting(key: string, value: string) {
  await fixture.db.update(settings).set({ value }).where(eq(settings.key, key));
}

/** `site_url` is not seeded (the file side reads it too when a row exists, e.g. after an import). */
async function setSiteUrl(value: string) {
  await fixture.db.delete(settings).where(eq(settings.key, "site_url"));
  if (value !== "")
    await fixture.db.insert(settings).values({ key: "site_url", value, type: "string", group: 1, flag: 1 });
}

type Envelope = { code: number; message: string; data: any };
const json = async (response: Response) => (await response.json()) as Envelope;

async function beginRegistration(token: string, headers: Record<string, string> = {}) {
  return getAs(fixture, "/api/authn/webauthn_begin_registration", token, headers);
}
async function finishRegistration(token: string, session: string | undefined, credential: unknown, query = "") {
  return json(
    await postJson(fixture, `/api/authn/webauthn_finish_registration${query}`, JSON.stringify(credential), {
      Authorization: token,
      ...(session === undefined ? {} : { session }),
    }),
  );
}
async function beginLogin(username = "") {
  return json(await fixture.request(`/api/authn/webauthn_begin_login?username=${encodeURIComponent(username)}`));
}
async function finishLogin(session: string | undefined, credential: unknown, username = "") {
  return json(
    await postJson(
      fixture,
      `/api/authn/webauthn_finish_login?username=${encodeURIComponent(username)}`,
      JSON.stringify(credential),
      session === undefined ? {} : { session },
    ),
  );
}

/** A passkey of `token`'s user, registered through the routes. */
async function registered(token: string, kind: KeyKind = "es256") {
  const authenticator = new SoftAuthenticator(kind);
  const begun = await beginRegistration(token);
  expect(begun.code).toBe(200);
  const done = await finishRegistration(
    token,
    begun.data.session,
    authenticator.register(begun.data.options.publicKey, ORIGIN),
  );
  expect(done).toEqual({ code: 200, message: "success", data: REGISTERED });
  return authenticator;
}

/** A sign-in with `authenticator`, begun for `username`, with the assertion tampered as asked. */
async function signInWith(authenticator: SoftAuthenticator, username = "", tamper: Tamper = {}) {
  const begun = await beginLogin(username);
  expect(begun.code).toBe(200);
  return finishLogin(begun.data.session, authenticator.assert(begun.data.options.publicKey, ORIGIN, tamper), username);
}

const sessionsOf = async (userId: number) =>
  fixture.db.select().from(deviceSessions).where(eq(deviceSessions.userId, userId));

describe("webauthn_login_enabled off", () => {
  it("answers OpenList's 403 on every route and writes nothing", async () => {
    const authenticator = await registered(alice);
    await setSetting("webauthn_login_enabled", "false");
    const disabled = { code: 403, message: WEBAUTHN_DISABLED, data: null };
    expect(await beginRegistration(alice)).toEqual(disabled);
    expect(await beginLogin()).toEqual(disabled);
    expect(await beginLogin("alice")).toEqual(disabled);
    expect(
      await finishRegistration(
        alice,
        "x",
        new SoftAuthenticator().register(
          { challenge: "x", rp: { id: "localhost" }, user: { id: "AQAAAAAAAAA" } },
          ORIGIN,
        ),
      ),
    ).toEqual(disabled);
    expect(await finishLogin("x", authenticator.assert({ challenge: "x", rpId: "localhost" }, ORIGIN))).toEqual(
      disabled,
    );
    expect(await getAs(fixture, "/api/authn/getcredentials", alice)).toEqual(disabled);
    expect(
      await json(
        await postJson(fixture, "/api/authn/delete_authn", { id: authenticator.id }, { Authorization: alice }),
      ),
    ).toEqual(disabled);
    expect(await fixture.db.select().from(webauthnChallenges)).toEqual([]);
    expect((await fixture.db.select().from(passkeys)).map((row) => row.credentialId)).toEqual([authenticator.id]);
  });

  it("stops a sign-in begun while it was on", async () => {
    const authenticator = await registered(alice);
    const begun = await beginLogin();
    await setSetting("webauthn_login_enabled", "false");
    expect(await finishLogin(begun.data.session, authenticator.assert(begun.data.options.publicKey, ORIGIN))).toEqual({
      code: 403,
      message: WEBAUTHN_DISABLED,
      data: null,
    });
  });
});

describe("registration", () => {
  it("offers options for a resident key on this host, bound to the caller, and stores the passkey", async () => {
    const begun = await beginRegistration(alice);
    expect(begun.code).toBe(200);
    const options = begun.data.options.publicKey;
    expect(options.rp).toEqual({ id: "localhost", name: "AList" });
    const handle = Buffer.alloc(8);
    handle.writeBigUInt64LE(BigInt(aliceId));
    expect(options.user).toEqual({ id: handle.toString("base64url"), name: "alice", displayName: "alice" });
    expect(options.challenge).toMatch(/^[\w-]{43}$/);
    expect(options.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-7, -8, -257]);
    expect(options.authenticatorSelection.residentKey).toBe("required");
    expect(options.excludeCredentials).toEqual([]);
    // The session is a handle, not the challenge: it is all the client sends back.
    expect(begun.data.session).not.toBe(options.challenge);
    const [row] = await fixture.db.select().from(webauthnChallenges);
    expect(row).toMatchObject({ handle: begun.data.session, ceremony: "registration", userId: aliceId });
    expect(row!.expiresAt - Date.now() / 1000).toBeGreaterThan(290);

    const authenticator = new SoftAuthenticator();
    const done = await finishRegistration(
      alice,
      begun.data.session,
      authenticator.register(options, ORIGIN),
      "?name=laptop",
    );
    expect(done).toEqual({ code: 200, message: "success", data: REGISTERED });
    expect(await fixture.db.select().from(webauthnChallenges)).toEqual([]);

    const listed = await getAs(fixture, "/api/authn/getcredentials", alice);
    expect(listed.code).toBe(200);
    expect(listed.data).toEqual([
      {
        id: authenticator.id,
        fingerprint: "0123456789abcdef0123456789abcdef",
        name: "laptop",
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        last_used_at: null,
      },
    ]);
    expect((await getAs(fixture, "/api/authn/getcredentials", bob)).data).toEqual([]);
    // The next registration excludes it, so the same authenticator is not registered twice.
    expect((await beginRegistration(alice)).data.options.publicKey.excludeCredentials).toEqual([
      { type: "public-key", id: authenticator.id },
    ]);
  });

  it("refuses a credential already registered", async () => {
    const authenticator = await registered(alice);
    const begun = await beginRegistration(bob);
    expect(
      await finishRegistration(bob, begun.data.session, authenticator.register(begun.data.options.publicKey, ORIGIN)),
    ).toMatchObject({
      code: 400,
      message: CREDENTIAL_TAKEN,
    });
  });

  it.each<[string, Tamper, string]>([
    ["another challenge", { challenge: "AAAA" }, CHALLENGE_MISMATCH],
    ["a foreign origin", { origin: "https://evil.example" }, ORIGIN_MISMATCH],
    ["a cross-origin frame", { crossOrigin: true }, ORIGIN_MISMATCH],
    ["another RP ID", { rpId: "evil.example" }, RP_ID_MISMATCH],
    ["no user presence", { flags: FLAG_UV }, USER_NOT_PRESENT],
    ["a sign-in's client data", { type: "webauthn.get" }, WRONG_CEREMONY],
  ])("refuses %s and stores nothing", async (_, tamper, message) => {
    const begun = await beginRegistration(alice);
    const credential = new SoftAuthenticator().register(begun.data.options.publicKey, ORIGIN, tamper);
    expect(await finishRegistration(alice, begun.data.session, credential)).toEqual({ code: 400, message, data: null });
    expect(await fixture.db.select().from(passkeys)).toEqual([]);
    // The challenge is used up by the refused attempt too.
    expect(
      await finishRegistration(
        alice,
        begun.data.session,
        new SoftAuthenticator().register(begun.data.options.publicKey, ORIGIN),
      ),
    ).toMatchObject({ message: CHALLENGE_INVALID });
  });

  it("refuses another user's challenge, a sign-in's, a missing or made-up handle, and an expired one", async () => {
    const ofBob = await beginRegistration(bob);
    const credential = () => new SoftAuthenticator().register(ofBob.data.options.publicKey, ORIGIN);
    expect(await finishRegistration(alice, ofBob.data.session, credential())).toMatchObject({
      code: 400,
      message: CHALLENGE_INVALID,
    });
    const signIn = await beginLogin();
    expect(await finishRegistration(alice, signIn.data.session, credential())).toMatchObject({
      code: 400,
      message: CHALLENGE_INVALID,
    });
    expect(await finishRegistration(alice, undefined, credential())).toMatchObject({
      code: 400,
      message: CHALLENGE_INVALID,
    });
    expect(await finishRegistration(alice, "made-up", credential())).toMatchObject({
      code: 400,
      message: CHALLENGE_INVALID,
    });
    const late = await beginRegistration(alice);
    await fixture.db.update(webauthnChallenges).set({ expiresAt: Math.floor(Date.now() / 1000) - 1 });
    expect(
      await finishRegistration(
        alice,
        late.data.session,
        new SoftAuthenticator().register(late.data.options.publicKey, ORIGIN),
      ),
    ).toMatchObject({ code: 400, message: CHALLENGE_INVALID });
    expect(await fixture.db.select().from(passkeys)).toEqual([]);
  });

  it("refuses the guest", async () => {
    const guest = { code: 403, message: GUEST_PASSKEYS, data: null };
    expect(await json(await fixture.request("/api/authn/webauthn_begin_registration"))).toEqual(guest);
    expect(await json(await fixture.request("/api/authn/getcredentials"))).toEqual(guest);
  });
});

describe("sign-in", () => {
  it.each<KeyKind>(["es256", "rs256", "ed25519"])(
    "signs in with a %s passkey, by name and discoverable, as a password sign-in does",
    async (kind) => {
      const authenticator = await registered(alice, kind);
      const before = (await sessionsOf(aliceId)).length;
      for (const username of ["alice", ""]) {
        const begun = await beginLogin(username);
        const allowed = begun.data.options.publicKey.allowCredentials;
        expect(allowed).toEqual(username ? [{ type: "public-key", id: authenticator.id }] : []);
        expect(begun.data.options.publicKey.rpId).toBe("localhost");
        const reply = await finishLogin(
          begun.data.session,
          authenticator.assert(begun.data.options.publicKey, ORIGIN),
          username,
        );
        expect(reply.code).toBe(200);
        expect(reply.data).toEqual({ token: expect.any(String), device_key: expect.stringMatching(/^[0-9a-f]{32}$/) });
        const me = await getAs(fixture, "/api/me", reply.data.token);
        expect(me.data.username).toBe("alice");
      }
      expect((await sessionsOf(aliceId)).length).toBe(before + 2);
      const [row] = await fixture.db.select().from(passkeys);
      expect(row!.signCount).toBe(2);
      expect((await getAs(fixture, "/api/authn/getcredentials", alice)).data[0].last_used_at).toMatch(/^\d{4}-/);
    },
  );

  it("keeps one device session for a Client-Id, as password sign-in does", async () => {
    const authenticator = await registered(alice);
    const tokens = new Set<string>();
    const keys = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const begun = await beginLogin();
      const reply = await json(
        await postJson(
          fixture,
          "/api/authn/webauthn_finish_login?username=",
          JSON.stringify(authenticator.assert(begun.data.options.publicKey, ORIGIN)),
          {
            session: begun.data.session,
            "Client-Id": "phone",
          },
        ),
      );
      tokens.add(reply.data.token);
      keys.add(reply.data.device_key);
    }
    expect(tokens.size).toBe(2);
    expect(keys.size).toBe(1);
  });

  it.each<[string, Tamper, string]>([
    ["another challenge", { challenge: "AAAA" }, CHALLENGE_MISMATCH],
    ["a foreign origin", { origin: "https://evil.example" }, ORIGIN_MISMATCH],
    ["a cross-origin frame", { crossOrigin: true }, ORIGIN_MISMATCH],
    ["another RP ID", { rpId: "evil.example" }, RP_ID_MISMATCH],
    ["no user presence", { flags: FLAG_UV }, USER_NOT_PRESENT],
    ["a registration's client data", { type: "webauthn.create" }, WRONG_CEREMONY],
    ["a signature over other data", { corrupt: true }, BAD_SIGNATURE],
    ["a counter that does not grow", { counter: 1 }, COUNTER_REGRESSED],
    ["another user's handle", { userHandle: "AQAAAAAAAAA" }, WRONG_USER],
    ["no user handle when discoverable", { userHandle: null }, CREDENTIAL_MALFORMED],
  ])("refuses %s: no token, no session, the counter unchanged", async (_, tamper, message) => {
    const authenticator = await registered(alice);
    expect((await signInWith(authenticator)).code).toBe(200); // the counter is now 1
    const sessions = (await sessionsOf(aliceId)).length;
    expect(await signInWith(authenticator, "", tamper)).toEqual({ code: 400, message, data: null });
    expect((await sessionsOf(aliceId)).length).toBe(sessions);
    expect((await fixture.db.select().from(passkeys))[0]!.signCount).toBe(1);
  });

  it("takes a counter of 0 from an authenticator that keeps none", async () => {
    const authenticator = await registered(alice);
    expect((await signInWith(authenticator, "", { counter: 0 })).code).toBe(200);
    expect((await signInWith(authenticator, "", { counter: 0 })).code).toBe(200);
    // Once it counted, it may not stop.
    expect((await signInWith(authenticator, "", { counter: 5 })).code).toBe(200);
    expect(await signInWith(authenticator, "", { counter: 0 })).toMatchObject({
      code: 400,
      message: COUNTER_REGRESSED,
    });
  });

  it("uses a challenge once: a replayed assertion, a second finish, an expired or made-up handle are refused", async () => {
    const authenticator = await registered(alice);
    const begun = await beginLogin();
    const assertion = authenticator.assert(begun.data.options.publicKey, ORIGIN);
    expect((await finishLogin(begun.data.session, assertion)).code).toBe(200);
    expect(await finishLogin(begun.data.session, assertion)).toEqual({
      code: 400,
      message: CHALLENGE_INVALID,
      data: null,
    });

    const raced = await beginLogin();
    const one = authenticator.assert(raced.data.options.publicKey, ORIGIN);
    const results = await Promise.all([finishLogin(raced.data.session, one), finishLogin(raced.data.session, one)]);
    expect(results.map((r) => r.code).sort()).toEqual([200, 400]);

    const late = await beginLogin();
    await fixture.db.update(webauthnChallenges).set({ expiresAt: Math.floor(Date.now() / 1000) });
    expect(
      await finishLogin(late.data.session, authenticator.assert(late.data.options.publicKey, ORIGIN)),
    ).toMatchObject({ message: CHALLENGE_INVALID });
    expect(await finishLogin(undefined, authenticator.assert(late.data.options.publicKey, ORIGIN))).toMatchObject({
      message: CHALLENGE_INVALID,
    });
    // A registration's challenge does not sign anyone in.
    const registration = await beginRegistration(alice);
    expect(
      await finishLogin(
        registration.data.session,
        authenticator.assert({ challenge: registration.data.options.publicKey.challenge, rpId: "localhost" }, ORIGIN),
      ),
    ).toMatchObject({ message: CHALLENGE_INVALID });
  });

  it("binds a sign-in to the name it was begun with", async () => {
    const authenticator = await registered(alice);
    const begun = await beginLogin("alice");
    expect(
      await finishLogin(begun.data.session, authenticator.assert(begun.data.options.publicKey, ORIGIN), ""),
    ).toMatchObject({ message: CHALLENGE_INVALID });
    expect(await signInWith(authenticator, "bob")).toEqual({ code: 400, message: WRONG_USER, data: null });
    // An unknown name gets options like any name without passkeys.
    const unknown = await beginLogin("nobody");
    expect(unknown.code).toBe(200);
    expect(unknown.data.options.publicKey.allowCredentials).toEqual([]);
  });

  it("refuses an unknown credential, a deleted one, and a disabled account", async () => {
    expect(await signInWith(new SoftAuthenticator())).toEqual({ code: 400, message: UNKNOWN_CREDENTIAL, data: null });
    const authenticator = await registered(alice);
    expect(
      await json(
        await postJson(fixture, "/api/authn/delete_authn", { id: authenticator.id }, { Authorization: alice }),
      ),
    ).toEqual({
      code: 200,
      message: "success",
      data: null,
    });
    expect(await signInWith(authenticator)).toEqual({ code: 400, message: UNKNOWN_CREDENTIAL, data: null });

    const again = await registered(alice);
    await fixture.db.update(users).set({ disabled: true }).where(eq(users.id, aliceId));
    const sessions = (await sessionsOf(aliceId)).length;
    expect(await signInWith(again)).toEqual({ code: 403, message: USER_DISABLED, data: null });
    expect((await sessionsOf(aliceId)).length).toBe(sessions);
  });

  it("skips the TOTP prompt of a two-factor account only when the authenticator verified the user", async () => {
    const authenticator = await registered(alice);
    const admin = await signInAdmin(fixture);
    // Two-factor on for alice, through the routes.
    const generated = await json(
      await send(fixture, "POST", "/api/auth/2fa/generate", undefined, { Authorization: alice }),
    );
    const secret = generated.data.secret as string;
    expect(
      (
        await json(
          await postJson(fixture, "/api/auth/2fa/verify", { code: totpCode(secret), secret }, { Authorization: alice }),
        )
      ).code,
    ).toBe(200);
    expect(admin).toBeTruthy();
    expect(await signInWith(authenticator, "", { flags: FLAG_UP })).toEqual({
      code: 403,
      message: NEEDS_USER_VERIFICATION,
      data: null,
    });
    expect((await signInWith(authenticator, "", { flags: FLAG_UP | FLAG_UV })).code).toBe(200);
    // Without two-factor, presence is enough.
    await fixture.db.update(users).set({ otpSecret: null }).where(eq(users.id, aliceId));
    expect((await signInWith(authenticator, "", { flags: FLAG_UP })).code).toBe(200);
  });
});

describe("the relying party", () => {
  it("is site_url's host when it is set, and a credential for the request's host is then refused", async () => {
    await setSiteUrl("https://files.example.com/");
    const begun = await beginRegistration(alice);
    expect(begun.data.options.publicKey.rp.id).toBe("files.example.com");
    const authenticator = new SoftAuthenticator();
    expect(
      await finishRegistration(alice, begun.data.session, authenticator.register(begun.data.options.publicKey, ORIGIN)),
    ).toMatchObject({ message: ORIGIN_MISMATCH });
    const again = await beginRegistration(alice);
    expect(
      (
        await finishRegistration(
          alice,
          again.data.session,
          authenticator.register(again.data.options.publicKey, "https://files.example.com"),
        )
      ).code,
    ).toBe(200);
    const login = await beginLogin();
    expect(login.data.options.publicKey.rpId).toBe("files.example.com");
    expect(
      (
        await finishLogin(
          login.data.session,
          authenticator.assert(login.data.options.publicKey, "https://files.example.com"),
        )
      ).code,
    ).toBe(200);
  });

  it("is never taken from X-Forwarded-Host, which a phishing proxy sets", async () => {
    const begun = await beginRegistration(alice, { "X-Forwarded-Host": "evil.example" });
    expect(begun.data.options.publicKey.rp.id).toBe("localhost");
    const credential = new SoftAuthenticator().register(
      { ...begun.data.options.publicKey, rp: { id: "evil.example" } },
      "http://evil.example",
    );
    const reply = await json(
      await postJson(fixture, "/api/authn/webauthn_finish_registration", JSON.stringify(credential), {
        Authorization: alice,
        session: begun.data.session,
        "X-Forwarded-Host": "evil.example",
      }),
    );
    expect(reply).toEqual({ code: 400, message: ORIGIN_MISMATCH, data: null });
  });
});

describe("delete_authn", () => {
  it("deletes one's own passkey only: someone else's id is not found and stays", async () => {
    const ofAlice = await registered(alice);
    const ofBob = await registered(bob);
    expect(
      await json(await postJson(fixture, "/api/authn/delete_authn", { id: ofBob.id }, { Authorization: alice })),
    ).toEqual({
      code: 404,
      message: CREDENTIAL_NOT_FOUND,
      data: null,
    });
    expect(
      await json(await postJson(fixture, "/api/authn/delete_authn", { id: "not-an-id" }, { Authorization: alice })),
    ).toMatchObject({ code: 404 });
    // OpenList's clients spell ids in standard base64: the same credential.
    const standard = Buffer.from(ofAlice.id, "base64url").toString("base64");
    expect(
      (await json(await postJson(fixture, "/api/authn/delete_authn", { id: standard }, { Authorization: alice }))).code,
    ).toBe(200);
    expect((await fixture.db.select().from(passkeys)).map((row) => row.credentialId)).toEqual([ofBob.id]);
  });
});

describe("the CBOR reader", () => {
  it("reads definite items and says where they end", () => {
    const bytes = Uint8Array.from([0xa2, 0x01, 0x02, 0x20, 0x43, 1, 2, 3, 0xff]);
    const { value, end } = decodeCbor(bytes);
    expect(value).toEqual(
      new Map<number, unknown>([
        [1, 2],
        [-1, Uint8Array.from([1, 2, 3])],
      ]),
    );
    expect(end).toBe(8);
  });

  it.each([
    ["truncated", [0x43, 1]],
    ["indefinite", [0x5f, 0x41, 1, 0xff]],
    ["a float", [0xf9, 0, 0]],
    ["a repeated key", [0xa2, 1, 1, 1, 2]],
    ["too deep", Array(20).fill(0x81)],
  ])("refuses %s input", (_, bytes) => {
    expect(() => decodeCbor(Uint8Array.from(bytes as number[]))).toThrow();
  });

  it("answers a malformed attestation object with a 400", async () => {
    const begun = await beginRegistration(alice);
    const credential = new SoftAuthenticator().register(begun.data.options.publicKey, ORIGIN);
    credential.response.attestationObject = "oWNmbXQ"; // a map that ends in the middle
    expect(await finishRegistration(alice, begun.data.session, credential)).toEqual({
      code: 400,
      message: CREDENTIAL_MALFORMED,
      data: null,
    });
  });
});
