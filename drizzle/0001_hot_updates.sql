DROP INDEX "components_phase_idx";--> statement-breakpoint
-- Room on every page for HOT updates: most engine writes (actions, tokens, reports) change no indexed column.
ALTER TABLE "components" SET (fillfactor = 70);--> statement-breakpoint
ALTER TABLE "component_events" SET (autovacuum_vacuum_insert_scale_factor = 0.05);
