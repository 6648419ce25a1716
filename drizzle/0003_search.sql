CREATE TABLE `search_nodes` (
	`id` integer PRIMARY KEY NOT NULL,
	`path` text NOT NULL,
	`name` text NOT NULL,
	`folded` text NOT NULL,
	`segments` text NOT NULL,
	`is_dir` integer NOT NULL,
	`size` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `search_nodes_path_idx` ON `search_nodes` (`path`);--> statement-breakpoint
CREATE INDEX `search_nodes_name_idx` ON `search_nodes` (`name`,`path`,`folded`);--> statement-breakpoint
CREATE TABLE `search_queue` (
	`path` text PRIMARY KEY NOT NULL,
	`depth` integer NOT NULL,
	`lease_until` integer DEFAULT 0 NOT NULL
);
