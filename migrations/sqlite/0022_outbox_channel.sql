ALTER TABLE `webhook_endpoints` ADD `channel` text DEFAULT 'webhook' NOT NULL;--> statement-breakpoint
-- A notification target's endpoint was told apart by its key's prefix before the column said so.
UPDATE `webhook_endpoints` SET `channel` = 'notify' WHERE substr(`url`, 1, 7) = 'notify:';
