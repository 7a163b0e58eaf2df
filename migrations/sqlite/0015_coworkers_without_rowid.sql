-- Custom SQL migration file, put your code below! --
-- coworkers is keyed by uuid: WITHOUT ROWID stores each uuid once, in the table's own b-tree, where
-- a rowid table kept it twice (the row and sqlite_autoindex_coworkers_1). drizzle's schema cannot
-- say WITHOUT ROWID, so the table is rebuilt here, by SQLite's procedure for a table others
-- reference (src/db/migrate.ts runs migrations with foreign keys off and checks them before commit).
CREATE TABLE `__new_coworkers` (
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
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_coworkers` SELECT `uuid`, `first_seen_run`, `first_seen_at`, `removed_run`, `removed_at`,
  `last_seen_run`, `last_seen_at`, `returned_count`, `last_returned_run` FROM `coworkers` ORDER BY `uuid`;
--> statement-breakpoint
DROP TABLE `coworkers`;
--> statement-breakpoint
ALTER TABLE `__new_coworkers` RENAME TO `coworkers`;
--> statement-breakpoint
CREATE INDEX `coworkers_removed_idx` ON `coworkers` (`removed_run`) WHERE removed_run is not null;
