ALTER TABLE `runs` ADD `trigger` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `scheduled_for` text;--> statement-breakpoint
CREATE UNIQUE INDEX `runs_scheduled_for_idx` ON `runs` (`scheduled_for`) WHERE scheduled_for is not null;