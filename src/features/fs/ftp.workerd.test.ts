// The file side on FTP inside workerd, over Workers TCP sockets against ftp-srv on 127.0.0.1:
// listings, lookups, ranged reads (REST + RETR) served by Gatehouse with Range and conditional
// requests, writes read back through a second connection, and the errors FTP gives.
import { exports } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { sql } from "../../../test/support/libsql-http.ts";
import { apiAs, signIn } from "../../../test/support/workerd-client.ts";
import { ftpPatternByte } from "../../../test/support/storage-servers.ts";

const servers = inject("storageServers");
let admin: string;
const { post } = apiAs(() => admin);
const mount = (mountPath: string, extra: Record<string, unknown> = {}) =>
  post("/api/admin/storage/create", {
    mount_path: mountPath,
    driver: "FTP",
    addition: JSON.stringify({
      address: servers.ftpAddress,
      username: "ftpuser",
      password: "ftp password",
      root_folder_path: "/exports",
      ...extra,
    }),
  });

beforeAll(async () => {
  admin = await signIn("fs-ftp");
});
beforeEach(async () => {
  await sql("DELETE FROM storages");
});

describe("FTP reads", () => {
  it("lists the root and a subfolder with sizes and names as they are", async () => {
    expect((await mount("/ftp")).code).toBe(200);
    const root = await post("/api/fs/list", { path: "/ftp" });
    expect(root.data.provider).toBe("FTP");
    const byName = Object.fromEntries(root.data.content.map((e: any) => [e.name, e]));
    // write.workerd.test.ts works in a folder of its own, "written".
    expect(
      Object.keys(byName)
        .filter((name) => name !== "written")
        .sort(),
    ).toEqual(["big.bin", "docs", "hello.txt"]);
    expect(byName["hello.txt"]).toMatchObject({ size: 15, is_dir: false, path: "/exports/hello.txt" });
    expect(byName.docs).toMatchObject({ is_dir: true, size: 0 });
    expect((await post("/api/fs/list", { path: "/ftp/docs" })).data.content.map((e: any) => [e.name, e.size])).toEqual([
      ["a b é.txt", 16],
    ]);
  });

  it("says what is missing, what is not a folder, and when the password is wrong", async () => {
    await mount("/ftp");
    expect((await post("/api/fs/list", { path: "/ftp/nope" })).message).toBe(
      "failed get objs: failed get dir: object not found",
    );
    expect((await post("/api/fs/list", { path: "/ftp/hello.txt" })).message).toBe("failed get objs: not a folder");
    expect((await post("/api/fs/get", { path: "/ftp/docs/nope.txt" })).message).toBe("object not found");
    await mount("/wrong", { password: "not-it" });
    await sql("UPDATE storages SET status = 'work' WHERE mount_path = '/wrong'");
    const wrong = await post("/api/fs/list", { path: "/wrong" });
    expect(wrong.message).toBe("failed get objs: wrong username or password");
    expect(wrong.message).not.toContain("not-it");
  });

  it("serves a file through /d (FTP is always proxied) with ranges read by REST and RETR", async () => {
    await mount("/ftp");
    const file = (await post("/api/fs/get", { path: "/ftp/big.bin" })).data;
    const size = 5 * 1024 * 1024 + 7;
    expect(file.size).toBe(size);
    const url = `http://gatehouse.test/d/ftp/big.bin?sign=${file.sign}`;
    const expectBytes = async (range: string | null, from: number, to: number) => {
      const response = await exports.default.fetch(url, range ? { headers: { Range: range } } : {});
      expect(response.status, range ?? "whole").toBe(range ? 206 : 200);
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(bytes.length, range ?? "whole").toBe(to - from + 1);
      for (let i = 0; i < bytes.length; i += 4099) expect(bytes[i], `${range} @${i}`).toBe(ftpPatternByte(from + i));
      expect(bytes[bytes.length - 1]).toBe(ftpPatternByte(to));
    };
    await expectBytes("bytes=0-0", 0, 0);
    await expectBytes("bytes=1000000-1000999", 1_000_000, 1_000_999);
    await expectBytes(`bytes=${size - 1}-`, size - 1, size - 1);
    await expectBytes(null, 0, size - 1);
    const head = await exports.default.fetch(url, { method: "HEAD" });
    expect(head.headers.get("content-length")).toBe(String(size));
    expect((await exports.default.fetch(url, { headers: { "If-None-Match": head.headers.get("etag")! } })).status).toBe(
      304,
    );
    const text = (await post("/api/fs/get", { path: "/ftp/docs/a b é.txt" })).data;
    expect(
      await (
        await exports.default.fetch(
          `http://gatehouse.test/p/ftp/docs/${encodeURIComponent("a b é.txt")}?sign=${text.sign}`,
        )
      ).text(),
    ).toBe("0123456789abcdef");
  });
});
