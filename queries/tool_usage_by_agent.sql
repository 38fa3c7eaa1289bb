-- grain: one row per agent and judge of the Tool Usage scores
-- order: agent, judge
-- columns:
--   agent            agent name, else service name
--   judge            judge: a model id, or rules-v1 (NULL for rows no judge wrote)
--   turns            turns with a Tool Usage row
--   scored           turns scored
--   not_run          turns where the agent had no tools
--   errors           turns the judge could not score (retried next run)
--   mean_tool_usage  mean Tool Usage (0-10) of scored turns
--   low_share        share of scored turns below 5
--   no_call_turns    scored turns with tools but no call
--   missed_calls     of those, turns where a call was needed
--   calls_judged     calls with a verdict
--   bad_choice       calls whose tool choice was wrong (unknown, unsuited, repeated)
--   bad_arguments    calls whose arguments were wrong (missing, invalid, invented)
WITH u AS (
    SELECT
        turn_agent(t.agent_name, t.service_name) AS agent,
        s.judge,
        s.status,
        s.value,
        len(t.calls) AS n_calls,
        json_extract_string(s.details, '$.call_needed') AS call_needed,
        from_json(json_extract(s.details, '$.calls'),
                  '[{"choice_ok": "BOOLEAN", "arguments_ok": "BOOLEAN"}]') AS verdicts
    FROM scores AS s
    JOIN turns AS t ON t.turn_id = s.turn_id
    WHERE s.scorer = 'tool_usage'
)
SELECT
    agent,
    judge,
    count(*) AS turns,
    count(*) FILTER (WHERE status = 'scored') AS scored,
    count(*) FILTER (WHERE status = 'not_run') AS not_run,
    count(*) FILTER (WHERE status = 'error') AS errors,
    avg(value) FILTER (WHERE status = 'scored') AS mean_tool_usage,
    avg(CASE WHEN value < 5 THEN 1.0 ELSE 0.0 END) FILTER (WHERE status = 'scored') AS low_share,
    count(*) FILTER (WHERE status = 'scored' AND n_calls = 0) AS no_call_turns,
    count(*) FILTER (WHERE status = 'scored' AND n_calls = 0 AND call_needed = 'true')
        AS missed_calls,
    coalesce(sum(len(verdicts)) FILTER (WHERE status = 'scored'), 0) AS calls_judged,
    coalesce(sum(len(list_filter(verdicts, lambda v: NOT v.choice_ok)))
        FILTER (WHERE status = 'scored'), 0) AS bad_choice,
    coalesce(sum(len(list_filter(verdicts, lambda v: NOT v.arguments_ok)))
        FILTER (WHERE status = 'scored'), 0) AS bad_arguments
FROM u
GROUP BY agent, judge
