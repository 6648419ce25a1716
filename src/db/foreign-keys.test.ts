// Every foreign key's columns lead an index of their table. SQLite finds a parent's children by
// them when the parent is deleted (ON DELETE CASCADE, SET NULL, and the check of each constraint);
// without such an index it reads the child table whole, once for every parent row deleted.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createUnitFixture, type UnitFixture } from "../../test/support/unit.ts";

let fixture: UnitFixture;
beforeAll(async () => (fixture = await createUnitFixture()));
afterAll(() => fixture.close());

type Row = Record<string, unknown>;
const rows = (query: string) => fixture.db.all<Row>(sql.raw(query));
const names = async (query: string) => (await rows(query)).map((row) => String(row.name));

it("every foreign key's columns lead an index of its table, or its primary key", async () => {
  const tables = await names(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'",
  );
  const unindexed: string[] = [];
  let keys = 0;
  for (const table of tables) {
    const keyColumns = new Map<number, string[]>();
    for (const key of await rows(`SELECT * FROM pragma_foreign_key_list('${table}') ORDER BY id, seq`))
      keyColumns.set(Number(key.id), [...(keyColumns.get(Number(key.id)) ?? []), String(key.from)]);
    if (keyColumns.size === 0) continue;
    // Each index's columns in order, and the primary key's (a rowid table's INTEGER key is no index).
    const leads = [await names(`SELECT name FROM pragma_table_info('${table}') WHERE pk > 0 ORDER BY pk`)];
    for (const index of await names(`SELECT name FROM pragma_index_list('${table}')`))
      leads.push(await names(`SELECT name FROM pragma_index_info('${index}') ORDER BY seqno`));
    for (const columns of keyColumns.values()) {
      keys++;
      if (!leads.some((lead) => columns.every((column, i) => lead[i] === column)))
        unindexed.push(`${table}(${columns.join(", ")})`);
    }
  }
  expect(keys).toBeGreaterThanOrEqual(10);
  expect(unindexed).toEqual([]);
});
