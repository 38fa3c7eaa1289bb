-- grain: one row per tool and judge (judge NULL: turns with no Tool Usage score yet)
-- order: tool, judge
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
-- One row per turn and tool it had or called, from one pass over turns (the tool lists
-- are read once, not unnested twice and regrouped). Tool names are never NULL (ingest
-- requires them), so list_distinct drops nothing.
per_turn AS (
    SELECT u.judge, u.value,
           list_transform(t.tools, lambda x: x.name) AS available,
           list_transform(t.calls, lambda x: x.name) AS called
    FROM turns AS t
    LEFT JOIN usage AS u ON u.turn_id = t.turn_id
),
joined AS (
    SELECT tool, judge, value, list_contains(available, tool) AS available,
           list_contains(called, tool) AS called
    FROM (SELECT judge, value, available, called,
                 unnest(list_distinct(list_concat(available, called))) AS tool
          FROM per_turn)
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
per_tool AS (
    SELECT
        tool,
        judge,
        count(*) FILTER (WHERE available) AS turns_available,
        count(*) FILTER (WHERE called) AS turns_called,
        count(value) AS scored_turns,
        avg(value) AS mean_tool_usage,
        avg(CASE WHEN value < 5 THEN 1.0 WHEN value IS NOT NULL THEN 0.0 END) AS low_share,
        count(*) FILTER (WHERE value < 5) AS low_turns
    FROM joined
    GROUP BY tool, judge
)
-- The verdicts join the few (tool, judge) rows, not every (turn, tool) row.
SELECT p.*, coalesce(lv.verdicts, []) AS low_verdicts
FROM per_tool AS p
LEFT JOIN low_verdicts AS lv ON lv.tool = p.tool AND lv.judge IS NOT DISTINCT FROM p.judge
