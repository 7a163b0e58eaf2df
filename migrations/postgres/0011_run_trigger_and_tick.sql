ALTER TABLE "runs" ADD COLUMN "trigger" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "scheduled_for" text COLLATE "C";--> statement-breakpoint
CREATE UNIQUE INDEX "runs_scheduled_for_idx" ON "runs" USING btree ("scheduled_for") WHERE scheduled_for is not null;