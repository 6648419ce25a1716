// The SQL scanner of the local libSQL endpoint: statement boundaries and parameter numbering must
// match SQLite's, since the endpoint binds arguments by the indexes it computes. A pure function,
// so no server here.
import { describe, expect, it } from "vitest";

import { inspectSql } from "../sql.ts";

describe("inspectSql", () => {
  it.each([
    ["SELECT 1", 1],
    ["SELECT 1;", 1],
    ["SELECT 1; SELECT 2", 2],
    ["", 0],
    [" ;; -- only a comment; really\n /* and; another */ ", 0],
    ["SELECT 'a;b', \"c;d\", `e;f`, [g;h] FROM x -- ;\n", 1],
    ["SELECT 'it''s; fine'", 1],
    ["SELECT 1 /* unterminated ; comment", 1],
    ["BEGIN; INSERT INTO t VALUES (1); END;", 3],
    ["CREATE TRIGGER x AFTER INSERT ON t BEGIN INSERT INTO u VALUES (1); DELETE FROM v; END; SELECT 1", 2],
    ["create temp trigger x delete on t when (case when 1 then 1 end) begin select case 1 when 2 then 3 end; end", 1],
    ["EXPLAIN CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT 1; END", 1],
  ])("counts the statements of %j", (sql, count) => {
    expect(inspectSql(sql).statementCount).toBe(count);
  });

  it.each([
    ["SELECT ?, ?", [null, null]],
    ["SELECT ?2, ?", [null, "?2", null]],
    ["SELECT ?, ?1", ["?1"]],
    ["SELECT :a, @b, $c, :a, ?", [":a", "@b", "$c", null]],
    ["SELECT $x::y(z), :n1, @ü", ["$x::y(z)", ":n1", "@ü"]],
    ["SELECT '?', \":a\", ? -- ?5\n", [null]],
    ["SELECT ?3 /* ?9 */", [null, null, "?3"]],
    ["SELECT ?99999999", []],
  ])("numbers the parameters of %j like SQLite", (sql, names) => {
    expect(inspectSql(sql).paramNames).toEqual(names);
  });

  it.each([
    ["select 1", "SELECT"],
    ["  insert into t values (1)", "INSERT"],
    ["REPLACE INTO t VALUES (1)", "REPLACE"],
    ["WITH a AS (SELECT 1), b(x) AS MATERIALIZED (SELECT 2) UPDATE t SET x = 1", "UPDATE"],
    ["WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT * FROM c", "SELECT"],
    ["/* lead */ DELETE FROM t", "DELETE"],
    ["(SELECT 1)", undefined],
  ])("finds the verb of %j", (sql, verb) => {
    expect(inspectSql(sql).verb).toBe(verb);
  });
});
