CREATE TABLE "console_chunks" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"node" text NOT NULL,
	"attempt" timestamp with time zone NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"text" text NOT NULL,
	"bytes" integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX "console_chunks_node_attempt_idx" ON "console_chunks" USING btree ("node","attempt","seq");--> statement-breakpoint
CREATE INDEX "console_chunks_at_idx" ON "console_chunks" USING btree ("at");