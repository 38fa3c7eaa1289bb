-- grain: one row per scorer that has written scores or that the last score run switched off for some agent
-- order: scorer
-- columns:
--   scorer              scorer name
--   turns               turns in the warehouse
--   scored              turns scored
--   inconclusive        turns the scorer could not judge
--   not_run             turns the scorer does not apply to
--   errors              turns where scoring failed
--   missing             turns with no row for this scorer yet, of agents it runs for
--   disabled            turns with no row because the last score run's per-agent choice (turnscore.toml [agents.*]) switched the scorer off for their agent
--   stale               rows computed on an older version of the turn (content_hash differs) or, for a scorer that reads labels, on another case than the turn's now (new, changed or removed)
--   scored_share        scored / turns
--   inconclusive_share  inconclusive / turns
--   not_run_share       not_run / turns
--   error_share         errors / turns
WITH totals AS (SELECT count(*) AS turns FROM turns),
-- The (agent, scorer) pairs the latest finished score run switched off
-- (warehouse.score_run.ScoreReport.disabled).
switched_off AS (
    SELECT pair[1] AS agent, pair[2] AS scorer
    FROM (SELECT unnest(from_json(summary->'disabled', '[["VARCHAR"]]')) AS pair
          FROM (SELECT summary FROM runs
                WHERE kind = 'score' AND summary IS NOT NULL AND ended_at IS NOT NULL
                ORDER BY started_at DESC LIMIT 1))
),
disabled AS (
    SELECT o.scorer, count(*) AS disabled
    FROM turns AS t
    JOIN switched_off AS o ON o.agent IS NOT DISTINCT FROM turn_agent(t.agent_name, t.service_name)
    WHERE NOT EXISTS (SELECT 1 FROM scores AS s WHERE s.turn_id = t.turn_id AND s.scorer = o.scorer)
    GROUP BY o.scorer
),
per AS (
    SELECT
        s.scorer,
        count(*) FILTER (WHERE s.status = 'scored') AS scored,
        count(*) FILTER (WHERE s.status = 'inconclusive') AS inconclusive,
        count(*) FILTER (WHERE s.status = 'not_run') AS not_run,
        count(*) FILTER (WHERE s.status = 'error') AS errors,
        count(*) AS present,
        -- The one staleness rule (migration 0011), the score runner's too.
        count(*) FILTER (WHERE st.stale) AS stale
    FROM scores AS s
    -- Scores of turns no longer in the warehouse (rebuilt away) do not count.
    JOIN score_staleness() AS st ON st.turn_id = s.turn_id AND st.scorer = s.scorer
    GROUP BY s.scorer
),
-- A scorer switched off for every agent has no score row: it is listed by its disabled
-- count alone.
names AS (SELECT scorer FROM per UNION SELECT scorer FROM disabled)
SELECT
    names.scorer,
    totals.turns,
    coalesce(per.scored, 0) AS scored,
    coalesce(per.inconclusive, 0) AS inconclusive,
    coalesce(per.not_run, 0) AS not_run,
    coalesce(per.errors, 0) AS errors,
    totals.turns - coalesce(per.present, 0) - coalesce(disabled.disabled, 0) AS missing,
    coalesce(disabled.disabled, 0) AS disabled,
    coalesce(per.stale, 0) AS stale,
    coalesce(per.scored, 0) / nullif(totals.turns, 0) AS scored_share,
    coalesce(per.inconclusive, 0) / nullif(totals.turns, 0) AS inconclusive_share,
    coalesce(per.not_run, 0) / nullif(totals.turns, 0) AS not_run_share,
    coalesce(per.errors, 0) / nullif(totals.turns, 0) AS error_share
FROM names CROSS JOIN totals
LEFT JOIN per ON per.scorer = names.scorer
LEFT JOIN disabled ON disabled.scorer = names.scorer
