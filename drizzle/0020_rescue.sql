ALTER TABLE "sessions" DROP CONSTRAINT "sessions_operation_ck";--> statement-breakpoint
ALTER TABLE "components" ADD COLUMN "rescue_kernel" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "components" ADD COLUMN "rescue_kernel_parameters" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "components" ADD COLUMN "rescue_initrd" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_operation_ck" CHECK ("sessions"."operation" in ('boot','reboot','shutdown','rescue','unrescue'));