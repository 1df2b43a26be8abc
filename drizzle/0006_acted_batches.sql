CREATE TABLE "acted_batches" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"ids" text[] NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
