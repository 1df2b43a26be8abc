-- Shared rate limit buckets (src/db/rate-limits.ts). UNLOGGED: no WAL for a table written on every
-- sync; a crash empties it, which only refills every bucket.
CREATE UNLOGGED TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"burst" double precision NOT NULL,
	"per_second" double precision NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
-- A credential's end is announced to every API replica (src/api/credential-watch.ts), whoever ends it:
-- the API, the CLI, or SQL by hand. NOTIFY is delivered at commit.
CREATE FUNCTION "bootorch_api_token_ended"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
     OR (NEW.expires_at IS NOT NULL AND NEW.expires_at IS DISTINCT FROM OLD.expires_at AND NEW.expires_at <= now()) THEN
    PERFORM pg_notify('bootorch_credentials', OLD.id);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "api_tokens_ended" AFTER UPDATE OR DELETE ON "api_tokens"
	FOR EACH ROW EXECUTE FUNCTION "bootorch_api_token_ended"();
