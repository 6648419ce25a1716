-- The build queue's lease named as task_units' one (docs/decisions.md D24.1); SQLite renames in place.
ALTER TABLE `search_queue` RENAME COLUMN `lease_until` TO `lease_until_ms`;
