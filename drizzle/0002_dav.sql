CREATE TABLE `app_passwords` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`name` text NOT NULL,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`pwd_ts` integer NOT NULL,
	`last_used_at` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `app_passwords_hash_idx` ON `app_passwords` (`hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `app_passwords_user_name_idx` ON `app_passwords` (`user_id`,`name`);--> statement-breakpoint
CREATE TABLE `dav_locks` (
	`token` text PRIMARY KEY NOT NULL,
	`path` text NOT NULL,
	`depth` integer NOT NULL,
	`exclusive` integer NOT NULL,
	`owner` text DEFAULT '' NOT NULL,
	`user_id` integer NOT NULL,
	`timeout_seconds` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dav_locks_path_idx` ON `dav_locks` (`path`);--> statement-breakpoint
CREATE INDEX `dav_locks_expires_at_idx` ON `dav_locks` (`expires_at`);--> statement-breakpoint
CREATE TABLE `dav_properties` (
	`path` text NOT NULL,
	`name` text NOT NULL,
	`xml` text NOT NULL,
	PRIMARY KEY(`path`, `name`)
);
