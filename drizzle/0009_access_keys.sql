ALTER TABLE `app_passwords` ADD `path` text DEFAULT '/' NOT NULL;--> statement-breakpoint
ALTER TABLE `app_passwords` ADD `permission` integer DEFAULT -1 NOT NULL;--> statement-breakpoint
ALTER TABLE `app_passwords` ADD `expires_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `app_passwords` ADD `usage` text DEFAULT '["webdav"]' NOT NULL;--> statement-breakpoint
ALTER TABLE `app_passwords` ADD `access_key_id` text;--> statement-breakpoint
ALTER TABLE `app_passwords` ADD `s3_secret` text;--> statement-breakpoint
CREATE UNIQUE INDEX `app_passwords_access_key_id_idx` ON `app_passwords` (`access_key_id`);