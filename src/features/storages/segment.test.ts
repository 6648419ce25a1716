// The first mount segment has a TypeScript and an SQL form (src/features/storages/segment.ts):
// a storage's delete narrows with one and decides with the other, so they must agree on every
// clean path, which is what a stored mount path is.
import { createClient } from "@libsql/client/node";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/libsql/node";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { firstSegment, firstSegmentSql } from "./segment.ts";
import { cleanPath } from "../../lib/path.ts";

const client = createClient({ url: ":memory:" });
const db = drizzle(client);
afterAll(() => client.close());

async function sqlFirstSegment(path: string): Promise<string> {
  const [row] = await db.all<{ segment: string }>(sql`SELECT ${firstSegmentSql(sql`${path}`)} AS segment`);
  return row!.segment;
}

describe("the first mount segment", () => {
  it.each([
    ["/", ""],
    ["/a", "a"],
    ["/a/b", "a"],
    ["/a/b/c", "a"],
    ["/with space/x", "with space"],
    ["/ünïcödé/x", "ünïcödé"],
    ["/😀/x", "😀"],
    ["/a.b/c", "a.b"],
  ])("of %j is %j in TypeScript and in SQL", async (path, segment) => {
    expect(firstSegment(path)).toBe(segment);
    expect(await sqlFirstSegment(path)).toBe(segment);
  });

  it("is the same in both forms for any clean path", async () => {
    const segment = fc
      .string({ minLength: 1, maxLength: 8, unit: "grapheme" })
      .filter((s) => !/[/\\]/.test(s) && s !== "." && s !== "..");
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { maxLength: 4 }), async (segments) => {
        const path = cleanPath(`/${segments.join("/")}`);
        expect(await sqlFirstSegment(path)).toBe(firstSegment(path));
      }),
      { numRuns: 200 },
    );
  });
});
