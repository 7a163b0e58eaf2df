CREATE TABLE `webhook_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` integer NOT NULL,
	`at` text NOT NULL,
	`duration_ms` integer NOT NULL,
	`http_status` integer,
	`ok` integer NOT NULL,
	`error_code` text,
	`error` text,
	`response_excerpt` text,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`message_id` integer NOT NULL,
	`endpoint_id` integer NOT NULL,
	`status` text NOT NULL,
	`tries` integer DEFAULT 0 NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text NOT NULL,
	`lease_until` text,
	`lease_token` text,
	`created_at` text NOT NULL,
	`finished_at` text,
	FOREIGN KEY (`message_id`) REFERENCES `webhook_messages`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_pending_idx` ON `webhook_deliveries` (`endpoint_id`,`id`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_status_idx` ON `webhook_deliveries` (`status`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`url` text NOT NULL,
	`created_at` text NOT NULL,
	`disabled_at` text,
	`disabled_reason` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_endpoints_url_unique` ON `webhook_endpoints` (`url`);--> statement-breakpoint
CREATE TABLE `webhook_messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`webhook_id` text NOT NULL,
	`type` text NOT NULL,
	`run_id` integer NOT NULL,
	`created_at` text NOT NULL,
	`body` text NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_messages_webhook_id_unique` ON `webhook_messages` (`webhook_id`);--> statement-breakpoint
CREATE INDEX `webhook_messages_run_idx` ON `webhook_messages` (`run_id`);