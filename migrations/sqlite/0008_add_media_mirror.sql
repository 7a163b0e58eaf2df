CREATE TABLE `media_blobs` (
	`sha256` text PRIMARY KEY NOT NULL,
	`size` integer NOT NULL,
	`content_type` text NOT NULL,
	`created_run` integer NOT NULL,
	`dropped_at` text,
	FOREIGN KEY (`created_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `media_runs` (
	`run_id` integer PRIMARY KEY NOT NULL,
	`fetched` integer NOT NULL,
	`revalidated` integer NOT NULL,
	`failed` integer NOT NULL,
	`bytes` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `media_urls` (
	`url` text PRIMARY KEY NOT NULL,
	`etag` text,
	`last_modified` text,
	`checked_run` integer NOT NULL,
	`failure_code` text,
	`failure_message` text,
	FOREIGN KEY (`checked_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `media_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`url` text NOT NULL,
	`sha256` text NOT NULL,
	`valid_from_run` integer NOT NULL,
	`valid_to_run` integer,
	FOREIGN KEY (`sha256`) REFERENCES `media_blobs`(`sha256`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`valid_from_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`valid_to_run`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `media_versions_url_idx` ON `media_versions` (`url`,`valid_from_run`);--> statement-breakpoint
CREATE INDEX `media_versions_span_idx` ON `media_versions` (`valid_from_run`,`valid_to_run`);--> statement-breakpoint
CREATE INDEX `media_versions_sha_idx` ON `media_versions` (`sha256`);