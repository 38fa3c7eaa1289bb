-- What turn assembly could not trust (content not captured, a model call with no content
-- anywhere, calls it could not reconcile), as a list users can filter on
-- (turnscore.ingest.schema TURN_FIELDS `issues`). Existing rows have none recorded; a
-- re-ingest of their spans fills it. Not part of content_hash: scores stay valid.
ALTER TABLE turns ADD COLUMN issues VARCHAR[] NOT NULL DEFAULT [];
