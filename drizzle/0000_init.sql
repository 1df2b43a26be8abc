CREATE TABLE "api_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"hash" text NOT NULL,
	"role" text NOT NULL,
	"tenant" text,
	"subject" text NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_tokens_role_ck" CHECK ("api_tokens"."role" in ('admin','operator','viewer','node'))
);
--> statement-breakpoint
CREATE TABLE "boot_artifacts" (
	"token" text PRIMARY KEY NOT NULL,
	"kernel" text NOT NULL,
	"kernel_parameters" text NOT NULL,
	"initrd" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "component_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"component_id" text NOT NULL,
	"session" text DEFAULT '' NOT NULL,
	"session_tenant" text DEFAULT '' NOT NULL,
	"kind" text NOT NULL,
	"actor" text NOT NULL,
	"from_phase" text,
	"to_phase" text,
	"from_status" text,
	"to_status" text,
	"action" text,
	"error" text,
	"reason" text,
	"data" jsonb
);
--> statement-breakpoint
CREATE TABLE "components" (
	"id" text PRIMARY KEY NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"phase" text DEFAULT '' NOT NULL,
	"status_override" text DEFAULT '' NOT NULL,
	"status" text GENERATED ALWAYS AS (CASE
    WHEN status_override <> '' THEN status_override
    WHEN phase = 'powering_on' THEN CASE WHEN last_action = 'powering_on' AND NOT last_action_failed
      THEN 'power_on_called' ELSE 'power_on_pending' END
    WHEN phase = 'powering_off' THEN CASE
      WHEN last_action = 'powering_off_gracefully' THEN 'power_off_gracefully_called'
      WHEN last_action = 'powering_off_forcefully' THEN 'power_off_forcefully_called'
      ELSE 'power_off_pending' END
    WHEN phase = 'configuring' THEN 'configuring'
    ELSE 'stable' END) STORED NOT NULL,
	"last_action" text DEFAULT '' NOT NULL,
	"last_action_failed" boolean DEFAULT false NOT NULL,
	"last_action_at" timestamp with time zone,
	"desired_kernel" text DEFAULT '' NOT NULL,
	"desired_kernel_parameters" text DEFAULT '' NOT NULL,
	"desired_initrd" text DEFAULT '' NOT NULL,
	"desired_configuration" text DEFAULT '' NOT NULL,
	"desired_bss_token" text DEFAULT '' NOT NULL,
	"desired_updated_at" timestamp with time zone,
	"actual_kernel" text DEFAULT '' NOT NULL,
	"actual_kernel_parameters" text DEFAULT '' NOT NULL,
	"actual_initrd" text DEFAULT '' NOT NULL,
	"actual_bss_token" text DEFAULT '' NOT NULL,
	"actual_updated_at" timestamp with time zone,
	"staged_kernel" text DEFAULT '' NOT NULL,
	"staged_kernel_parameters" text DEFAULT '' NOT NULL,
	"staged_initrd" text DEFAULT '' NOT NULL,
	"staged_configuration" text DEFAULT '' NOT NULL,
	"staged_session" text DEFAULT '' NOT NULL,
	"staged_updated_at" timestamp with time zone,
	"power_on_attempts" integer DEFAULT 0 NOT NULL,
	"power_off_graceful_attempts" integer DEFAULT 0 NOT NULL,
	"power_off_forceful_attempts" integer DEFAULT 0 NOT NULL,
	"error" text DEFAULT '' NOT NULL,
	"failure_reason" text DEFAULT '' NOT NULL,
	"session" text DEFAULT '' NOT NULL,
	"session_tenant" text DEFAULT '' NOT NULL,
	"retry_policy" integer,
	"queued_seq" bigint,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "components_phase_ck" CHECK ("components"."phase" in ('', 'powering_on', 'powering_off', 'configuring')),
	CONSTRAINT "components_override_ck" CHECK ("components"."status_override" in ('', 'on_hold', 'failed', 'queued'))
);
--> statement-breakpoint
CREATE TABLE "options" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"data" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "options_single_row_ck" CHECK ("options"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "session_status_snapshots" (
	"tenant_key" text DEFAULT '' NOT NULL,
	"name" text NOT NULL,
	"data" jsonb NOT NULL,
	"saved_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "session_status_snapshots_tenant_key_name_pk" PRIMARY KEY("tenant_key","name")
);
--> statement-breakpoint
CREATE TABLE "session_templates" (
	"tenant_key" text DEFAULT '' NOT NULL,
	"name" text NOT NULL,
	"tenant" text,
	"description" text,
	"enable_cfs" boolean DEFAULT true NOT NULL,
	"cfs_configuration" text,
	"boot_sets" jsonb NOT NULL,
	"rollout" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "session_templates_tenant_key_name_pk" PRIMARY KEY("tenant_key","name")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"tenant_key" text DEFAULT '' NOT NULL,
	"name" text NOT NULL,
	"tenant" text,
	"operation" text NOT NULL,
	"template_name" text NOT NULL,
	"limit" text DEFAULT '' NOT NULL,
	"stage" boolean DEFAULT false NOT NULL,
	"include_disabled" boolean DEFAULT false NOT NULL,
	"components" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"start_time" timestamp with time zone DEFAULT now() NOT NULL,
	"end_time" timestamp with time zone,
	"error" text,
	"rollout" jsonb,
	"paused" boolean DEFAULT false NOT NULL,
	"pause_reason" text,
	"aborted" boolean DEFAULT false NOT NULL,
	"created_by" text,
	CONSTRAINT "sessions_tenant_key_name_pk" PRIMARY KEY("tenant_key","name"),
	CONSTRAINT "sessions_operation_ck" CHECK ("sessions"."operation" in ('boot','reboot','shutdown')),
	CONSTRAINT "sessions_status_ck" CHECK ("sessions"."status" in ('pending','running','complete'))
);
--> statement-breakpoint
CREATE TABLE "tenant_xnames" (
	"tenant" text NOT NULL,
	"xname" text NOT NULL,
	CONSTRAINT "tenant_xnames_tenant_xname_pk" PRIMARY KEY("tenant","xname")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_hash_idx" ON "api_tokens" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "boot_artifacts_created_idx" ON "boot_artifacts" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "component_events_component_idx" ON "component_events" USING btree ("component_id","id");--> statement-breakpoint
CREATE INDEX "component_events_session_idx" ON "component_events" USING btree ("session","id");--> statement-breakpoint
CREATE INDEX "components_enabled_status_idx" ON "components" USING btree ("status","id") WHERE enabled;--> statement-breakpoint
CREATE INDEX "components_session_idx" ON "components" USING btree ("session","enabled");--> statement-breakpoint
CREATE INDEX "components_staged_session_idx" ON "components" USING btree ("staged_session") WHERE staged_session <> '';--> statement-breakpoint
CREATE INDEX "components_phase_idx" ON "components" USING btree ("phase");--> statement-breakpoint
CREATE INDEX "components_actual_updated_idx" ON "components" USING btree ("actual_updated_at") WHERE actual_kernel <> '' OR actual_initrd <> '' OR actual_kernel_parameters <> '';--> statement-breakpoint
CREATE INDEX "sessions_status_idx" ON "sessions" USING btree ("status","start_time");--> statement-breakpoint
CREATE UNIQUE INDEX "tenant_xnames_xname_idx" ON "tenant_xnames" USING btree ("xname");