-- Each turn's normalised request (as its md5), so that turns join labels by text in SQL
-- (warehouse.labels.TURN_CASES): the set-based join that finds the scores a new, changed
-- or removed case makes stale. Normalising is polars (scorers.text, the one
-- implementation), done once per turn content (warehouse.labels.refresh_request_norms).
CREATE TABLE request_norms (
    turn_id VARCHAR NOT NULL PRIMARY KEY,
    content_hash VARCHAR NOT NULL,
    norm_md5 UHUGEINT NOT NULL
);
