// The guard's decisions about access keys (docs/decisions.md D16), over plain rows: the caller a
// key stands for (the intersection with its user), when a key may be used, which routes it reaches,
// and the S3 secret's seal.
import { describe, expect, it } from "vitest";
import { open, seal } from "../features/two-factor/secret-box.ts";
import { Permission } from "../features/fs/rules.ts";
import { isAccessKeySecret, keyCaller, type KeyRow, keyReaches, keyRefusal, keyTouchDue } from "./access-keys.ts";
import { ADMIN_ROLE_ID } from "./roles.ts";
import type { RoleRow, UserRow } from "./store.ts";

const user = (over: Partial<UserRow> = {}): UserRow => ({
  id: 7,
  username: "ursula",
  passwordHash: "x",
  passwordChangedAt: 100,
  basePath: "/",
  roleIds: [3],
  disabled: false,
  permission: 0,
  otpSecret: null,
  otpLastStep: 0,
  ssoId: "",
  allowLdap: false,
  ...over,
});

const role = (permissionScopes: { path: string; permission: number }[], id = 3): RoleRow => ({
  id,
  name: `r${id}`,
  description: "",
  isDefault: false,
  permissionScopes,
});

const key = (over: Partial<KeyRow> = {}): KeyRow => ({
  id: 1,
  userId: 7,
  path: "/team/docs",
  permission: Permission.WEBDAV_READ,
  expiresAt: 0,
  usage: ["api", "webdav"],
  passwordChangedAt: 100,
  ...over,
});

describe("the caller a key stands for", () => {
  it("cuts every role scope to the key's folder and bits", () => {
    const caller = keyCaller(
      user(),
      [
        role([
          { path: "/", permission: 0xffff },
          { path: "/team/docs/deep", permission: Permission.WRITE | Permission.WEBDAV_READ },
          { path: "/other", permission: 0xffff },
          { path: "/team/docsx", permission: 0xffff },
        ]),
      ],
      key(),
      "access_key",
    );
    expect(caller.roles[0]!.permissionScopes).toEqual([
      { path: "/team/docs", permission: Permission.WEBDAV_READ },
      { path: "/team/docs/deep", permission: Permission.WEBDAV_READ },
    ]);
    expect(caller.user.permission & Permission.PATH_LIMIT).not.toBe(0);
    expect(caller.key).toEqual({ id: 1, path: "/team/docs", permission: Permission.WEBDAV_READ });
  });

  it("never holds the admin role; a whole-reach key (an app password) keeps the user's scopes as they are", () => {
    const scopes = [{ path: "/", permission: 0xffff }];
    const caller = keyCaller(
      user({ roleIds: [ADMIN_ROLE_ID] }),
      [role(scopes, ADMIN_ROLE_ID)],
      key({ path: "/", permission: -1 }),
      "basic",
    );
    expect(caller.user.roleIds).toEqual([]);
    expect(caller.roles[0]!.permissionScopes).toEqual(scopes);
    expect(caller.user.permission).toBe(0);
  });

  it("reaches nothing when the user holds nothing in the key's folder", () => {
    const caller = keyCaller(user(), [role([{ path: "/other", permission: 0xffff }])], key(), "access_key");
    expect(caller.roles[0]!.permissionScopes).toEqual([]);
  });
});

describe("when a key may be used", () => {
  const now = 1000;
  it("refuses unknown keys (counted), then ended, disabled, expired and misused ones (not counted)", () => {
    expect(keyRefusal(undefined, user(), "api", now)).toMatchObject({ code: 401, counted: true });
    expect(keyRefusal(key(), undefined, "api", now)).toMatchObject({ code: 401, counted: true });
    expect(keyRefusal(key({ passwordChangedAt: 99 }), user(), "api", now)).toEqual({
      code: 401,
      message: "Password has been changed, login please",
      counted: false,
    });
    expect(keyRefusal(key(), user({ disabled: true }), "api", now)?.message).toBe(
      "Current user is disabled, replace please",
    );
    expect(keyRefusal(key({ expiresAt: now }), user(), "api", now)?.message).toBe("access key expired");
    expect(keyRefusal(key({ expiresAt: now + 1 }), user(), "api", now)).toBeNull();
    expect(keyRefusal(key({ usage: ["webdav"] }), user(), "api", now)).toEqual({
      code: 403,
      message: "this access key is not for the API",
      counted: false,
    });
    expect(keyRefusal(key({ usage: ["api"] }), user(), "webdav", now)?.message).toBe(
      "this access key is not for webdav",
    );
  });

  it("tells key secrets from other tokens", () => {
    expect(isAccessKeySecret("gh-key-abc")).toBe(true);
    expect(isAccessKeySecret("gh-app-abc")).toBe(true);
    expect(isAccessKeySecret("alist-1234")).toBe(false);
  });

  it("reaches the file side and the profile only", () => {
    expect(keyReaches("POST", "/api/fs/list")).toBe(true);
    expect(keyReaches("GET", "/api/me")).toBe(true);
    for (const [method, path] of [
      ["POST", "/api/me/update"],
      ["GET", "/api/me/access_key/list"],
      ["POST", "/api/fsx"],
      ["POST", "/api/share/create"],
      ["GET", "/api/admin/user/list"],
    ] as const)
      expect(keyReaches(method, path), path).toBe(false);
  });

  it("sends the last-use update once per key every 5 minutes", () => {
    expect(keyTouchDue("hash-a", 10_000)).toBe(true);
    expect(keyTouchDue("hash-a", 10_299)).toBe(false);
    expect(keyTouchDue("hash-b", 10_299)).toBe(true);
    expect(keyTouchDue("hash-a", 10_300)).toBe(true);
  });
});

describe("the S3 secret's seal", () => {
  it("opens under its own purpose only", async () => {
    const secrets = [new TextEncoder().encode("a-worker-secret-of-enough-length-0123456789")];
    const sealed = await seal(secrets, "the s3 secret", "s3-secret-v1");
    expect(await open(secrets, sealed, "s3-secret-v1")).toBe("the s3 secret");
    expect(await open(secrets, sealed)).toBeNull();
  });
});
