CREATE TABLE `task_units` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`task_id` text NOT NULL,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`state` text DEFAULT 'queued' NOT NULL,
	`ticket` integer DEFAULT 0 NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_until_ms` integer NOT NULL,
	`bytes_done` integer DEFAULT 0 NOT NULL,
	`error` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `task_units_task_state_idx` ON `task_units` (`task_id`,`state`);--> statement-breakpoint
CREATE INDEX `task_units_lease_idx` ON `task_units` (`state`,`lease_until_ms`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`creator_id` integer NOT NULL,
	`creator` text NOT NULL,
	`creator_role` text DEFAULT '[]' NOT NULL,
	`state` integer DEFAULT 0 NOT NULL,
	`error` text DEFAULT '' NOT NULL,
	`total_bytes` integer DEFAULT 0 NOT NULL,
	`done_bytes` integer DEFAULT 0 NOT NULL,
	`units_total` integer DEFAULT 0 NOT NULL,
	`units_done` integer DEFAULT 0 NOT NULL,
	`cancel_requested` integer DEFAULT false NOT NULL,
	`payload` text NOT NULL,
	`created_at_ms` integer NOT NULL,
	`started_at_ms` integer,
	`ended_at_ms` integer
);
--> statement-breakpoint
CREATE INDEX `tasks_kind_state_idx` ON `tasks` (`kind`,`state`,`creator_id`);