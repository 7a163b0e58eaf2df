ALTER TABLE "webhook_endpoints" ADD COLUMN "channel" text COLLATE "C" DEFAULT 'webhook' NOT NULL;--> statement-breakpoint
-- A notification target's endpoint was told apart by its key's prefix before the column said so.
UPDATE "webhook_endpoints" SET "channel" = 'notify' WHERE left("url", 7) = 'notify:';
