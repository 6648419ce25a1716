-- The trigram index over search_nodes.name (docs/decisions.md D11.1): external content, so names
-- are stored once; the triggers keep it in step with every insert, delete and rename.
CREATE VIRTUAL TABLE `search_fts` USING fts5(`name`, content='search_nodes', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `search_nodes_fts_insert` AFTER INSERT ON `search_nodes` BEGIN
  INSERT INTO `search_fts`(rowid, `name`) VALUES (new.`id`, new.`name`);
END;
--> statement-breakpoint
-- Skipped while the index is emptied whole (store.ts emptyIndex): FTS5's 'delete-all' clears it at once,
-- where a delete per row re-reads each name's trigrams (minutes for 200,000 names on a busy machine).
CREATE TRIGGER `search_nodes_fts_delete` AFTER DELETE ON `search_nodes`
WHEN NOT EXISTS (SELECT 1 FROM `search_queue` WHERE `path` = '') BEGIN
  INSERT INTO `search_fts`(`search_fts`, rowid, `name`) VALUES ('delete', old.`id`, old.`name`);
END;
--> statement-breakpoint
CREATE TRIGGER `search_nodes_fts_update` AFTER UPDATE OF `name` ON `search_nodes` BEGIN
  INSERT INTO `search_fts`(`search_fts`, rowid, `name`) VALUES ('delete', old.`id`, old.`name`);
  INSERT INTO `search_fts`(rowid, `name`) VALUES (new.`id`, new.`name`);
END;
