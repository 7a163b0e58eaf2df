CREATE TABLE `changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer NOT NULL,
	`at` text NOT NULL,
	`uuid` text NOT NULL,
	`slot` integer NOT NULL,
	`kind` text NOT NULL,
	`field` text,
	`old_value` text,
	`new_value` text,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `changes_uuid_idx` ON `changes` (`uuid`,`id`);--> statement-breakpoint
CREATE INDEX `changes_at_idx` ON `changes` (`at`,`id`);--> statement-breakpoint
CREATE INDEX `changes_run_idx` ON `changes` (`run_id`);--> statement-breakpoint
CREATE INDEX `changes_field_idx` ON `changes` (`field`,`id`);--> statement-breakpoint
CREATE TABLE `coworkers` (
	`uuid` text PRIMARY KEY NOT NULL,
	`first_seen_run` integer NOT NULL,
	`first_seen_at` text NOT NULL,
	`removed_run` integer,
	`removed_at` text,
	`last_seen_run` integer,
	`last_seen_at` text,
	`returned_count` integer DEFAULT 0 NOT NULL,
	`last_returned_run` integer,
	FOREIGN KEY (`first_seen_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`removed_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`last_seen_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`last_returned_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `coworkers_removed_idx` ON `coworkers` (`removed_run`);--> statement-breakpoint
CREATE TABLE `listing_positions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`position` integer NOT NULL,
	`version_id` integer NOT NULL,
	`valid_from_run` integer NOT NULL,
	`valid_to_run` integer,
	FOREIGN KEY (`version_id`) REFERENCES `versions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`valid_from_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`valid_to_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `listing_positions_span_idx` ON `listing_positions` (`valid_from_run`,`valid_to_run`);--> statement-breakpoint
CREATE INDEX `listing_positions_current_idx` ON `listing_positions` (`position`) WHERE valid_to_run is null;--> statement-breakpoint
CREATE TABLE `options_bodies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `options_bodies_body_unique` ON `options_bodies` (`body`);--> statement-breakpoint
CREATE TABLE `runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`status` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`upstream` text NOT NULL,
	`holder_pid` integer,
	`holder_host` text,
	`pages` integer,
	`entries` integer,
	`page_size` integer,
	`added` integer DEFAULT 0 NOT NULL,
	`changed` integer DEFAULT 0 NOT NULL,
	`removed` integer DEFAULT 0 NOT NULL,
	`returned` integer DEFAULT 0 NOT NULL,
	`unchanged` integer DEFAULT 0 NOT NULL,
	`options_body_id` integer,
	`unknown_fields` text,
	`error_code` text,
	`error_message` text,
	FOREIGN KEY (`options_body_id`) REFERENCES `options_bodies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `runs_status_finished_idx` ON `runs` (`status`,`finished_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `runs_one_running_idx` ON `runs` (`status`) WHERE status = 'running';--> statement-breakpoint
CREATE TABLE `versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uuid` text NOT NULL,
	`slot` integer NOT NULL,
	`body` text NOT NULL,
	`valid_from_run` integer NOT NULL,
	`valid_to_run` integer,
	FOREIGN KEY (`uuid`) REFERENCES `coworkers`(`uuid`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`valid_from_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`valid_to_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `versions_uuid_idx` ON `versions` (`uuid`,`valid_from_run`);--> statement-breakpoint
CREATE INDEX `versions_current_idx` ON `versions` (`valid_to_run`) WHERE valid_to_run is null;