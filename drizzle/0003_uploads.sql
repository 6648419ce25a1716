CREATE TABLE `upload_chunks` (
	`session_id` text NOT NULL,
	`idx` integer NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`tag` text NOT NULL,
	PRIMARY KEY(`session_id`, `idx`),
	FOREIGN KEY (`session_id`) REFERENCES `upload_sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `upload_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`path` text NOT NULL,
	`password` text DEFAULT '' NOT NULL,
	`overwrite` integer NOT NULL,
	`storage_id` integer NOT NULL,
	`actual_dir` text NOT NULL,
	`upstream_id` text NOT NULL,
	`size` integer NOT NULL,
	`chunk_size` integer NOT NULL,
	`content_type` text NOT NULL,
	`modified_ms` integer,
	`state` text DEFAULT 'receiving' NOT NULL,
	`last_active` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `upload_sessions_user_idx` ON `upload_sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `upload_sessions_last_active_idx` ON `upload_sessions` (`last_active`);