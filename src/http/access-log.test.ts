// The access log under LOG_LEVEL: one JSON line a request at the reply's level (info for
// successes, warn for refusals, error for failures), nothing written below the configured level,
// and a bad LOG_LEVEL answered as a configuration error.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { signInAdmin } from "../../test/support/auth.ts";
import { createUnitFixture, readEnvelope, type UnitFixture } from "../../test/support/unit.ts";

let fixture: UnitFixture;
beforeAll(async () => (fixture = await createUnitFixture()));
afterAll(() => fixture.close());
afterEach(() => vi.restoreAllMocks());

/** The JSON lines written while `work` runs, by console method. */
async function linesOf(
  work: () => Promise<unknown>,
): Promise<{ log: Record<string, unknown>[]; error: Record<string, unknown>[] }> {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const error = vi.spyOn(console, "error").mockImplementation(() => {});
  await work();
  const parse = (calls: unknown[][]) => calls.map((call) => JSON.parse(String(call[0])) as Record<string, unknown>);
  const lines = { log: parse(log.mock.calls), error: parse(error.mock.calls) };
  log.mockRestore();
  error.mockRestore();
  return lines;
}

describe("the access log", () => {
  it("writes every request at info: one line with its request id, status and envelope code", async () => {
    let requestId = "";
    const { log } = await linesOf(async () => {
      const response = await fixture.request("/api/public/settings", undefined, { LOG_LEVEL: "info" });
      requestId = response.headers.get("x-request-id")!;
    });
    expect(log).toEqual([
      {
        level: "info",
        requestId,
        method: "GET",
        path: "/api/public/settings",
        status: 200,
        code: 200,
        ms: expect.any(Number),
      },
    ]);
  });

  it("writes only refusals and failures at warn (production), nothing at all when off", async () => {
    const atWarn = await linesOf(async () => {
      await fixture.request("/ping", undefined, { LOG_LEVEL: "warn" });
      await fixture.request("/api/me", undefined, { LOG_LEVEL: "warn" });
    });
    expect(atWarn.log).toEqual([expect.objectContaining({ level: "warn", path: "/api/me", status: 200, code: 401 })]);
    const off = await linesOf(() => fixture.request("/api/me", undefined, { LOG_LEVEL: "off" }));
    expect(off).toEqual({ log: [], error: [] });
  });

  it("writes the file side's expected answers at warn though their code is 500, and upstream failures at error", async () => {
    const token = await signInAdmin(fixture);
    const list = (path: string) =>
      fixture.request(
        "/api/fs/list",
        {
          method: "POST",
          headers: { Authorization: token, "Content-Type": "application/json" },
          body: JSON.stringify({ path }),
        },
        { LOG_LEVEL: "warn" },
      );
    // A fresh install: nothing is mounted yet.
    const lines = await linesOf(async () =>
      expect((await readEnvelope(await list("/"))).message).toContain("please add a storage first"),
    );
    expect(lines).toEqual({
      log: [expect.objectContaining({ level: "warn", path: "/api/fs/list", status: 200, code: 500 })],
      error: [],
    });

    // A storage whose upstream cannot be reached is something an operator should look at.
    const created = await fixture.request("/api/admin/storage/create", {
      method: "POST",
      headers: { Authorization: token, "Content-Type": "application/json" },
      body: JSON.stringify({
        mount_path: "/gone",
        driver: "WebDav",
        addition: JSON.stringify({ address: "http://127.0.0.1:9", username: "", password: "", root_folder_path: "/" }),
      }),
    });
    expect((await readEnvelope(created)).code).toBe(500);
    const broken = await linesOf(() => list("/gone"));
    expect(broken).toEqual({
      log: [],
      error: [expect.objectContaining({ level: "error", path: "/api/fs/list", status: 200, code: 500 })],
    });
  });

  it("answers every request with the configuration error while LOG_LEVEL is unknown", async () => {
    const body = await readEnvelope(await fixture.request("/api/public/settings", undefined, { LOG_LEVEL: "loud" }));
    expect(body).toEqual({
      code: 500,
      message: 'server misconfigured: LOG_LEVEL must be one of debug, info, warn, error, off, got "loud"',
      data: null,
    });
  });
});
