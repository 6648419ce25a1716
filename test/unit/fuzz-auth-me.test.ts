// Property-based input fuzzing (test/support/fuzz.ts) of sign-in, 2FA and /api/me: every reply an
// envelope with code 400/404/405/413 (200 only where harmless), and the database unchanged.
// Sign-ins come from a fresh address each, so lockout never answers; the 2FA enrolment that
// /2fa/generate makes is undone after each case.
import fc from "fast-check";
import { expect, it } from "vitest";
import { isWellFormedText } from "../../src/http/text.ts";
import { login, postJson } from "../support/auth.ts";
import { FUZZ_SEED, FUZZ_USER, registerFuzzSuite, snapshot, unicodeText } from "../support/fuzz.ts";

const context = registerFuzzSuite("auth-me");

// Valid input this time: the username is the one input of /2fa/generate (its QR code's label).
// 255 three-byte characters once overflowed the QR code (500, and an enrolment saved anyway).
const EDGE_USERNAMES = ["漢".repeat(255), "😀".repeat(127), "م".repeat(255), "x".repeat(255), "\u202eadmin"];
// Control characters and unpaired surrogates are refused in names (well-formed-text.test.ts).
const usernames = unicodeText(255)
  .map((name) => name.trim().slice(0, 255))
  .filter((name) => name !== "" && name !== "admin" && name !== FUZZ_USER && isWellFormedText(name));

it("2fa/generate gives a QR code to a user of any valid username, and saves nothing else", async () => {
  const { fixture, tokens } = context();
  const before = await snapshot(fixture.db);
  await fc.assert(
    fc.asyncProperty(usernames, async (username) => {
      const created = (await (
        await postJson(fixture, "/api/admin/user/create", { username, password: "pw" }, { Authorization: tokens.admin })
      ).json()) as {
        code: number;
        data: { id: number };
      };
      expect(created, `create ${JSON.stringify(username)}`).toMatchObject({ code: 200 });
      try {
        const token = (await login(fixture, { username, password: "pw" })).data!.token;
        const reply = await (
          await fixture.request("/api/auth/2fa/generate", { method: "POST", headers: { Authorization: token } })
        ).json();
        expect(reply, `2fa/generate for ${JSON.stringify(username)}`).toMatchObject({
          code: 200,
          data: { qr: expect.stringMatching(/^data:image\/svg\+xml;base64,/) },
        });
      } finally {
        await fixture.request(`/api/admin/user/delete?id=${created.data.id}`, {
          method: "POST",
          headers: { Authorization: tokens.admin },
        });
      }
    }),
    { seed: FUZZ_SEED, numRuns: EDGE_USERNAMES.length + 4, examples: EDGE_USERNAMES.map((name) => [name]) },
  );
  // The users, their sessions and enrolments are gone again; only login_failures and last_active are not compared.
  expect(await snapshot(fixture.db)).toEqual(before);
}, 60_000);
