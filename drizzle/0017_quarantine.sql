ALTER TABLE "components" ADD COLUMN "failed_sessions" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "components" ADD COLUMN "session_failures" jsonb;--> statement-breakpoint
CREATE INDEX "components_failed_sessions_idx" ON "components" USING btree ("failed_sessions") WHERE failed_sessions > 0;