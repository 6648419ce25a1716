// Many requests at once against one database, in workerd over Hrana/HTTP: nothing is lost, nothing
// is half-written, and the unique and conditional writes hold when requests race.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "../support/libsql-http.ts";
import { call, type Envelope, tryLogin } from "../support/workerd-client.ts";

const PARALLEL = 12;

const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(path, {
    method: "POST",
    headers: { "Content-Type": "application/json;charset=UTF-8", ...headers },
    body: JSON.stringify(body),
  });

let admin: string;
let savedSettings: unknown[][];
beforeAll(async () => {
  await sql("DELETE FROM login_failures");
  savedSettings = await sql(
    "SELECT key, value FROM settings WHERE key IN ('site_title', 'announcement', 'default_page_size')",
  );
  admin = (await tryLogin({ "Client-Id": "concurrency-admin" })).data.token;
});
// The other workerd files share this database: leave it as it was found.
afterAll(async () => {
  for (const [key, value] of savedSettings)
    await sql("UPDATE settings SET value = ? WHERE key = ?", [value as string, key as string]);
  await sql("DELETE FROM storages WHERE mount_path = '/race'");
  await sql("DELETE FROM login_failures");
});
beforeEach(async () => {
  await sql("DELETE FROM login_failures");
});

describe("racing requests", () => {
  it("creates a mount path once when many create it at the same time", async () => {
    const replies = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        postJson(
          "/api/admin/storage/create",
          { mount_path: "/race", driver: "Virtual", addition: "{}", remark: `attempt ${i}` },
          { Authorization: admin },
        ),
      ),
    );
    const created = replies.filter((reply) => reply.code === 200);
    expect(created).toHaveLength(1);
    for (const refused of replies.filter((reply) => reply.code !== 200)) {
      expect(refused).toEqual({ code: 400, message: "mount path /race is already used", data: null });
    }
    expect(await sql("SELECT id, status FROM storages WHERE mount_path = '/race'")).toEqual([
      [created[0]!.data.id, "work"],
    ]);
  });

  it("leaves one session and one live token when one device signs in many times at once", async () => {
    // Each from an address of its own: more than 5 at once from one address are refused (lockout).
    const replies = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        tryLogin({ "Client-Id": "one-device", "CF-Connecting-IP": `192.0.2.${i}` }),
      ),
    );
    expect(replies.map((reply) => reply.code)).toEqual(Array(PARALLEL).fill(200));
    const keys = new Set(replies.map((reply) => reply.data.device_key));
    expect(keys.size).toBe(1);
    expect(
      await sql("SELECT count(*), min(status) FROM device_sessions WHERE device_key = ?", [[...keys][0]!]),
    ).toEqual([[1, 0]]);
    // Each sign-in rotated the session's token id; only the one written last still works.
    const checks = await Promise.all(
      replies.map((reply) => call("/api/me", { headers: { Authorization: reply.data.token } })),
    );
    expect(checks.filter((check) => check.code === 200)).toHaveLength(1);
    expect(checks.filter((check) => check.code === 401).every((check) => check.message === "session inactive")).toBe(
      true,
    );
  });

  it("applies one settings save whole when many race: never a mix of two", async () => {
    const saves = Array.from({ length: PARALLEL }, (_, i) => [
      { key: "site_title", value: `title ${i}` },
      { key: "announcement", value: `announcement ${i}` },
      { key: "default_page_size", value: String(10 + i) },
    ]);
    const replies = await Promise.all(
      saves.map((items) => postJson("/api/admin/setting/save", items, { Authorization: admin })),
    );
    expect(replies.map((reply) => reply.code)).toEqual(Array(PARALLEL).fill(200));
    const rows = (await sql(
      "SELECT key, value FROM settings WHERE key IN ('site_title', 'announcement', 'default_page_size') ORDER BY key",
    )) as [string, string][];
    const stored = Object.fromEntries(rows);
    const winner = Number(stored.site_title!.replace("title ", ""));
    expect(stored).toEqual({
      site_title: `title ${winner}`,
      announcement: `announcement ${winner}`,
      default_page_size: String(10 + winner),
    });
  });

  it("ends every session when many are evicted at once, and the same one twice does no harm", async () => {
    const devices = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        tryLogin({ "Client-Id": `evict-${i}`, "CF-Connecting-IP": `192.0.2.${i}` }),
      ),
    );
    const targets = [...devices, devices[0]!].map((device) => device.data.device_key as string);
    const replies = await Promise.all(
      targets.map((key) => postJson("/api/admin/session/evict", { session_id: key }, { Authorization: admin })),
    );
    expect(replies.map((reply) => reply.code)).toEqual(Array(targets.length).fill(200));
    const placeholders = targets.map(() => "?").join(", ");
    expect(
      await sql(`SELECT count(*) FROM device_sessions WHERE status = 0 AND device_key IN (${placeholders})`, targets),
    ).toEqual([[0]]);
    const checks = await Promise.all(
      devices.map((device) => call("/api/me", { headers: { Authorization: device.data.token } })),
    );
    expect(checks.every((check) => check.code === 401 && check.message === "session inactive")).toBe(true);
  });
});

describe("brute force", () => {
  const LOCKED =
    "Too many unsuccessful sign-in attempts have been made using an incorrect username or password, Try again later.";

  it("locks a flood from one address out, not the same user elsewhere, and the lockout ends", async () => {
    const flood = await Promise.all(
      Array.from({ length: 20 }, () => tryLogin({ "CF-Connecting-IP": "203.0.113.66" }, "guess")),
    );
    // Each attempt is counted before its password is checked: exactly five are checked, however they race.
    expect(flood.filter((reply) => reply.code === 400)).toHaveLength(5);
    expect(flood.filter((reply) => reply.code === 429)).toHaveLength(15);
    expect(await sql("SELECT count FROM login_failures WHERE scope = 'ip' AND subject = '203.0.113.66'")).toEqual([
      [6],
    ]);
    expect(await tryLogin({ "CF-Connecting-IP": "203.0.113.66" })).toEqual({ code: 429, message: LOCKED, data: null });

    expect((await tryLogin({ "CF-Connecting-IP": "198.51.100.77" })).code).toBe(200);

    await sql("UPDATE login_failures SET expires_at = 0");
    expect((await tryLogin({ "CF-Connecting-IP": "203.0.113.66" })).code).toBe(200);
  });
});

describe("sign-ins racing other writes", () => {
  const createUser = async (username: string) => {
    const created = await postJson(
      "/api/admin/user/create",
      { username, password: `${username} pw` },
      { Authorization: admin },
    );
    expect(created.code, created.message).toBe(200);
    return ((await sql("SELECT id FROM users WHERE username = ?", [username])) as [number][])[0]![0];
  };
  const signInAs = (username: string, i: number) =>
    postJson(
      "/api/auth/login",
      { username, password: `${username} pw` },
      { "Client-Id": `${username}-${i}`, "CF-Connecting-IP": `198.18.0.${i}` },
    );

  it("holds max_devices with evict_oldest when many new devices sign in at once", async () => {
    const saved = await sql("SELECT key, value FROM settings WHERE key IN ('max_devices', 'device_evict_policy')");
    const id = await createUser("crowd");
    try {
      await sql("UPDATE settings SET value = '2' WHERE key = 'max_devices'");
      await sql("UPDATE settings SET value = 'evict_oldest' WHERE key = 'device_evict_policy'");
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => signInAs("crowd", i)));
      expect(replies.map((reply) => reply.code)).toEqual(Array(10).fill(200));
      expect(await sql("SELECT count(*) FROM device_sessions WHERE user_id = ? AND status = 0", [id])).toEqual([[2]]);
      const checks = await Promise.all(
        replies.map((reply) => call("/api/me", { headers: { Authorization: reply.data.token } })),
      );
      expect(checks.filter((check) => check.code === 200)).toHaveLength(2);
    } finally {
      for (const [key, value] of saved)
        await sql("UPDATE settings SET value = ? WHERE key = ?", [value as string, key as string]);
      await postJson(`/api/admin/user/delete?id=${id}`, undefined, { Authorization: admin });
    }
  });

  it("answers sign-ins racing the user's deletion cleanly: signed in or unknown, never a 500", async () => {
    const id = await createUser("doomed");
    const [deleted, ...replies] = await Promise.all([
      new Promise<Envelope>((resolve) => setTimeout(resolve, 20)).then(() =>
        postJson(`/api/admin/user/delete?id=${id}`, undefined, { Authorization: admin }),
      ),
      ...Array.from({ length: 8 }, (_, i) => signInAs("doomed", i)),
    ]);
    expect(deleted!.code).toBe(200);
    for (const reply of replies) {
      expect([200, 400], JSON.stringify(reply)).toContain(reply.code);
      if (reply.code === 400)
        expect(reply).toEqual({ code: 400, message: "username or password is incorrect", data: null });
    }
    expect(await sql("SELECT count(*) FROM device_sessions WHERE user_id = ?", [id])).toEqual([[0]]);
  });
});
