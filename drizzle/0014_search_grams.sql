-- The short keywords' postings (docs/decisions.md D24.2): each two-character substring of a node's
-- folded name, and its last character alone, so every character of the name starts a gram. WITHOUT
-- ROWID: the primary key is the table, half the size of a rowid table and its index.
CREATE TABLE `search_grams` (
	`gram` text NOT NULL,
	`node_id` integer NOT NULL,
	PRIMARY KEY(`gram`, `node_id`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Triggers cannot hold a WITH clause, so positions 0..n-1 come from json_each over a JSON array of
-- n zeros, made from zeroblob(n)'s hex. substr and length count characters, as the keywords do.
CREATE TRIGGER `search_nodes_grams_insert` AFTER INSERT ON `search_nodes` BEGIN
  INSERT OR IGNORE INTO `search_grams` (`gram`, `node_id`)
    SELECT substr(new.`folded`, p.key + 1, 2), new.`id`
      FROM json_each('[' || substr(replace(hex(zeroblob(length(new.`folded`) - 1)), '00', ',0'), 2) || ']') AS p
    UNION ALL SELECT substr(new.`folded`, -1), new.`id`;
END;
--> statement-breakpoint
-- Skipped while the index is emptied whole (store.ts emptyIndex deletes every gram at once).
CREATE TRIGGER `search_nodes_grams_delete` AFTER DELETE ON `search_nodes`
WHEN NOT EXISTS (SELECT 1 FROM `search_queue` WHERE `path` = '') BEGIN
  DELETE FROM `search_grams` WHERE `node_id` = old.`id` AND `gram` IN (
    SELECT substr(old.`folded`, p.key + 1, 2)
      FROM json_each('[' || substr(replace(hex(zeroblob(length(old.`folded`) - 1)), '00', ',0'), 2) || ']') AS p
    UNION ALL SELECT substr(old.`folded`, -1));
END;
--> statement-breakpoint
CREATE TRIGGER `search_nodes_grams_update` AFTER UPDATE OF `folded` ON `search_nodes` BEGIN
  DELETE FROM `search_grams` WHERE `node_id` = old.`id` AND `gram` IN (
    SELECT substr(old.`folded`, p.key + 1, 2)
      FROM json_each('[' || substr(replace(hex(zeroblob(length(old.`folded`) - 1)), '00', ',0'), 2) || ']') AS p
    UNION ALL SELECT substr(old.`folded`, -1));
  INSERT OR IGNORE INTO `search_grams` (`gram`, `node_id`)
    SELECT substr(new.`folded`, p.key + 1, 2), new.`id`
      FROM json_each('[' || substr(replace(hex(zeroblob(length(new.`folded`) - 1)), '00', ',0'), 2) || ']') AS p
    UNION ALL SELECT substr(new.`folded`, -1), new.`id`;
END;
--> statement-breakpoint
-- An index built before this migration gets its postings now (once; a build writes them as it goes).
INSERT OR IGNORE INTO `search_grams` (`gram`, `node_id`)
  SELECT substr(n.`folded`, p.key + 1, 2), n.`id` FROM `search_nodes` AS n,
    json_each('[' || substr(replace(hex(zeroblob(length(n.`folded`) - 1)), '00', ',0'), 2) || ']') AS p
  UNION ALL SELECT substr(`folded`, -1), `id` FROM `search_nodes`;
