// Writes an AList fixture (alist-fixtures.ts) to an SQLite file, as AList's GORM would have it.
import Sqlite from "libsql";
import type { AListFixture } from "./alist-fixtures.ts";

export function writeAListDatabase(file: string, fixture: AListFixture): void {
  const db = new Sqlite(file);
  try {
    for (const [table, columns] of Object.entries(fixture.schema)) {
      db.exec(`CREATE TABLE \`${fixture.prefix}${table}\` (${columns.join(",")})`);
    }
    for (const [table, rows] of Object.entries(fixture.rows)) {
      for (const row of rows) {
        const columns = Object.keys(row);
        db.prepare(
          `INSERT INTO \`${fixture.prefix}${table}\` (${columns.map((c) => `\`${c}\``).join(",")}) VALUES (${columns.map(() => "?").join(",")})`,
        ).run(...columns.map((c) => row[c]));
      }
    }
  } finally {
    db.close();
  }
}
