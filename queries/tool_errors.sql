-- grain: one row per tool (by name, across agents)
-- order: errors DESC, tool
-- columns:
--   tool          tool name
--   calls         calls made
--   turns         turns that called it
--   errors        calls that failed
--   error_rate    errors / calls
--   no_result     calls with no execution or result found
--   p50_ms        median call duration, over calls with a duration
--   p95_ms        95th percentile call duration
SELECT
    tool,
    count(*) AS calls,
    count(DISTINCT turn_id) AS turns,
    count(*) FILTER (WHERE status = 'error') AS errors,
    count(*) FILTER (WHERE status = 'error') / count(*) AS error_rate,
    count(*) FILTER (WHERE status = 'no_result') AS no_result,
    quantile_cont(duration_ms, 0.5) AS p50_ms,
    quantile_cont(duration_ms, 0.95) AS p95_ms
FROM tool_calls
GROUP BY tool
