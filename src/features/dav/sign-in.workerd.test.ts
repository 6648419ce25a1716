// Who may sign in to /dav with Basic credentials (docs/decisions.md D8.9, docs/webdav.md): two-factor
// turned on ends a password at once even where this isolate remembers it, every wrong app
// password counts toward the sign-in lockout, and the guest account never signs in.
import { TOTP } from "otpauth";
import { beforeAll, describe, expect, it } from "vitest";
import { basic, basicOf, Bits, dav } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { callApi, makeUser, signIn } from "../../../test/support/workerd-client.ts";

let admin: string;
/** Each test speaks from an address of its own, so the lockout of one never reaches another. */
let address = 0;
const freshAddress = () => `203.0.113.${++address}`;
const propfind = (auth: string, ip: string) => dav("PROPFIND", "/", { auth, ip, headers: { Depth: "0" } });

beforeAll(async () => {
  admin = await signIn("dav-sign-in");
});

describe("two-factor turned on", () => {
  it("ends a Basic password that worked before at once, though this isolate remembers it", async () => {
    await makeUser(admin, "davsign-twofa-late", { "/": Bits.WEBDAV_READ });
    const ip = freshAddress();
    const password = basicOf("davsign-twofa-late");
    // Twice: the second request is served from what the isolate remembers of the first.
    expect((await propfind(password, ip)).status).toBe(207);
    expect((await propfind(password, ip)).status).toBe(207);

    const token = await signIn("davsign-twofa-late", "davsign-twofa-late", "davsign-twofa-late password");
    const secret = (await callApi(token, "/api/auth/2fa/generate")).data.secret as string;
    expect((await callApi(token, "/api/auth/2fa/verify", { code: new TOTP({ secret }).generate(), secret })).code).toBe(
      200,
    );

    const refused = await propfind(password, ip);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toMatch(/two-factor authentication on: sign in to WebDAV with an app password/);
  });
});

describe("app passwords and the sign-in lockout", () => {
  it("counts every wrong app password toward the lockout of the address", async () => {
    await makeUser(admin, "davsign-apps", { "/": Bits.WEBDAV_READ });
    const ip = freshAddress();
    for (let i = 0; i < 5; i++) {
      const wrong = await propfind(basic("davsign-apps", `gh-app-${"x".repeat(31)}${i}`), ip);
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toBe("username or password is incorrect\n");
    }
    expect(await sql("SELECT count FROM login_failures WHERE scope = 'ip' AND subject = ?", [ip])).toEqual([[5]]);
    const locked = await propfind(basicOf("davsign-apps"), ip);
    expect(locked.status).toBe(429);
    expect(await locked.text()).toMatch(/^Too many unsuccessful sign-in attempts/);
  });
});

describe("an app password", () => {
  it("signs in, records its first use, and stops signing in with a new account password", async () => {
    await makeUser(admin, "davsign-key", { "/": Bits.WEBDAV_READ });
    const token = await signIn("davsign-key", "davsign-key", "davsign-key password");
    const made = await callApi(token, "/api/me/access_key/create", {
      name: "dav",
      path: "/",
      permission: Bits.WEBDAV_READ,
      expires_at: 0,
      usage: ["webdav"],
    });
    expect(made.code, made.message).toBe(200);
    const key = made.data as { id: number; secret: string };
    const before = Math.floor(Date.now() / 1000);
    const ip = freshAddress();
    expect((await propfind(basic("davsign-key", key.secret), ip)).status).toBe(207);
    const [[used]] = (await sql("SELECT last_used_at FROM app_passwords WHERE id = ?", [key.id])) as [[number]];
    expect(used).toBeGreaterThanOrEqual(before);
    // Another user's name with the key finds nothing.
    expect((await propfind(basic("davsign-apps", key.secret), ip)).status).toBe(401);

    expect((await callApi(token, "/api/me/update", { password: "davsign-key new password" })).code).toBe(200);
    expect((await propfind(basic("davsign-key", key.secret), ip)).status).toBe(401);
  });
});

describe("the guest account", () => {
  it("never signs in over Basic, disabled or enabled, whatever its password", async () => {
    const guestId = Number((await sql("SELECT id FROM users WHERE username = 'guest'"))[0]![0]);
    expect((await callApi(admin, "/api/admin/user/update", { id: guestId, password: "guest password" })).code).toBe(
      200,
    );
    const guest = basic("guest", "guest password");
    const disabled = await propfind(guest, freshAddress());
    expect(disabled.status).toBe(401);
    expect(await disabled.text()).toBe("username or password is incorrect\n");
    try {
      // Anonymous access on, with WebDAV read: the guest still has no Basic sign-in.
      expect((await callApi(admin, "/api/admin/user/update", { id: guestId, disabled: false })).code).toBe(200);
      expect(
        (
          await callApi(admin, "/api/admin/role/update", {
            id: 1,
            name: "guest",
            permission_scopes: [{ path: "/", permission: Bits.WEBDAV_READ }],
          })
        ).code,
      ).toBe(200);
      const enabled = await propfind(guest, freshAddress());
      expect(enabled.status).toBe(401);
      expect(await enabled.text()).toBe("username or password is incorrect\n");
    } finally {
      expect(
        (
          await callApi(admin, "/api/admin/role/update", {
            id: 1,
            name: "guest",
            permission_scopes: [{ path: "/", permission: 0 }],
          })
        ).code,
      ).toBe(200);
      expect((await callApi(admin, "/api/admin/user/update", { id: guestId, disabled: true })).code).toBe(200);
    }
  });
});
