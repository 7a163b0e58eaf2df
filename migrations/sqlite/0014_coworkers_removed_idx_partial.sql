DROP INDEX `coworkers_removed_idx`;--> statement-breakpoint
CREATE INDEX `coworkers_removed_idx` ON `coworkers` (`removed_run`) WHERE removed_run is not null;