// The R2 Binding driver's part size over plain numbers: every upload R2 takes fits its multipart
// limits. The driver against a real bucket (miniflare's R2) is src/features/fs/r2.workerd.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { partSizeFor, R2_PART_BYTES } from "./r2.ts";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const TIB = 1024 * GIB;
/** R2's limits (developers.cloudflare.com/r2/platform/limits): parts, the largest part, the largest object. */
const R2_MAX_PARTS = 10_000;
const R2_MAX_PART_BYTES = 5 * GIB - 5 * MIB;
const R2_MAX_OBJECT_BYTES = 5 * TIB - 5 * GIB;

/** The upload `size` would make: parts of one size, the last one shorter. */
function plan(size: number) {
  const part = partSizeFor(size);
  return { part, parts: Math.ceil(size / part) };
}

function expectFits(size: number) {
  const { part, parts } = plan(size);
  expect(parts, `${size} bytes in parts of ${part}`).toBeLessThanOrEqual(R2_MAX_PARTS);
  expect(part % MIB, `${size} bytes`).toBe(0);
  expect(part).toBeGreaterThanOrEqual(R2_PART_BYTES);
  expect(part).toBeLessThanOrEqual(R2_MAX_PART_BYTES);
}

describe("partSizeFor", () => {
  it("keeps 16 MiB parts up to 10,000 of them (156.25 GiB)", () => {
    for (const size of [R2_PART_BYTES + 1, 64 * MIB + 17, GIB, 100 * GIB, R2_PART_BYTES * R2_MAX_PARTS])
      expect(plan(size).part, `${size} bytes`).toBe(R2_PART_BYTES);
    expect(plan(R2_PART_BYTES * R2_MAX_PARTS).parts).toBe(R2_MAX_PARTS);
  });

  it("fits a file over 160 GiB, and every size up to R2's largest object, in 10,000 parts of whole MiB", () => {
    const sizes = [
      R2_PART_BYTES * R2_MAX_PARTS + 1,
      160 * GIB,
      160 * GIB + 1,
      200 * GIB - 1,
      TIB,
      TIB + 12_345,
      4 * TIB + 3,
      R2_MAX_OBJECT_BYTES - 1,
      R2_MAX_OBJECT_BYTES,
    ];
    for (const size of sizes) expectFits(size);
    expect(plan(160 * GIB + 1)).toEqual({ part: 17 * MIB, parts: 9638 });
    expect(plan(R2_MAX_OBJECT_BYTES).part).toBe(524 * MIB);
    fc.assert(
      fc.property(fc.bigInt({ min: BigInt(R2_PART_BYTES + 1), max: BigInt(R2_MAX_OBJECT_BYTES) }), (size) =>
        expectFits(Number(size)),
      ),
      { numRuns: 2000 },
    );
  });
});
