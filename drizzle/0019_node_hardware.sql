ALTER TABLE "node_inventory" ADD COLUMN "hardware" jsonb;--> statement-breakpoint
ALTER TABLE "node_inventory" ADD COLUMN "inspected_at" timestamp with time zone;