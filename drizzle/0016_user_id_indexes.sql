-- A user's delete cascades into its WebDAV locks and passkey challenges: by these indexes, not a
-- read of each table whole (src/db/foreign-keys.test.ts holds every foreign key to one).
CREATE INDEX `dav_locks_user_id_idx` ON `dav_locks` (`user_id`);--> statement-breakpoint
CREATE INDEX `webauthn_challenges_user_id_idx` ON `webauthn_challenges` (`user_id`);
