CREATE INDEX "components_status_id_idx" ON "components" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "components_phase_id_idx" ON "components" USING btree ("phase","id");--> statement-breakpoint
CREATE INDEX "components_reason_id_idx" ON "components" USING btree ("failure_reason","id");--> statement-breakpoint
CREATE INDEX "components_session_id_idx" ON "components" USING btree ("session","id");