-- The trigram index over search_nodes.name (docs/decisions.md D11.1): external content, so names
-- are stored once; the triggers keep it in step with every insert, delete and rename.
CREATE VIRTUAL TABLE `search_fts` USING fts5(`name`, content='search_nodes', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `search_nodes_fts_insert` AFTER INSERT ON `search_nodes` BEGIN
  INSERT INTO `search_fts`(rowid, `name`) VALUES (new.`id`, new.`name`);
END;
--> statement-breakpoint
CREATE TRIGGER `search_nodes_fts_delete` AFTER DELETE ON `search_nodes` BEGIN
  INSERT INTO `search_fts`(`search_fts`, rowid, `name`) VALUES ('delete', old.`id`, old.`name`);
END;
--> statement-breakpoint
CREATE TRIGGER `search_nodes_fts_update` AFTER UPDATE OF `name` ON `search_nodes` BEGIN
  INSERT INTO `search_fts`(`search_fts`, rowid, `name`) VALUES ('delete', old.`id`, old.`name`);
  INSERT INTO `search_fts`(rowid, `name`) VALUES (new.`id`, new.`name`);
END;
