CREATE TABLE "boot_grants" (
	"attempt" text PRIMARY KEY NOT NULL,
	"node" text NOT NULL,
	"purpose" text NOT NULL,
	"window_ends_at" timestamp with time zone NOT NULL,
	"ticket_hash" text,
	"ticket_expires_at" timestamp with time zone,
	"exchanged_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "boot_grants_purpose_ck" CHECK ("boot_grants"."purpose" in ('report','deploy','disk'))
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "scope" text;--> statement-breakpoint
CREATE UNIQUE INDEX "boot_grants_node_purpose_idx" ON "boot_grants" USING btree ("node","purpose");--> statement-breakpoint
CREATE UNIQUE INDEX "boot_grants_ticket_idx" ON "boot_grants" USING btree ("ticket_hash");--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_scope_ck" CHECK ("api_tokens"."scope" is null or ("api_tokens"."role" = 'node' and "api_tokens"."scope" in ('report','deploy','disk')));