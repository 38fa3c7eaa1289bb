-- grain: one row per scorer that has written scores
-- columns:
--   scorer              scorer name
--   turns               turns in the warehouse
--   scored              turns scored
--   inconclusive        turns the scorer could not judge
--   not_run             turns the scorer does not apply to
--   errors              turns where scoring failed
--   missing             turns with no row for this scorer yet
--   stale               rows computed on an older version of the turn (content_hash differs)
--   scored_share        scored / turns
--   inconclusive_share  inconclusive / turns
--   not_run_share       not_run / turns
--   error_share         errors / turns
WITH totals AS (SELECT count(*) AS turns FROM turns),
per AS (
    SELECT
        s.scorer,
        count(*) FILTER (WHERE s.status = 'scored') AS scored,
        count(*) FILTER (WHERE s.status = 'inconclusive') AS inconclusive,
        count(*) FILTER (WHERE s.status = 'not_run') AS not_run,
        count(*) FILTER (WHERE s.status = 'error') AS errors,
        count(*) AS present,
        count(*) FILTER (WHERE s.content_hash <> t.content_hash) AS stale
    FROM scores AS s
    -- Scores of turns no longer in the warehouse (rebuilt away) do not count.
    JOIN turns AS t ON t.turn_id = s.turn_id
    GROUP BY s.scorer
)
SELECT
    per.scorer,
    totals.turns,
    per.scored,
    per.inconclusive,
    per.not_run,
    per.errors,
    totals.turns - per.present AS missing,
    per.stale,
    per.scored / nullif(totals.turns, 0) AS scored_share,
    per.inconclusive / nullif(totals.turns, 0) AS inconclusive_share,
    per.not_run / nullif(totals.turns, 0) AS not_run_share,
    per.errors / nullif(totals.turns, 0) AS error_share
FROM per CROSS JOIN totals
