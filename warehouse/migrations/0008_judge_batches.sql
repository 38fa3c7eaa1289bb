-- Judge requests sent through the Batch API (warehouse.judge_batch). A batch row is written
-- before anything is sent (state 'submitting'), so a crash between creating the batch and
-- recording its id is reconciled by our batch_key in the batch's metadata, never submitted
-- twice. state: submitting -> open -> collected, or abandoned (never created: its turns
-- are sent again) or failed (refused at submission: its turns got error rows).
CREATE TABLE judge_batches (
    batch_key VARCHAR NOT NULL PRIMARY KEY,
    scorer VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    base_url VARCHAR NOT NULL,
    state VARCHAR NOT NULL
        CHECK (state IN ('submitting', 'open', 'collected', 'abandoned', 'failed')),
    batch_id VARCHAR,
    input_file_id VARCHAR,
    status VARCHAR,
    requests INTEGER NOT NULL,
    run_id VARCHAR NOT NULL,
    submitted_at TIMESTAMPTZ NOT NULL,
    collected_at TIMESTAMPTZ,
    collected_run_id VARCHAR,
    turnaround_ms DOUBLE,
    error VARCHAR
);

-- One row per request of a batch: which turn, scorer, content and cache key it judges, and
-- once collected its reply (the chat-completion body) or why there is none. used_run_id:
-- the run that turned it into a score row (a used item is never read again).
CREATE TABLE judge_batch_items (
    batch_key VARCHAR NOT NULL,
    custom_id VARCHAR NOT NULL,
    turn_id VARCHAR NOT NULL,
    scorer VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    cache_key VARCHAR NOT NULL,
    reply VARCHAR,
    error VARCHAR,
    used_run_id VARCHAR,
    PRIMARY KEY (batch_key, custom_id)
);

-- The provider batch ids each run submitted.
ALTER TABLE runs ADD COLUMN judge_batches VARCHAR[];
