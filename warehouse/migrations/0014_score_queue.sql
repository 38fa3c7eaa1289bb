-- The score queue (issue 15): the turns whose scores may be stale, so a score run reads
-- those instead of joining every turn to every score (warehouse.score_queue).
--
-- score_queue: a turn enters in the transaction that loads or replaces it (ingest) or
-- loads or changes a case it joins (labels); it leaves once every scorer of the queue's
-- scope has a current score for it (or the scope leaves it out: sample, agent choice).
-- No key: a turn may be in twice (readers take DISTINCT); an index would cost every load.
CREATE TABLE score_queue (
    turn_id VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,  -- 'turn' (loaded), 'case' (its case may have changed), 'scan'
    enqueued_at TIMESTAMPTZ NOT NULL
);

-- score_queue_scope: per scorer, the scope the queue is complete for: no turn outside
-- the queue has a pending pair of that scorer at that version, in that sample (NULL:
-- every turn), for an agent not in score_queue_off. A scorer without a row, at another
-- version, or run on a larger sample or more agents, is found by one full pass, which
-- fills the queue and writes its row.
CREATE TABLE score_queue_scope (
    scorer VARCHAR NOT NULL PRIMARY KEY,
    version VARCHAR NOT NULL,
    labels BOOLEAN NOT NULL,  -- the scorer reads labels (its scores record their case)
    sample_bucket BIGINT      -- md5_number(turn_id) % 1000000 below this; NULL: all
);
CREATE TABLE score_queue_off (
    scorer VARCHAR NOT NULL,
    agent VARCHAR             -- turn_agent(); NULL is an agent too
);

-- score_queue_state: one row, or none (the queue is not trusted: a warehouse from before
-- this migration, whose pending pairs no SQL can know, since scorer versions, sampling
-- and the agent choice live in code and configuration). Fingerprints of what the pending
-- rule reads, as of the last time the queue was known complete; the writers that keep
-- the queue (ingest, labels, the score runner) keep them too, so a mismatch means a write
-- the queue did not see (SQL by hand, another engine): the next run does the full pass.
CREATE TABLE score_queue_state (
    turns_print UBIGINT NOT NULL,
    scores_print UBIGINT NOT NULL,
    labels_print UBIGINT NOT NULL
);

-- Row fingerprints, combined by bit_xor (order-free; removing a row xors it out again).
CREATE MACRO turn_print(turn_id, content_hash) AS hash(turn_id, content_hash);
CREATE MACRO score_print(turn_id, scorer, scorer_version, status, content_hash) AS
    hash(turn_id, scorer, scorer_version, status, content_hash);
-- What a case's join and label_hash read (0010_turn_cases.sql): its id, text and fields.
CREATE MACRO label_print(case_id, input_norm, canary, ideal_response, match_mode,
                         expected_tools, expected_tools_mode, should_decline) AS
    hash(case_id, input_norm, canary, ideal_response, match_mode, expected_tools,
         expected_tools_mode, should_decline);
