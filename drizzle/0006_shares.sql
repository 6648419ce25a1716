CREATE TABLE `shares` (
	`id` text PRIMARY KEY NOT NULL,
	`creator_id` integer NOT NULL,
	`files` text NOT NULL,
	`expires_ms` integer,
	`code_hash` text DEFAULT '' NOT NULL,
	`accessed` integer DEFAULT 0 NOT NULL,
	`max_accessed` integer DEFAULT 0 NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`remark` text DEFAULT '' NOT NULL,
	`readme` text DEFAULT '' NOT NULL,
	`header` text DEFAULT '' NOT NULL,
	`order_by` text DEFAULT '' NOT NULL,
	`order_direction` text DEFAULT '' NOT NULL,
	`extract_folder` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`creator_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shares_creator_id_idx` ON `shares` (`creator_id`);