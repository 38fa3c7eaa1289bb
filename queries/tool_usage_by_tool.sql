-- grain: one row per tool and judge (judge NULL: turns with no Tool Usage score yet)
-- columns:
--   tool             tool name (available in a turn, or called by name even if unknown)
--   judge            judge of the Tool Usage scores: a model id, or rules-v1
--   turns_available  turns where the tool was available
--   turns_called     turns where the agent called it
--   scored_turns     of those turns, the ones with a Tool Usage score
--   mean_tool_usage  mean Tool Usage (0-10) of those turns
--   low_share        share of scored turns with Tool Usage below 5
--   low_turns        scored turns with Tool Usage below 5
--   low_verdicts     distinct problems the low-score verdicts name for this tool
WITH usage AS (
    SELECT turn_id, judge, value, details
    FROM scores
    WHERE scorer = 'tool_usage' AND status = 'scored'
),
per_turn AS (
    SELECT turn_id, tool, bool_or(available) AS available, bool_or(called) AS called
    FROM (
        SELECT turn_id, unnest(list_transform(tools, lambda x: x.name)) AS tool,
               true AS available, false AS called
        FROM turns
        UNION ALL
        SELECT turn_id, unnest(list_transform(calls, lambda x: x.name)) AS tool,
               false AS available, true AS called
        FROM turns
    )
    GROUP BY turn_id, tool
),
low_calls AS (
    SELECT judge, unnest(from_json(json_extract(details, '$.calls'),
        '[{"tool": "VARCHAR", "choice_ok": "BOOLEAN", "arguments_ok": "BOOLEAN",
           "problem": "VARCHAR"}]')) AS v
    FROM usage
    WHERE value < 5
),
low_problems AS (
    SELECT v.tool AS tool, judge, v.problem AS problem
    FROM low_calls
    WHERE NOT (coalesce(v.choice_ok, true) AND coalesce(v.arguments_ok, true))
    UNION ALL
    -- a no-call turn: the tool that should have been called
    SELECT json_extract_string(details, '$.matched_tool') AS tool, judge,
           'not called although it matched the request' AS problem
    FROM usage
    WHERE value < 5 AND json_extract_string(details, '$.matched_tool') IS NOT NULL
),
low_verdicts AS (
    SELECT tool, judge, list(DISTINCT problem ORDER BY problem) AS verdicts
    FROM low_problems
    WHERE problem IS NOT NULL
    GROUP BY tool, judge
),
joined AS (
    SELECT p.tool, u.judge, p.turn_id, p.available, p.called, u.value
    FROM per_turn AS p
    LEFT JOIN usage AS u ON u.turn_id = p.turn_id
)
SELECT
    j.tool,
    j.judge,
    count(*) FILTER (WHERE j.available) AS turns_available,
    count(*) FILTER (WHERE j.called) AS turns_called,
    count(j.value) AS scored_turns,
    avg(j.value) AS mean_tool_usage,
    avg(CASE WHEN j.value < 5 THEN 1.0 WHEN j.value IS NOT NULL THEN 0.0 END) AS low_share,
    count(*) FILTER (WHERE j.value < 5) AS low_turns,
    coalesce(any_value(lv.verdicts), []) AS low_verdicts
FROM joined AS j
LEFT JOIN low_verdicts AS lv ON lv.tool = j.tool AND lv.judge IS NOT DISTINCT FROM j.judge
GROUP BY j.tool, j.judge
