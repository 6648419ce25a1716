-- The storage list reads the enabled storages no check has seen (status ""), nearly always none:
-- by this index, a few rows instead of every storage (docs/decisions.md D26.10).
CREATE INDEX `storages_status_idx` ON `storages` (`status`);
