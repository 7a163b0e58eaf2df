DROP INDEX "changes_kind_idx";--> statement-breakpoint
CREATE INDEX "changes_kind_idx" ON "changes" USING btree ("kind","id");