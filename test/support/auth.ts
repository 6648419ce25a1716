// What a client does to sign in, written from AList's behaviour (docs/api.md) rather than from
// src/: JSON requests, AList's static hash, and TOTP codes computed with Node's HMAC (RFC 6238),
// not with otpauth.
import { createHash, createHmac } from "node:crypto";
import { insertRole, insertUser, TEST_ADMIN_PASSWORD, type UnitFixture } from "./unit.ts";

export function aListStaticHash(password: string): string {
  return createHash("sha256").update(`${password}-https://github.com/alist-org/alist`).digest("hex");
}

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

export function totpCode(secret: string, timeMs = Date.now(), stepOffset = 0): string {
  let bits = "";
  for (const char of secret.replace(/=+$/, "").toUpperCase()) bits += BASE32.indexOf(char).toString(2).padStart(5, "0");
  const key = Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(timeMs / 30_000) + stepOffset));
  const mac = createHmac("sha1", key).update(counter).digest();
  const offset = mac[19]! & 0xf;
  return ((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).toString().padStart(6, "0");
}

/** A request as a client makes it: any method, a JSON body when one is given, any headers. */
export function send(
  fixture: UnitFixture,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return fixture.request(path, {
    method,
    headers: body === undefined ? headers : { "Content-Type": "application/json;charset=UTF-8", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

export function postJson(fixture: UnitFixture, path: string, body: unknown, headers: Record<string, string> = {}) {
  return send(fixture, "POST", path, body, headers);
}

/** A login token of the seeded admin. */
export async function signInAdmin(fixture: UnitFixture): Promise<string> {
  return (await login(fixture, { username: "admin", password: TEST_ADMIN_PASSWORD })).data!.token;
}

/** A user `name` (password `<name> pw`) holding one role of the given scopes, signed in: its token. */
export async function signInMember(
  fixture: UnitFixture,
  name: string,
  scopes: { path: string; permission: number }[],
  fields: Parameters<typeof insertUser>[3] = {},
): Promise<string> {
  await insertUser(fixture, name, `${name} pw`, {
    roleIds: [await insertRole(fixture, `${name}-role`, scopes)],
    ...fields,
  });
  return (await login(fixture, { username: name, password: `${name} pw` })).data!.token;
}

export async function login(
  fixture: UnitFixture,
  credentials: { username: string; password: string; otp_code?: string },
  headers: Record<string, string> = {},
) {
  const body = (await (await postJson(fixture, "/api/auth/login", credentials, headers)).json()) as {
    code: number;
    message: string;
    data: { token: string; device_key: string } | null;
  };
  return body;
}

export async function getAs(fixture: UnitFixture, path: string, token: string, headers: Record<string, string> = {}) {
  return (await (await fixture.request(path, { headers: { Authorization: token, ...headers } })).json()) as {
    code: number;
    message: string;
    data: any;
  };
}
