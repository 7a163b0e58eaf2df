DROP INDEX `changes_at_idx`;--> statement-breakpoint
DROP INDEX `changes_field_idx`;--> statement-breakpoint
CREATE INDEX `changes_run_idx` ON `changes` (`run_id`);--> statement-breakpoint
CREATE INDEX `changes_field_idx` ON `changes` (`field`,`id`) WHERE field is not null;--> statement-breakpoint
ALTER TABLE `changes` DROP COLUMN `at`;