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
-- Each turn's case now (warehouse.labels.TURN_CASES): by case_id, else by normalised
-- request text (request_norms), the smallest case_id first.
text_matches AS (
    SELECT t.turn_id, min(x.case_id) AS case_id
    FROM turns AS t
    JOIN request_norms AS n ON n.turn_id = t.turn_id AND n.content_hash = t.content_hash
    JOIN (SELECT md5_number(input_norm) AS norm_md5, case_id FROM labels) AS x
      ON x.norm_md5 = n.norm_md5
    WHERE NOT EXISTS (SELECT 1 FROM labels AS l WHERE l.case_id = t.case_id)
    GROUP BY t.turn_id
),
-- A case's fingerprint (warehouse.labels.LABEL_HASH): its id and label fields.
hashed_labels AS (
    SELECT case_id,
           md5(to_json(struct_pack(case_id := case_id, canary := canary,
                                   ideal_response := ideal_response, match_mode := match_mode,
                                   expected_tools := expected_tools,
                                   expected_tools_mode := expected_tools_mode,
                                   should_decline := should_decline))) AS label_hash
    FROM labels
),
turn_cases AS (
    SELECT t.turn_id, l.label_hash FROM turns AS t JOIN hashed_labels AS l USING (case_id)
    UNION ALL
    SELECT m.turn_id, l.label_hash FROM text_matches AS m JOIN hashed_labels AS l USING (case_id)
),
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
        -- A label-reading scorer's row records `<content_hash>:<label_hash>` ('' for no
        -- case: warehouse.labels.scored_hash); rows from before that record the content's
        -- alone, and count by it.
        count(*) FILTER (WHERE CASE WHEN contains(s.content_hash, ':')
            THEN s.content_hash <> t.content_hash || ':' || coalesce(c.label_hash, '')
            ELSE s.content_hash <> t.content_hash END) AS stale
    FROM scores AS s
    -- Scores of turns no longer in the warehouse (rebuilt away) do not count.
    JOIN turns AS t ON t.turn_id = s.turn_id
    LEFT JOIN turn_cases AS c ON c.turn_id = s.turn_id
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
