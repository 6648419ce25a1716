// keptQuery stands in for drizzle's own query objects inside db.batch (it relies on the batch's
// `_prepare().getQuery()` and `mapResult`): these tests fail if a drizzle upgrade changes that.
import { and, eq, inArray, type Placeholder, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storages, users } from "./schema.ts";
import { keptQuery } from "./kept.ts";
import { createUnitFixture, type UnitFixture } from "../../test/support/unit.ts";

let fixture: UnitFixture;
beforeAll(async () => {
  fixture = await createUnitFixture();
  await fixture.db.insert(storages).values([
    { mountPath: "/kept/a", driver: "Virtual", status: "work", modifiedAtMs: 1, disabled: true },
    { mountPath: "/kept/b", driver: "Virtual", status: "work", modifiedAtMs: 2 },
  ]);
});
afterAll(() => fixture.close());

const byMountPath = keptQuery(["path"], (db, v) => db.select().from(storages).where(eq(storages.mountPath, v.path)));
const fresh = (path: string) => fixture.db.select().from(storages).where(eq(storages.mountPath, path));

describe("keptQuery", () => {
  // The casts below reach drizzle's private members on purpose: they are what keptQuery relies on.
  it("finds drizzle's private _prepare() where it builds on it", () => {
    const query = fresh("/kept/a") as unknown as { _prepare?: () => { getQuery?: unknown; mapResult?: unknown } };
    expect(typeof query._prepare).toBe("function");
    const prepared = query._prepare!();
    expect(typeof prepared.getQuery).toBe("function");
    expect(typeof prepared.mapResult).toBe("function");
  });

  it("sends the SQL drizzle builds, with each call's values", () => {
    const kept = byMountPath(fixture.db, { path: "/kept/a" }) as unknown as { _prepare(): { getQuery(): unknown } };
    expect(kept._prepare().getQuery()).toEqual(fresh("/kept/a").toSQL());
    const other = byMountPath(fixture.db, { path: "/kept/b" }) as unknown as { _prepare(): { getQuery(): unknown } };
    expect(other._prepare().getQuery()).toEqual(fresh("/kept/b").toSQL());
  });

  it("maps rows as drizzle does, in a batch beside other queries", async () => {
    const [kept, other, expected] = await fixture.db.batch([
      byMountPath(fixture.db, { path: "/kept/a" }),
      byMountPath(fixture.db, { path: "/kept/b" }),
      fresh("/kept/a"),
    ]);
    expect(kept).toEqual(expected);
    expect(kept[0]).toMatchObject({ mountPath: "/kept/a", disabled: true, modifiedAtMs: 1 });
    expect(other[0]).toMatchObject({ mountPath: "/kept/b", disabled: false });
  });

  it("maps SQL fields, their decoders and joins as drizzle does", async () => {
    const shaped = (db: typeof fixture.db, path: string | Placeholder) =>
      db
        .select({
          path: storages.mountPath,
          off: storages.disabled,
          depth: sql<number>`length(${storages.mountPath})`.mapWith(Number),
          flag: sql`${storages.disabled} = 1`.mapWith(storages.disabled).as("flag"),
          nothing: sql<null>`NULL`,
        })
        .from(storages)
        .where(eq(storages.mountPath, path));
    const joined = (db: typeof fixture.db, path: string | Placeholder) =>
      db
        .select()
        .from(storages)
        .leftJoin(users, eq(users.username, storages.remark))
        .where(eq(storages.mountPath, path));
    const keptShaped = keptQuery(["path"], (db, v) => shaped(db, v.path));
    const keptJoined = keptQuery(["path"], (db, v) => joined(db, v.path));
    const [mine, theirs, mineJoined, theirsJoined] = await fixture.db.batch([
      keptShaped(fixture.db, { path: "/kept/a" }),
      shaped(fixture.db, "/kept/a"),
      keptJoined(fixture.db, { path: "/kept/a" }),
      joined(fixture.db, "/kept/a"),
    ]);
    expect(mine).toEqual(theirs);
    expect(mine).toEqual([{ path: "/kept/a", off: true, depth: 7, flag: true, nothing: null }]);
    expect(mineJoined).toEqual(theirsJoined);
    expect(mineJoined[0]!.users).toBeNull();
  });

  it("runs on its own when awaited", async () => {
    expect(await byMountPath(fixture.db, { path: "/kept/b" })).toEqual(await fresh("/kept/b"));
    expect(await byMountPath(fixture.db, { path: "/nowhere" })).toEqual([]);
  });

  it("binds placeholders inside subqueries and writes", async () => {
    const rename = keptQuery(["from", "to", "username"], (db, v) =>
      db
        .update(storages)
        .set({ remark: sql`${v.to}` })
        .where(
          and(
            eq(storages.mountPath, v.from),
            inArray(
              storages.id,
              db.select({ id: storages.id }).from(storages).innerJoin(users, eq(users.username, v.username)),
            ),
          ),
        ),
    );
    await rename(fixture.db, { from: "/kept/b", to: "renamed", username: "admin" });
    await rename(fixture.db, { from: "/kept/a", to: "not me", username: "nobody" });
    const rows = await fixture.db
      .select({ path: storages.mountPath, remark: storages.remark })
      .from(storages)
      .where(inArray(storages.mountPath, ["/kept/a", "/kept/b"]));
    expect(rows).toEqual([
      { path: "/kept/a", remark: "" },
      { path: "/kept/b", remark: "renamed" },
    ]);
  });
});
