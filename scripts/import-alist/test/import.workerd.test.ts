// AList users imported (planner and writer, as npm run import:alist runs them) sign in through the
// Worker in workerd with their AList passwords; the first sign-in upgrades the stored hash in the
// login's one write round trip, and an imported second factor is demanded. Imported storages,
// metas and role scopes land in the columns the file side reads. The rows use names of their own
// (the endpoint is shared with the other files) and leave the seeded admin and guest alone.
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyPlan, readTarget } from "../apply.ts";
import { planImport } from "../plan.ts";
import type { ImportPlan } from "../types.ts";
import { readSource } from "../source.ts";
import { openDatabase } from "../../../src/db/client.ts";
import {
  ALICE_OTP_SECRET,
  ALIST_SCHEMA,
  alistPassword,
  fixtureTables,
  type AListFixture,
} from "../../../test/support/alist-fixtures.ts";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { type Envelope, tryLogin } from "../../../test/support/workerd-client.ts";

/** Every sign-in of this suite comes from one address of its own. */
const attemptSignIn = (username: string, password: string, otpCode?: string) =>
  tryLogin({ "CF-Connecting-IP": "203.0.113.77" }, password, username, otpCode);
const hashOf = async (username: string) =>
  (await sql("SELECT password_hash FROM users WHERE username = ?", [username]))[0]![0] as string;

const db = openDatabase(env.TURSO_DATABASE_URL!, env.TURSO_AUTH_TOKEN);
let plan: ImportPlan;

async function fixture(): Promise<AListFixture> {
  const user = async (
    id: number,
    username: string,
    password: string,
    salt: string,
    fields: Record<string, string | number>,
  ) => ({
    id,
    username,
    ...(await alistPassword(password, salt)),
    pwd_ts: 1700000000,
    password: "",
    base_path: "/",
    role: "[]",
    disabled: 0,
    permission: 0,
    otp_secret: "",
    sso_id: "",
    authn: "[]",
    ...fields,
  });
  return {
    prefix: "x_",
    schema: ALIST_SCHEMA,
    rows: {
      roles: [
        {
          id: 3,
          name: "imported-editors",
          description: "",
          default: 0,
          raw_permission: '[{"path":"/imported-media","permission":264}]',
        },
      ],
      users: [
        await user(7, "imported-ann", "ann's alist password", "AnnSalt012345678", {
          role: "[3]",
          base_path: "/imported-media",
          permission: 1,
        }),
        await user(8, "imported-otto", "otto's alist password", "OttoSalt01234567", {
          role: "[3]",
          otp_secret: ALICE_OTP_SECRET,
        }),
      ],
      storages: [
        {
          id: 4,
          mount_path: "/imported-media",
          order: 3,
          driver: "Virtual",
          cache_expiration: 10,
          status: "work",
          addition: '{"num_file":2}',
          remark: "",
          modified: "2024-05-01 10:20:30+00:00",
          disabled: 0,
          disable_index: 1,
          enable_sign: 1,
          order_by: "",
          order_direction: "",
          extract_folder: "",
          web_proxy: 1,
          webdav_policy: "native_proxy",
          proxy_range: 0,
          down_proxy_url: "",
          down_proxy_sign: 1,
        },
      ],
      metas: [
        {
          id: 2,
          path: "/imported-media/private/",
          password: "pw",
          p_sub: 1,
          write: 0,
          w_sub: 0,
          hide: "^\\.",
          h_sub: 1,
          readme: "# r",
          r_sub: 0,
          header: "",
          header_sub: 0,
        },
      ],
      setting_items: [],
    },
  };
}

beforeAll(async () => {
  const f = await fixture();
  const tables = fixtureTables(f);
  plan = await planImport(readSource(f.prefix, tables.names, tables.columnsOf, tables.rowsOf), await readTarget(db), {
    replace: false,
    otpKeys: [new TextEncoder().encode(env.JWT_SECRET!)],
    nowMs: Date.now(),
  });
  await applyPlan(db, plan);
});

afterAll(async () => {
  await sql("DELETE FROM users WHERE username IN ('imported-ann', 'imported-otto')");
  await sql("DELETE FROM roles WHERE name = 'imported-editors'");
  await sql("DELETE FROM storages WHERE mount_path = '/imported-media'");
  await sql("DELETE FROM metas WHERE path = '/imported-media/private'");
  await sql("DELETE FROM login_failures WHERE subject IN ('203.0.113.77', 'imported-ann', 'imported-otto')");
});

describe("AList users imported, signing in through the Worker", () => {
  it("signs in with the AList password and upgrades the hash within the login's two round trips", async () => {
    expect(plan.report.users.imported).toHaveLength(2);
    const before = await hashOf("imported-ann");
    expect(before).toMatch(/^alist-sha256\$AnnSalt012345678\$[0-9a-f]{64}$/);

    expect(await attemptSignIn("imported-ann", "not it")).toEqual({
      code: 400,
      message: "username or password is incorrect",
      data: null,
    });
    expect(await hashOf("imported-ann")).toBe(before);

    const trips = await roundTrips();
    const login = await attemptSignIn("imported-ann", "ann's alist password");
    expect(login.code).toBe(200);
    expect(await trips.count()).toBe(2);
    const after = await hashOf("imported-ann");
    expect(after).toMatch(/^pbkdf2-sha256\$100000\$/);

    // The upgraded hash takes the same password, and the token works.
    expect((await attemptSignIn("imported-ann", "ann's alist password")).code).toBe(200);
    expect(await hashOf("imported-ann")).toBe(after);
    const me: Envelope = await (
      await exports.default.fetch(
        new Request("http://gatehouse.test/api/me", { headers: { Authorization: login.data.token } }),
      )
    ).json();
    expect(me.data).toMatchObject({
      username: "imported-ann",
      base_path: "/imported-media",
      role_names: ["imported-editors"],
    });
  });

  it("demands the imported second factor", async () => {
    expect(await attemptSignIn("imported-otto", "otto's alist password")).toEqual({
      code: 402,
      message: "Invalid 2FA code",
      data: null,
    });
    expect(await hashOf("imported-otto")).toMatch(/^alist-sha256\$/); // no upgrade before the sign-in succeeds
    const code = new TOTP({ secret: ALICE_OTP_SECRET, algorithm: "SHA1", digits: 6, period: 30 }).generate();
    expect((await attemptSignIn("imported-otto", "otto's alist password", code)).code).toBe(200);
    expect(await hashOf("imported-otto")).toMatch(/^pbkdf2-sha256\$/);
  });

  it("lands storages, metas and role scopes in the columns the file side reads", async () => {
    expect(
      await sql(
        "SELECT mount_path, \"order\", driver, cache_expiration, status, addition, disabled, disable_index, enable_sign, web_proxy, webdav_policy, down_proxy_sign FROM storages WHERE mount_path = '/imported-media'",
      ),
    ).toEqual([["/imported-media", 3, "Virtual", 10, "", '{"num_file":2}', 0, 1, 1, 1, "native_proxy", 1]]);
    expect(
      await sql(
        "SELECT path, password, p_sub, hide, h_sub, readme, r_sub FROM metas WHERE path = '/imported-media/private'",
      ),
    ).toEqual([["/imported-media/private", "pw", 1, "^\\.", 1, "# r", 0]]);
    expect(await sql("SELECT permission_scopes FROM roles WHERE name = 'imported-editors'")).toEqual([
      ['[{"path":"/imported-media","permission":264}]'],
    ]);
  });

  it("behave as in AList on the file side: the base path, the role scope and the meta password", async () => {
    const token = (await attemptSignIn("imported-ann", "ann's alist password")).data.token;
    const list = async (path: string, password = "") =>
      (
        await exports.default.fetch(
          new Request("http://gatehouse.test/api/fs/list", {
            method: "POST",
            headers: { Authorization: token, "Content-Type": "application/json" },
            body: JSON.stringify({ path, password }),
          }),
        )
      ).json<{ code: number; message: string; data: any }>();
    const home = await list("/");
    expect(home.code).toBe(200);
    expect(home.data.provider).toBe("Virtual");
    expect(home.data.write).toBe(true);
    expect(await list("/private")).toEqual({
      code: 403,
      message: "password is incorrect or you have no permission",
      data: null,
    });
    // The right password opens the meta's folder (which the generated Virtual tree does not have).
    expect((await list("/private", "pw")).message).toBe("failed get objs: failed get dir: object not found");
  });
});
