CREATE TABLE `prunes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`removed_before` text,
	`history_before` text,
	`coworkers` integer NOT NULL,
	`versions` integer NOT NULL,
	`positions` integer NOT NULL,
	`changes` integer NOT NULL,
	`media_versions` integer NOT NULL,
	`files` integer NOT NULL,
	`messages` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `webhook_messages` ADD `pruned_at` text;