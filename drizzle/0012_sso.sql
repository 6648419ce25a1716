CREATE TABLE `sso_states` (
	`state` text PRIMARY KEY NOT NULL,
	`method` text NOT NULL,
	`nonce` text NOT NULL,
	`code_verifier` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sso_states_expires_at_idx` ON `sso_states` (`expires_at`);--> statement-breakpoint
CREATE INDEX `users_sso_id_idx` ON `users` (`sso_id`);