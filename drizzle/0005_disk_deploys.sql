CREATE TABLE "component_deploys" (
	"id" text PRIMARY KEY NOT NULL,
	"session" text NOT NULL,
	"session_tenant" text DEFAULT '' NOT NULL,
	"spec" jsonb NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"message" text DEFAULT '' NOT NULL,
	"heartbeat_at" timestamp with time zone,
	"state_at" timestamp with time zone DEFAULT now() NOT NULL,
	"reached" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "component_deploys_state_ck" CHECK ("component_deploys"."state" in ('pending','starting','downloading','verifying','writing','written','booting_disk','active','failed'))
);
--> statement-breakpoint
ALTER TABLE "components" DROP CONSTRAINT "components_phase_ck";--> statement-breakpoint
ALTER TABLE "components" ADD CONSTRAINT "components_phase_ck" CHECK ("components"."phase" in ('', 'powering_on', 'powering_off', 'configuring', 'deploying', 'writing', 'switching_to_disk', 'booting_disk'));