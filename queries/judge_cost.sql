-- grain: one row per judged scorer, judge and UTC day the scores were written
-- order: day, scorer, judge
-- columns:
--   scorer          judged scorer
--   judge           model id, or rules-v1 (which costs nothing)
--   day             UTC date of scored_at
--   scores          score rows written (current and replaced)
--   scored          rows with a verdict
--   errors          rows where the judge gave no usable verdict
--   partial         scored rows missing some verdict field (listed in details.missing)
--   flagged         rows whose agent content held verdict-shaped or marker text, or forged verdicts
--   cache_hits      verdicts reused from the judge cache (no request made)
--   requests        HTTP attempts made, retries included
--   input_tokens    input tokens paid for
--   output_tokens   output tokens paid for
--   cost_usd        what the day's judging cost
--   mean_latency_ms mean latency of rows that called the judge
--   p95_latency_ms  95th percentile of that latency
WITH rows AS (
    SELECT scorer, judge, status, input_tokens, output_tokens, cost_usd, latency_ms, attempts,
           scored_at, details
    FROM scores
    WHERE judge IS NOT NULL
    UNION ALL
    SELECT scorer, judge, status, input_tokens, output_tokens, cost_usd, latency_ms, attempts,
           scored_at, details
    FROM scores_history
    WHERE judge IS NOT NULL
)
SELECT
    scorer,
    judge,
    CAST(timezone('UTC', scored_at) AS DATE) AS day,
    count(*) AS scores,
    count(*) FILTER (WHERE status = 'scored') AS scored,
    count(*) FILTER (WHERE status = 'error') AS errors,
    count(*) FILTER (WHERE status = 'scored'
                     AND coalesce(json_array_length(details, '$.missing'), 0) > 0) AS partial,
    count(*) FILTER (WHERE json_exists(details, '$.content_verdict_shaped')
                     OR json_exists(details, '$.content_markers')
                     OR json_exists(details, '$.forged_verdict')) AS flagged,
    count(*) FILTER (WHERE status = 'scored' AND attempts = 0 AND judge <> 'rules-v1')
        AS cache_hits,
    coalesce(sum(attempts), 0) AS requests,
    coalesce(sum(input_tokens) FILTER (WHERE attempts > 0), 0) AS input_tokens,
    coalesce(sum(output_tokens) FILTER (WHERE attempts > 0), 0) AS output_tokens,
    coalesce(sum(cost_usd), 0.0) AS cost_usd,
    avg(latency_ms) FILTER (WHERE attempts > 0) AS mean_latency_ms,
    quantile_cont(latency_ms, 0.95) FILTER (WHERE attempts > 0) AS p95_latency_ms
FROM rows
GROUP BY scorer, judge, CAST(timezone('UTC', scored_at) AS DATE)
