ALTER TABLE `versions` ADD `body_hash` text;--> statement-breakpoint
CREATE INDEX `changes_kind_idx` ON `changes` (`kind`,`id`);