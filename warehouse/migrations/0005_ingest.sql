-- Ingest lineage: what went wrong where, and which files (by content) were already read.
CREATE TABLE ingest_errors (
    run_id VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    position VARCHAR,
    trace_id VARCHAR,
    span_id VARCHAR,
    message VARCHAR NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);

CREATE TABLE ingested_files (
    file_key VARCHAR NOT NULL PRIMARY KEY,
    path VARCHAR NOT NULL,
    bytes BIGINT NOT NULL,
    spans BIGINT NOT NULL,
    logs BIGINT NOT NULL,
    run_id VARCHAR NOT NULL,
    ingested_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
