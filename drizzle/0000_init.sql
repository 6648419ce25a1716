CREATE TABLE `device_sessions` (
	`device_key` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`token_id` text NOT NULL,
	`user_agent` text DEFAULT '' NOT NULL,
	`ip` text DEFAULT '' NOT NULL,
	`last_active` integer NOT NULL,
	`status` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `device_sessions_user_id_idx` ON `device_sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `device_sessions_last_active_idx` ON `device_sessions` (`last_active`);--> statement-breakpoint
CREATE TABLE `login_failures` (
	`scope` text NOT NULL,
	`subject` text NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`scope`, `subject`)
);
--> statement-breakpoint
CREATE INDEX `login_failures_expires_at_idx` ON `login_failures` (`expires_at`);--> statement-breakpoint
CREATE TABLE `pending_otp_enrolments` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `pending_otp_enrolments_created_at_idx` ON `pending_otp_enrolments` (`created_at`);--> statement-breakpoint
CREATE TABLE `roles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`permission_scopes` text DEFAULT '[]' NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `roles_name_unique` ON `roles` (`name`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text DEFAULT '' NOT NULL,
	`help` text DEFAULT '' NOT NULL,
	`type` text DEFAULT 'string' NOT NULL,
	`options` text DEFAULT '' NOT NULL,
	`group` integer DEFAULT 0 NOT NULL,
	`flag` integer DEFAULT 0 NOT NULL,
	`index` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `settings_group_idx` ON `settings` (`group`,`index`);--> statement-breakpoint
CREATE TABLE `ssh_public_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`title` text NOT NULL,
	`fingerprint` text NOT NULL,
	`key_str` text NOT NULL,
	`added_time` integer NOT NULL,
	`last_used_time` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ssh_public_keys_user_title_idx` ON `ssh_public_keys` (`user_id`,`title`);--> statement-breakpoint
CREATE TABLE `storages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`mount_path` text NOT NULL,
	`order` integer DEFAULT 0 NOT NULL,
	`driver` text NOT NULL,
	`cache_expiration` integer DEFAULT 30 NOT NULL,
	`status` text DEFAULT '' NOT NULL,
	`addition` text DEFAULT '{}' NOT NULL,
	`remark` text DEFAULT '' NOT NULL,
	`modified` integer NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`disable_index` integer DEFAULT false NOT NULL,
	`enable_sign` integer DEFAULT false NOT NULL,
	`order_by` text DEFAULT '' NOT NULL,
	`order_direction` text DEFAULT '' NOT NULL,
	`extract_folder` text DEFAULT '' NOT NULL,
	`web_proxy` integer DEFAULT false NOT NULL,
	`webdav_policy` text DEFAULT '' NOT NULL,
	`proxy_range` integer DEFAULT false NOT NULL,
	`down_proxy_url` text DEFAULT '' NOT NULL,
	`down_proxy_sign` integer DEFAULT true NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `storages_mount_path_unique` ON `storages` (`mount_path`);--> statement-breakpoint
CREATE INDEX `storages_order_idx` ON `storages` (`order`,`id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`password_hash` text NOT NULL,
	`pwd_ts` integer DEFAULT 0 NOT NULL,
	`base_path` text DEFAULT '/' NOT NULL,
	`role` text DEFAULT '[]' NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`permission` integer DEFAULT 0 NOT NULL,
	`otp_secret` text,
	`otp_last_step` integer DEFAULT 0 NOT NULL,
	`sso_id` text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);