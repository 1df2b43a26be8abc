ALTER TABLE "sessions" ADD COLUMN "canary_accepted" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "failed_at_resume" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Rollout progress used to ride in the policy JSON under hidden keys; move it to the columns.
UPDATE "sessions" SET "canary_accepted" = coalesce(("rollout"->>'_canaryAccepted')::boolean, false),
  "failed_at_resume" = coalesce(("rollout"->>'_failedAtResume')::int, 0),
  "rollout" = "rollout" - '_canaryAccepted' - '_failedAtResume'
  WHERE "rollout" ? '_canaryAccepted' OR "rollout" ? '_failedAtResume';
