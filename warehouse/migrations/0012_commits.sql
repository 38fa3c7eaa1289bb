-- The warehouse's commit stamp (warehouse.db.record_commit): one row per write
-- transaction that changes what readers see (turns, their errors and files, scores,
-- labels), inserted in that transaction, so the row count moves exactly when such a commit
-- lands. The published snapshot copies it with the tables, so "is the snapshot behind?"
-- compares two counts (warehouse.publish.snapshot_behind) instead of fingerprinting every
-- table. Append-only: two transactions of one run (the score writer thread, a labels
-- upsert) never conflict on it, as they would updating one counter row.
CREATE TABLE _commits (
    run_id VARCHAR NOT NULL,
    committed_at TIMESTAMPTZ NOT NULL
);
