-- Custom SQL migration file, put your code below! ---- Each body is stored once: an added or returned change's entry is the body of the version its run
-- opened for that appearance, a removed change's is the body of the version its run closed. Only an
-- exact match of the text becomes a reference, so every change reads back byte for byte as before.
UPDATE changes SET version_id = (
  SELECT min(v.id) FROM versions v
   WHERE v.uuid = changes.uuid AND v.slot = changes.slot
     AND v.valid_from_run = changes.run_id AND v.body = changes.new_value
) WHERE kind IN ('added', 'returned') AND new_value IS NOT NULL AND version_id IS NULL;
--> statement-breakpoint
UPDATE changes SET new_value = NULL WHERE kind IN ('added', 'returned') AND version_id IS NOT NULL;
--> statement-breakpoint
UPDATE changes SET version_id = (
  SELECT min(v.id) FROM versions v
   WHERE v.uuid = changes.uuid AND v.slot = changes.slot
     AND v.valid_to_run = changes.run_id AND v.body = changes.old_value
) WHERE kind = 'removed' AND old_value IS NOT NULL AND version_id IS NULL;
--> statement-breakpoint
UPDATE changes SET old_value = NULL WHERE kind = 'removed' AND version_id IS NOT NULL;
