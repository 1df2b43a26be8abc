ALTER TABLE "sessions" ADD COLUMN "approval_needed" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "approved_by" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "approved_at" timestamp with time zone;