// The file side inside workerd, against the libSQL endpoint: each file request costs exactly one
// database round trip (the caller, the storages, the metas and the settings in one batch), for
// the API, /d and /p alike, counted at the endpoint. Virtual and Alias storages: no upstream.
import { exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { roundTrips, sql } from "../../../test/support/libsql-http.ts";
import { apiAs, type Envelope, signIn } from "../../../test/support/workerd-client.ts";

let admin: string;

const { post } = apiAs(() => admin);

/** The admin's stored password hash, reused for a second account with the same password. */
const adminPasswordHash = async () =>
  ((await sql("SELECT password_hash FROM users WHERE username = 'admin'")) as [[string]])[0][0];

const counted = async <T>(work: () => Promise<T>): Promise<{ result: T; trips: number }> => {
  const counter = await roundTrips();
  const result = await work();
  return { result, trips: await counter.count() };
};

beforeAll(async () => {
  admin = await signIn("fs-test");
});

beforeEach(async () => {
  await sql("DELETE FROM storages");
  await sql("DELETE FROM metas");
  const addition = JSON.stringify({ num_file: 5, num_folder: 2, min_file_size: 1000, max_file_size: 200000 });
  for (const [i, mount] of ["/v", "/deep/a", "/deep/b"].entries()) {
    await sql(
      "INSERT INTO storages (mount_path, driver, status, addition, modified, \"order\") VALUES (?, 'Virtual', 'work', ?, 0, ?)",
      [mount, addition, i],
    );
  }
  await sql(
    "INSERT INTO storages (mount_path, driver, status, addition, modified) VALUES ('/al', 'Alias', 'work', ?, 0)",
    [JSON.stringify({ paths: "/v" })],
  );
  await sql("INSERT INTO metas (path, readme, hide) VALUES ('/v', 'hello', 'nothing-matches')");
});

describe("one database round trip per file request", () => {
  it("list, get, dirs (of a storage, of virtual folders); an alias reads its target's part of the tree once more", async () => {
    for (const path of ["/", "/v", "/deep", "/deep/a", "/al"]) {
      const { result, trips } = await counted(() => post("/api/fs/list", { path }));
      expect(result.code, path).toBe(200);
      expect(trips, path).toBe(path === "/al" ? 2 : 1);
    }
    const file = (await post("/api/fs/list", { path: "/v" })).data.content.find((e: any) => !e.is_dir);
    expect((await counted(() => post("/api/fs/get", { path: `/v/${file.name}` }))).trips).toBe(1);
    const got = await counted(() => post("/api/fs/get", { path: `/al/${file.name}` }));
    expect(got.result.data).toMatchObject({ name: file.name, size: file.size, provider: "Alias" });
    expect(got.trips).toBe(2);
    expect((await counted(() => post("/api/fs/get", { path: "/deep/a" }))).result.data).toMatchObject({
      name: "a",
      is_dir: true,
    });
    expect((await counted(() => post("/api/fs/dirs", { path: "/v" }))).trips).toBe(1);
  });

  it("a user with a base path other than / costs one more round trip (the guess assumed /)", async () => {
    await sql("DELETE FROM users WHERE username = 'based'");
    await sql(
      "INSERT INTO roles (name, permission_scopes) SELECT 'based-role', '[{\"path\":\"/\",\"permission\":0}]' WHERE NOT EXISTS (SELECT 1 FROM roles WHERE name = 'based-role')",
    );
    const [[roleId]] = (await sql("SELECT id FROM roles WHERE name = 'based-role'")) as [[number]];
    await sql("INSERT INTO users (username, password_hash, base_path, role) VALUES ('based', ?, '/deep', ?)", [
      await adminPasswordHash(),
      `[${roleId}]`,
    ]);
    const token = await signIn("fs-based", "based");
    const listed = await counted(() =>
      exports.default
        .fetch(
          new Request("http://gatehouse.test/api/fs/list", {
            method: "POST",
            headers: { Authorization: token, "Content-Type": "application/json" },
            body: JSON.stringify({ path: "/" }),
          }),
        )
        .then((r) => r.json<Envelope>()),
    );
    expect(listed.result.data.content.map((e: any) => e.name)).toEqual(["a", "b"]);
    expect(listed.trips).toBe(2);
  });

  it("/d and /p with a sign, whole and ranged", async () => {
    const file = (await post("/api/fs/list", { path: "/v" })).data.content.find((e: any) => !e.is_dir);
    for (const prefix of ["/d", "/p"]) {
      const { result, trips } = await counted(() =>
        exports.default.fetch(`http://gatehouse.test${prefix}/v/${file.name}?sign=${file.sign}`, {
          headers: { Range: "bytes=10-19" },
        }),
      );
      expect(result.status).toBe(206);
      expect((await result.arrayBuffer()).byteLength).toBe(10);
      expect(trips).toBe(1);
    }
    const refused = await counted(async () =>
      (await exports.default.fetch(`http://gatehouse.test/d/v/${file.name}`)).json<Envelope>(),
    );
    expect(refused.result).toEqual({ code: 401, message: "expire missing", data: null });
    expect(refused.trips).toBe(1);
  });

  it("streams a 64 MiB file through /p in workerd without holding it", async () => {
    await sql("UPDATE storages SET addition = ? WHERE mount_path = '/v'", [
      JSON.stringify({ num_file: 1, num_folder: 0, min_file_size: 64 * 1024 * 1024, max_file_size: 64 * 1024 * 1024 }),
    ]);
    const file = (await post("/api/fs/list", { path: "/v" })).data.content[0];
    const response = await exports.default.fetch(`http://gatehouse.test/p/v/${file.name}?sign=${file.sign}`);
    expect(response.headers.get("content-length")).toBe(String(64 * 1024 * 1024));
    let total = 0;
    const reader = response.body!.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) total += next.value.byteLength;
    expect(total).toBe(64 * 1024 * 1024);
  });
});
