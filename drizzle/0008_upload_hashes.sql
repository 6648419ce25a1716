ALTER TABLE `upload_sessions` ADD `file_md5` text;--> statement-breakpoint
ALTER TABLE `upload_sessions` ADD `file_sha1` text;--> statement-breakpoint
ALTER TABLE `upload_sessions` ADD `file_sha256` text;