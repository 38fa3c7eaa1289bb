-- Every ingest, labels, score and nightly run. ended_at/outcome stay NULL while it runs;
-- a run found unfinished by the next lock holder is marked 'interrupted'.
CREATE TABLE runs (
    run_id VARCHAR NOT NULL PRIMARY KEY,
    kind VARCHAR NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ,
    outcome VARCHAR CHECK (outcome IN ('ok', 'partial', 'failed', 'interrupted')),
    summary JSON,
    config JSON,
    error VARCHAR
);
