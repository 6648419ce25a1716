CREATE TABLE `metas` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`path` text NOT NULL,
	`password` text DEFAULT '' NOT NULL,
	`p_sub` integer DEFAULT false NOT NULL,
	`write` integer DEFAULT false NOT NULL,
	`w_sub` integer DEFAULT false NOT NULL,
	`hide` text DEFAULT '' NOT NULL,
	`h_sub` integer DEFAULT false NOT NULL,
	`readme` text DEFAULT '' NOT NULL,
	`r_sub` integer DEFAULT false NOT NULL,
	`header` text DEFAULT '' NOT NULL,
	`header_sub` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `metas_path_unique` ON `metas` (`path`);