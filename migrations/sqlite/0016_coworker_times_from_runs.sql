ALTER TABLE `coworkers` DROP COLUMN `first_seen_at`;--> statement-breakpoint
ALTER TABLE `coworkers` DROP COLUMN `removed_at`;--> statement-breakpoint
ALTER TABLE `coworkers` DROP COLUMN `last_seen_at`;