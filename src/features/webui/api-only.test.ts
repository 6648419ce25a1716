// A deploy without the web UI (GATEHOUSE_WEB_UI=off: an assets folder with nothing in it, or no
// assets binding at all) answers every path as the API did before the UI existed: envelopes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Env } from "../../env.ts";
import { createUnitFixture, readEnvelope, type UnitFixture } from "../../../test/support/unit.ts";

let fixture: UnitFixture;
beforeAll(async () => (fixture = await createUnitFixture()));
afterAll(() => fixture.close());

// What the assets binding of an empty assets folder answers: 404 for every path (a Fetcher with
// only `fetch`, the one member the app calls).
const emptyAssets = { fetch: async () => new Response(null, { status: 404 }) } as unknown as Fetcher;

describe.each<[string, Partial<Env>]>([
  ["no assets binding", { ASSETS: undefined }],
  ["an empty assets folder", { ASSETS: emptyAssets }],
])("API-only, with %s", (_, env) => {
  it.each([
    ["GET", "/"],
    ["GET", "/@manage/storages"],
    ["POST", "/movies/a.mkv"],
    ["PUT", "/movies/a.mkv"],
  ])("%s %s is the envelope 404, not a page", async (method, path) => {
    const response = await fixture.request(path, { method }, env);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await readEnvelope(response)).toEqual({ code: 404, message: `no route for ${method} ${path}`, data: null });
  });
});
